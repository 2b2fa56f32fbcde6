package dev.jitzoo.compiler.kernel;

import java.util.Map;

/**
 * Naive, always-correct kernels: the oracle generated kernels are checked against, and the
 * fallback. Sums are accumulated in double, so they are closer to exact than any float32 kernel.
 */
public final class ReferenceKernels {

    private ReferenceKernels() {
    }

    /** C = A x B for a plain matmul or batch matmul; operands row-major, as the ABI's operandShapes. */
    public static float[] matmul(Op op, float[] a, float[] b) {
        return matmul(op, Map.of("A", a, "B", b));
    }

    /**
     * C for any matmul op: B read as stored (transposed, shared by the batches), then the epilogue
     * in double. {@code operands} holds A, B and, when the epilogue needs them, Bias and Residual.
     */
    public static float[] matmul(Op op, Map<String, float[]> operands) {
        int batch = op.batch(), m = op.m(), k = op.k(), n = op.n();
        float[] a = operands.get("A"), b = operands.get("B");
        requireLength("A", a, (long) batch * m * k);
        requireLength("B", b, (long) (op.broadcastB() ? 1 : batch) * k * n);
        float[] bias = op.fuses(Epilogue.Kind.BIAS) ? operands.get("Bias") : null;
        float[] residual = op.fuses(Epilogue.Kind.RESIDUAL) ? operands.get("Residual") : null;
        if (bias != null) {
            requireLength("Bias", bias, n);
        }
        if (residual != null) {
            requireLength("Residual", residual, (long) batch * m * n);
        }
        float[] c = new float[batch * m * n];
        for (int p = 0; p < batch; p++) {
            int aBase = p * m * k, bBase = op.broadcastB() ? 0 : p * k * n, cBase = p * m * n;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int r = 0; r < k; r++) {
                        float bValue = op.transposeB() ? b[bBase + j * k + r] : b[bBase + r * n + j];
                        sum += (double) a[aBase + i * k + r] * bValue;
                    }
                    for (Epilogue step : op.epilogue()) {
                        sum = switch (step.kind()) {
                            case SCALE -> sum * step.value();
                            case BIAS -> sum + bias[j];
                            case RELU -> Math.max(sum, 0);
                            case GELU_TANH -> 0.5 * sum * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (sum + 0.044715 * sum * sum * sum)));
                            case GELU_ERF -> 0.5 * sum * (1 + erf(sum / Math.sqrt(2)));
                            case SILU -> sum / (1 + Math.exp(-sum));
                            case RESIDUAL -> sum + residual[cBase + i * n + j];
                            case ROUND_HALF -> RoundHalfEpilogueTest.roundToHalf((float) sum);
                        };
                    }
                    c[cBase + i * n + j] = (float) sum;
                }
            }
        }
        return c;
    }

    /** erf to about 1e-15: its Maclaurin series below 3, the continued fraction of erfc above. */
    public static double erf(double x) {
        double ax = Math.abs(x);
        if (ax < 3) {
            double term = ax, sum = 0;
            for (int n = 0; n < 100; n++) {
                sum += term / (2 * n + 1);
                term *= -ax * ax / (n + 1);
            }
            return Math.signum(x) * 2 / Math.sqrt(Math.PI) * sum;
        }
        double fraction = 0;
        for (int n = 60; n >= 1; n--) {
            fraction = n / 2.0 / (ax + fraction);
        }
        double erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + fraction);
        return Math.signum(x) * (1 - erfc);
    }

    /**
     * Largest |actual - expected| / max(|expected|, 1) over all elements: relative error where values
     * are large, absolute near zero (where relative error means nothing). NaN anywhere gives infinity.
     */
    public static double maxRelativeError(float[] actual, float[] expected) {
        if (actual.length != expected.length) {
            throw new IllegalArgumentException("lengths differ: " + actual.length + " vs " + expected.length);
        }
        double worst = 0;
        for (int i = 0; i < expected.length; i++) {
            double error = Math.abs((double) actual[i] - expected[i]) / Math.max(Math.abs(expected[i]), 1.0);
            if (Double.isNaN(error)) {
                return Double.POSITIVE_INFINITY;
            }
            worst = Math.max(worst, error);
        }
        return worst;
    }

    private static void requireLength(String operand, float[] values, long expected) {
        if (values.length != expected) {
            throw new IllegalArgumentException(operand + " has " + values.length + " floats, the op needs " + expected);
        }
    }
}
