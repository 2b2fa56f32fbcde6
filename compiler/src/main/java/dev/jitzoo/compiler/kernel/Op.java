package dev.jitzoo.compiler.kernel;

import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A tensor operation with a fixed shape ({@link OpKind} says what the dimensions mean), and for
 * matmuls how B is laid out and what is fused after the product:
 * {@code transposeB} (B stored [N, K], as weights often are), {@code broadcastB} (batch_matmul
 * only: one B [K, N] shared by every batch), and the {@code epilogue} steps, in order.
 * Constructing one checks it by {@link OpRules}, the rules the gateway, the space and the zoo
 * read ops by, so every Op in the system is one a kernel can be made for.
 */
public record Op(OpKind kind, List<Integer> dims, boolean transposeB, boolean broadcastB, List<Epilogue> epilogue,
                 float epsilon, ConvWindow window) {

    /** Layer norm's epsilon when an op names none (epsilon 0). */
    public static final float DEFAULT_EPSILON = OpRules.DEFAULT_EPSILON;

    public Op {
        if (kind == null) {
            throw new InvalidKernelException("op kind is required");
        }
        if (dims == null || dims.stream().anyMatch(java.util.Objects::isNull)) {
            throw new InvalidKernelException(kind.abiName + " needs its dimensions " + kind.dimensionNames + ", got " + dims);
        }
        dims = List.copyOf(dims);
        epilogue = epilogue == null ? List.of() : List.copyOf(epilogue);
        if (epsilon == DEFAULT_EPSILON) {
            epsilon = 0; // one op, one id: the default spelled out is the default
        }
        if (kind == OpKind.CONV && window == null) {
            window = ConvWindow.PLAIN;
        }
        String problem = OpRules.problem(wire(kind, dims, transposeB, broadcastB, epilogue, epsilon, window), OpRules.MAX_OPERAND_ELEMENTS);
        if (problem != null) {
            throw new InvalidKernelException(kind.abiName + dims + ": " + problem);
        }
    }

    /** The op on the wire: the form {@link OpRules} judges for every part of the suite. */
    private static OpSpec wire(OpKind kind, List<Integer> dims, boolean transposeB, boolean broadcastB,
                               List<Epilogue> epilogue, float epsilon, ConvWindow window) {
        OpSpec.Builder spec = OpSpec.newBuilder().setKind(kind.wire).addAllShape(dims)
                .setTransposeB(transposeB).setBroadcastB(broadcastB).setEpsilon(epsilon);
        if (window != null) {
            spec.setConv(window.wire());
        }
        for (Epilogue step : epilogue) {
            spec.addEpilogue(dev.jitzoo.proto.kernel.v1.Epilogue.newBuilder().setKind(step.kind().wire).setValue(step.value()));
        }
        return spec.build();
    }

    /** The op on the wire. */
    public OpSpec wire() {
        return wire(kind, dims, transposeB, broadcastB, epilogue, epsilon, window);
    }

    /** An op without an epsilon or window of its own. */
    public Op(OpKind kind, List<Integer> dims, boolean transposeB, boolean broadcastB, List<Epilogue> epilogue, float epsilon) {
        this(kind, dims, transposeB, broadcastB, epilogue, epsilon, null);
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
        return new Op(kind, dims, transposed, broadcastB, epilogue, epsilon, window);
    }

    public Op withBroadcastB(boolean broadcast) {
        return new Op(kind, dims, transposeB, broadcast, epilogue, epsilon, window);
    }

    public Op withEpilogue(Epilogue... steps) {
        return new Op(kind, dims, transposeB, broadcastB, List.of(steps), epsilon, window);
    }

    /** The same layer norm with another epsilon added to the variance. */
    public Op withEpsilon(float value) {
        return new Op(kind, dims, transposeB, broadcastB, epilogue, value, window);
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

    /** A convolution of X [n, c, h, w] by W [m, c / group, kh, kw] over {@code window}. */
    public static Op conv(int n, int c, int h, int w, int m, int kh, int kw, ConvWindow window) {
        return new Op(OpKind.CONV, List.of(n, c, h, w, m, kh, kw), false, false, List.of(), 0f, window);
    }

    /** The same convolution over another window. */
    public Op withWindow(ConvWindow value) {
        return new Op(kind, dims, transposeB, broadcastB, epilogue, epsilon, value);
    }

    public int batch() {
        return kind.rank == 4 || kind == OpKind.CONV ? dims.get(0) : 1;
    }

    /** A convolution's output rows (per image and channel). */
    public int outputHeight() {
        return (int) OpRules.convOutputHeight(wire());
    }

    /** A convolution's output columns. */
    public int outputWidth() {
        return (int) OpRules.convOutputWidth(wire());
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
            case CONV -> 2L * dims.get(0) * dims.get(4) * outputHeight() * outputWidth() * (dims.get(1) / window.group())
                    * dims.get(5) * dims.get(6);
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
                + (epilogue.isEmpty() ? "" : " epilogue" + epilogue) + (epsilon == 0 ? "" : " epsilon " + epsilon)
                + (window == null ? "" : " " + window);
    }
}
