package dev.jitzoo.codegen.kernel;

import java.util.List;
import java.util.stream.IntStream;

/**
 * A tensor operation with a fixed shape ({@link OpKind} says what the dimensions mean).
 * Constructing one checks the shape, so every Op in the system is one a kernel can be made for.
 */
public record Op(OpKind kind, List<Integer> dims) {

    /** Largest total operand size, in floats, a kernel may address: 1 GiB keeps every byte offset in an i32. */
    public static final long MAX_OPERAND_FLOATS = 1L << 28;

    public Op {
        if (kind == null) {
            throw new InvalidKernelException("op kind is required");
        }
        if (dims == null || dims.contains(null)) {
            throw new InvalidKernelException(kind.abiName + " needs its dimensions, got " + dims);
        }
        dims = List.copyOf(dims);
        if (dims.size() != kind.rank) {
            throw new InvalidKernelException(kind.abiName + " needs " + kind.rank + " dimensions "
                    + kind.dimensionNames + ", got " + dims.size() + ": " + dims);
        }
        for (int d : dims) {
            if (d < 1) {
                throw new InvalidKernelException("dimensions must be positive, got " + kind.abiName + dims);
            }
        }
        long batch = kind.rank == 4 ? dims.get(0) : 1;
        int first = kind.rank - 3;
        long m = dims.get(first), k = dims.get(first + 1), n = dims.get(first + 2);
        long floats = batch * (m * k + k * n + m * n);
        if (floats > MAX_OPERAND_FLOATS) {
            throw new InvalidKernelException("operands of " + floats + " floats do not fit a Wasm32 memory (limit "
                    + MAX_OPERAND_FLOATS + ")");
        }
    }

    /** The same op from an int array (as protos and CLIs hand them over). */
    public Op(OpKind kind, int... dims) {
        this(kind, dims == null ? null : IntStream.of(dims).boxed().toList());
    }

    public static Op matmul(int m, int k, int n) {
        return new Op(OpKind.MATMUL, m, k, n);
    }

    public static Op batchMatmul(int batch, int m, int k, int n) {
        return new Op(OpKind.BATCH_MATMUL, batch, m, k, n);
    }

    public int batch() {
        return kind.rank == 4 ? dims.get(0) : 1;
    }

    public int m() {
        return dims.get(kind.rank - 3);
    }

    public int k() {
        return dims.get(kind.rank - 2);
    }

    public int n() {
        return dims.get(kind.rank - 1);
    }

    /** Floating-point operations of one run: a multiply and an add per (batch, i, j, k). */
    public long flops() {
        return 2L * batch() * m() * k() * n();
    }

    @Override
    public String toString() {
        return kind.abiName + dims;
    }
}
