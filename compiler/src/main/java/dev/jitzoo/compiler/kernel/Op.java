package dev.jitzoo.compiler.kernel;

import java.util.List;
import java.util.stream.IntStream;

/**
 * A tensor operation with a fixed shape ({@link OpKind} says what the dimensions mean), and for
 * matmuls how B is laid out and what is fused after the product:
 * {@code transposeB} (B stored [N, K], as weights often are), {@code broadcastB} (batch_matmul
 * only: one B [K, N] shared by every batch), and the {@code epilogue} steps, in order.
 * Constructing one checks it, so every Op in the system is one a kernel can be made for.
 */
public record Op(OpKind kind, List<Integer> dims, boolean transposeB, boolean broadcastB, List<Epilogue> epilogue,
                 float epsilon) {

    /** Layer norm's epsilon when an op names none (epsilon 0). */
    public static final float DEFAULT_EPSILON = 1e-5f;

    /** Largest total operand size, in floats, a kernel may address: 1 GiB keeps every byte offset in an i32. */
    public static final long MAX_OPERAND_FLOATS = 1L << 28;

    public Op {
        if (kind == null) {
            throw new InvalidKernelException("op kind is required");
        }
        if (dims == null || dims.stream().anyMatch(java.util.Objects::isNull)) {
            throw new InvalidKernelException(kind.abiName + " needs its dimensions, got " + dims);
        }
        dims = List.copyOf(dims);
        epilogue = epilogue == null ? List.of() : List.copyOf(epilogue);
        if (!kind.matmul && (transposeB || broadcastB || !epilogue.isEmpty())) {
            throw new InvalidKernelException("transposeB, broadcastB and epilogues apply to matmuls only, not " + kind.abiName);
        }
        if (epsilon == DEFAULT_EPSILON) {
            epsilon = 0; // one op, one id: the default spelled out is the default
        }
        if (epsilon != 0 && (kind != OpKind.LAYER_NORM || !(epsilon > 0) || Float.isInfinite(epsilon))) {
            throw new InvalidKernelException(kind == OpKind.LAYER_NORM
                    ? "layer_norm's epsilon must be a positive finite number, got " + epsilon
                    : "epsilon applies to layer_norm only, not " + kind.abiName);
        }
        if (broadcastB && kind != OpKind.BATCH_MATMUL) {
            throw new InvalidKernelException("broadcastB applies to batch_matmul only");
        }
        for (Epilogue.Kind operand : List.of(Epilogue.Kind.BIAS, Epilogue.Kind.RESIDUAL)) {
            if (epilogue.stream().filter(e -> e.kind() == operand).count() > 1) {
                throw new InvalidKernelException("at most one " + operand.label + " per op");
            }
        }
        if (dims.size() != kind.rank) {
            throw new InvalidKernelException(kind.abiName + " needs " + kind.rank + " dimensions "
                    + kind.dimensionNames + ", got " + dims.size() + ": " + dims);
        }
        for (int d : dims) {
            if (d < 1) {
                throw new InvalidKernelException("dimensions must be positive, got " + kind.abiName + dims);
            }
        }
        long floats = operandFloats(kind, dims, broadcastB, epilogue);
        if (floats > MAX_OPERAND_FLOATS) {
            throw new InvalidKernelException("operands of " + floats + " floats do not fit a Wasm32 memory (limit "
                    + MAX_OPERAND_FLOATS + ")");
        }
    }

    /**
     * Floats of all operands together, {@link Long#MAX_VALUE} when they do not fit a long: exact
     * arithmetic, since a sum that wrapped around could pass the limit.
     */
    private static long operandFloats(OpKind kind, List<Integer> dims, boolean broadcastB, List<Epilogue> epilogue) {
        try {
            switch (kind) {
                case ADD, MUL:
                    return 3L * dims.get(0);
                case SOFTMAX:
                    return Math.multiplyExact(2L * dims.get(0), (long) dims.get(1));
                case LAYER_NORM:
                    return Math.addExact(Math.multiplyExact(2L * dims.get(0), (long) dims.get(1)), 2L * dims.get(1));
                default:
                    long batch = kind.rank == 4 ? dims.get(0) : 1;
                    int first = kind.rank - 3;
                    long m = dims.get(first), k = dims.get(first + 1), n = dims.get(first + 2);
                    long outputs = Math.multiplyExact(m, n) * (has(epilogue, Epilogue.Kind.RESIDUAL) ? 2 : 1);
                    long perBatch = Math.addExact(m * k, outputs); // m*k and m*n are below 2^62
                    long b = Math.multiplyExact(broadcastB ? 1 : batch, k * n);
                    return Math.addExact(Math.addExact(Math.multiplyExact(batch, perBatch), b),
                            has(epilogue, Epilogue.Kind.BIAS) ? n : 0);
            }
        } catch (ArithmeticException overflow) {
            return Long.MAX_VALUE;
        }
    }

    /** An op without an epsilon of its own. */
    public Op(OpKind kind, List<Integer> dims, boolean transposeB, boolean broadcastB, List<Epilogue> epilogue) {
        this(kind, dims, transposeB, broadcastB, epilogue, 0f);
    }

    /** A plain op: B as it is, nothing fused. */
    public Op(OpKind kind, List<Integer> dims) {
        this(kind, dims, false, false, List.of());
    }

    /** The same op from an int array (as protos and CLIs hand them over). */
    public Op(OpKind kind, int... dims) {
        this(kind, dims == null ? null : IntStream.of(dims).boxed().toList());
    }

    public Op withTransposedB(boolean transposed) {
        return new Op(kind, dims, transposed, broadcastB, epilogue, epsilon);
    }

    public Op withBroadcastB(boolean broadcast) {
        return new Op(kind, dims, transposeB, broadcast, epilogue, epsilon);
    }

    public Op withEpilogue(Epilogue... steps) {
        return new Op(kind, dims, transposeB, broadcastB, List.of(steps), epsilon);
    }

    /** The same layer norm with another epsilon added to the variance. */
    public Op withEpsilon(float value) {
        return new Op(kind, dims, transposeB, broadcastB, epilogue, value);
    }

    /** The epsilon a layer norm adds to the variance. */
    public float layerNormEpsilon() {
        return epsilon == 0 ? DEFAULT_EPSILON : epsilon;
    }

    /** Whether the epilogue has a step of this kind. */
    public boolean fuses(Epilogue.Kind step) {
        return has(epilogue, step);
    }

    private static boolean has(List<Epilogue> epilogue, Epilogue.Kind step) {
        return epilogue != null && epilogue.stream().anyMatch(e -> e.kind() == step);
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

    /**
     * Floating-point operations of one run: for matmuls a multiply and an add per (batch, i, j, k);
     * one per element for add and mul; per element 4 for softmax (max, subtract, exp, scale) and 7
     * for layer norm (the two reductions, subtract, scale, gamma, beta, and the square).
     */
    public long flops() {
        return switch (kind) {
            case ADD, MUL -> dims.get(0);
            case SOFTMAX -> 4L * rows() * cols();
            case LAYER_NORM -> 7L * rows() * cols();
            default -> 2L * batch() * m() * k() * n();
        };
    }

    /** Rows of a softmax or layer norm. */
    public int rows() {
        return dims.get(0);
    }

    /** Columns (the reduced, last axis) of a softmax or layer norm. */
    public int cols() {
        return dims.get(1);
    }

    @Override
    public String toString() {
        return kind.abiName + dims + (transposeB ? " transposeB" : "") + (broadcastB ? " broadcastB" : "")
                + (epilogue.isEmpty() ? "" : " epilogue" + epilogue) + (epsilon == 0 ? "" : " epsilon " + epsilon);
    }
}
