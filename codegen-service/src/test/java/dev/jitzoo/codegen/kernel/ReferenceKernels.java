package dev.jitzoo.codegen.kernel;

/** The oracle: plain (batch) matmul, accumulated in double. */
final class ReferenceKernels {

    private ReferenceKernels() {
    }

    static float[] matmul(Op op, float[] a, float[] b) {
        int m = op.m(), k = op.k(), n = op.n();
        float[] c = new float[op.batch() * m * n];
        for (int batch = 0; batch < op.batch(); batch++) {
            int aBase = batch * m * k, bBase = batch * k * n, cBase = batch * m * n;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int kk = 0; kk < k; kk++) {
                        sum += (double) a[aBase + i * k + kk] * b[bBase + kk * n + j];
                    }
                    c[cBase + i * n + j] = (float) sum;
                }
            }
        }
        return c;
    }

    /** Largest |x - y| / max(|y|, 1): relative where values are large, absolute near zero. */
    static double maxRelativeError(float[] actual, float[] expected) {
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
}
