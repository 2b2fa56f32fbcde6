package dev.jitzoo.codegen.kernel;

/**
 * Naive, always-correct kernels: the oracle generated kernels are checked against, and the
 * fallback. Sums are accumulated in double, so they are closer to exact than any float32 kernel.
 */
public final class ReferenceKernels {

    private ReferenceKernels() {
    }

    /** C = A x B for a matmul or batch matmul; operands row-major, laid out as the ABI's operandShapes. */
    public static float[] matmul(Op op, float[] a, float[] b) {
        int batch = op.batch(), m = op.m(), k = op.k(), n = op.n();
        requireLength("A", a, (long) batch * m * k);
        requireLength("B", b, (long) batch * k * n);
        float[] c = new float[batch * m * n];
        for (int p = 0; p < batch; p++) {
            int aBase = p * m * k, bBase = p * k * n, cBase = p * m * n;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int r = 0; r < k; r++) {
                        sum += (double) a[aBase + i * k + r] * b[bBase + r * n + j];
                    }
                    c[cBase + i * n + j] = (float) sum;
                }
            }
        }
        return c;
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
