package dev.jitzoo.codegen.kernel;

import java.util.Arrays;

/** An operation with a fixed shape; constructing one checks the shape. */
public record Op(OpKind kind, int[] dims) {

    /** Largest operand, in floats, a Wasm32 kernel can address (1 GiB of floats). */
    static final long MAX_OPERAND_ELEMENTS = 1L << 28;

    public Op {
        if (kind == null) {
            throw new InvalidKernelException("op kind is required");
        }
        if (dims.length != kind.rank) {
            throw new InvalidKernelException(kind.abiName + " needs " + kind.rank + " dimensions, got " + dims.length);
        }
        for (int d : dims) {
            if (d <= 0) {
                throw new InvalidKernelException("dimensions must be positive, got " + Arrays.toString(dims));
            }
        }
        dims = dims.clone();
        long b = dims.length == 4 ? dims[0] : 1;
        int o = dims.length - 3;
        long m = dims[o], k = dims[o + 1], n = dims[o + 2];
        long total = b * (m * k + k * n + m * n);
        if (total > MAX_OPERAND_ELEMENTS) {
            throw new InvalidKernelException("operands of " + total + " floats do not fit a Wasm32 memory");
        }
    }

    public static Op matmul(int m, int k, int n) {
        return new Op(OpKind.MATMUL, new int[] {m, k, n});
    }

    public static Op batchMatmul(int batch, int m, int k, int n) {
        return new Op(OpKind.BATCH_MATMUL, new int[] {batch, m, k, n});
    }

    public int batch() {
        return kind == OpKind.BATCH_MATMUL ? dims[0] : 1;
    }

    public int m() {
        return dims[dims.length - 3];
    }

    public int k() {
        return dims[dims.length - 2];
    }

    public int n() {
        return dims[dims.length - 1];
    }

    public long flops() {
        return 2L * batch() * m() * k() * n();
    }

    @Override
    public int[] dims() {
        return dims.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Op other && kind == other.kind && Arrays.equals(dims, other.dims);
    }

    @Override
    public int hashCode() {
        return 31 * kind.hashCode() + Arrays.hashCode(dims);
    }

    @Override
    public String toString() {
        return kind.abiName + Arrays.toString(dims);
    }
}
