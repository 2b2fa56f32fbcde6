package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.ConvWindow;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.Kernel;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What a servable op is, and the key that tells two ops apart: the gateway refuses a Hello's op
 * by these rules, the space and the zoo read ops by the same ones.
 */
public final class OpRules {

    /**
     * Largest M of a MatMul whose M varies (a sequence length): the space composes a uKernel plan for
     * every extent up to it, and the gateway refuses a PlanRequest beyond it.
     */
    public static final int MAX_DYNAMIC_ROWS = 4096;

    /**
     * Most elements an op's operands may have together, anywhere in the suite (the compiler, the
     * gateway, the space, the zoo): a kernel addresses at most 1 GiB (2^28 floats) of operands, so
     * that every byte offset fits an i32. A gateway may be configured to serve less, never more.
     */
    public static final long MAX_OPERAND_ELEMENTS = 1L << 28;

    /** A layer norm's epsilon when its op names none (0): an op that names it keys as one that does not. */
    public static final float DEFAULT_EPSILON = 1e-5f;

    private static final BigDecimal PLAIN_FROM = new BigDecimal("0.001");
    private static final BigDecimal PLAIN_BELOW = new BigDecimal("10000000");

    private OpRules() {
    }

    /**
     * Dimensions an op kind takes (docs/kernel-abi.md), or -1 for an unknown kind: the kind's
     * {@code op_rank} option in kernel.proto, which the SDK reads too.
     */
    public static int rank(OpKind kind) {
        if (kind == OpKind.UNRECOGNIZED) {
            return -1;
        }
        int rank = kind.getValueDescriptor().getOptions().getExtension(Kernel.opRank);
        return rank > 0 ? rank : -1;
    }

    /** A float (batch) matmul: register-tiled, with B's layouts (transposed, broadcast) and fused epilogues. */
    public static boolean isMatmul(OpKind kind) {
        return kind == OpKind.OP_KIND_MATMUL || kind == OpKind.OP_KIND_BATCH_MATMUL;
    }

    /**
     * A product over quantized weights (int8, or 4-bit in blocks of {@value #Q4_BLOCK}): B as the
     * file stores it (packed by the kernel's own pack_b), the matmul epilogue fused after its scales.
     */
    public static boolean isQuantized(OpKind kind) {
        return kind == OpKind.OP_KIND_MATMUL_INT8 || kind == OpKind.OP_KIND_MATMUL_Q4;
    }

    /** Values of K per scale (and zero point) of a 4-bit matmul's B: MatMulNBits' block_size. */
    public static final int Q4_BLOCK = 32;

    /** Blocks of {@value #Q4_BLOCK} along K in each column of a 4-bit matmul's B (the last one padded). */
    public static long q4Blocks(long k) {
        return (k + Q4_BLOCK - 1) / Q4_BLOCK;
    }

    /** A product whose weights are held compact (int8, 4-bit, float16) and widened in the kernel: B as the file stores it. */
    public static boolean hasCompactWeights(OpKind kind) {
        return isQuantized(kind) || kind == OpKind.OP_KIND_MATMUL_F16;
    }

    /**
     * Whether an op of this kind has WGSL kernels: every kind but the int8 product, which WebGPU
     * runs as a float product over weights dequantized at load.
     */
    public static boolean hasWgslKernels(OpKind kind) {
        return kind != OpKind.OP_KIND_MATMUL_INT8;
    }

    /** Whether an op of this kind takes epilogue steps (every product and convolution does). */
    public static boolean takesEpilogue(OpKind kind) {
        return isMatmul(kind) || hasCompactWeights(kind) || kind == OpKind.OP_KIND_CONV;
    }

    /** Largest stride, dilation or pad of a convolution's window. */
    public static final int MAX_CONV_WINDOW = 1024;

    /**
     * A convolution's window with every default spelled out (strides, dilations and groups of 0 are
     * 1): one window, one key, however it was written.
     */
    public static ConvWindow window(OpSpec op) {
        ConvWindow w = op.getConv();
        return w.toBuilder().setStrideH(Math.max(1, w.getStrideH())).setStrideW(Math.max(1, w.getStrideW()))
                .setDilationH(Math.max(1, w.getDilationH())).setDilationW(Math.max(1, w.getDilationW()))
                .setGroup(Math.max(1, w.getGroup())).build();
    }

    /** Rows of a convolution's output ([N, M, OH, OW]), from its shape [N, C, H, W, M, KH, KW] and window; 0 when none fit. */
    public static long convOutputHeight(OpSpec op) {
        ConvWindow w = window(op);
        return outputExtent(op.getShape(2), op.getShape(5), w.getStrideH(), w.getDilationH(), w.getPadTop(), w.getPadBottom());
    }

    /** Columns of a convolution's output; 0 when none fit. */
    public static long convOutputWidth(OpSpec op) {
        ConvWindow w = window(op);
        return outputExtent(op.getShape(3), op.getShape(6), w.getStrideW(), w.getDilationW(), w.getPadLeft(), w.getPadRight());
    }

    /** Outputs along one axis: floor((size + pads - dilation (kernel - 1) - 1) / stride) + 1, 0 when the window does not fit. */
    public static long outputExtent(long size, long kernel, long stride, long dilation, long padBefore, long padAfter) {
        long span = dilation * (kernel - 1) + 1, padded = size + padBefore + padAfter;
        return padded < span ? 0 : (padded - span) / stride + 1;
    }

    private static String convProblem(OpSpec op) {
        ConvWindow w = window(op);
        long channels = op.getShape(1), outChannels = op.getShape(4);
        if (channels % w.getGroup() != 0 || outChannels % w.getGroup() != 0) {
            return "a conv's " + channels + " input and " + outChannels + " output channels must both divide into its "
                    + w.getGroup() + " groups";
        }
        for (int value : new int[] {w.getStrideH(), w.getStrideW(), w.getDilationH(), w.getDilationW(),
            w.getPadTop(), w.getPadLeft(), w.getPadBottom(), w.getPadRight()}) {
            if (Integer.toUnsignedLong(value) > MAX_CONV_WINDOW) {
                return "a conv's strides, dilations and pads are at most " + MAX_CONV_WINDOW + ", got " + Integer.toUnsignedString(value);
            }
        }
        if (convOutputHeight(op) == 0 || convOutputWidth(op) == 0) {
            return "the conv's window (" + op.getShape(5) + "x" + op.getShape(6) + ", dilated and padded) does not fit its "
                    + op.getShape(2) + "x" + op.getShape(3) + " input";
        }
        return null;
    }

    /** The ABI name of an op kind: {@code OP_KIND_LAYER_NORM} is {@code layer_norm}. */
    public static String name(OpKind kind) {
        return kind.name().substring("OP_KIND_".length()).toLowerCase(Locale.ROOT);
    }

    /** Why the op cannot be served, or null when it can. */
    public static String problem(OpSpec op, long maxOperandElements) {
        int rank = rank(op.getKind());
        if (rank < 0) {
            return "unknown op kind " + op.getKindValue();
        }
        if (op.getShapeCount() != rank) {
            return op.getKind() + " needs " + rank + " dimensions, got " + op.getShapeCount();
        }
        for (int i = 0; i < rank; i++) {
            int d = op.getShape(i);
            if (d <= 0) {
                return "dimension " + i + " must be positive, got " + Integer.toUnsignedString(d);
            }
        }
        if (op.hasConv() && op.getKind() != OpKind.OP_KIND_CONV) {
            return "a window (conv) applies to convolutions only";
        }
        if (op.getKind() == OpKind.OP_KIND_CONV) {
            String conv = convProblem(op);
            if (conv != null) {
                return conv;
            }
        }
        if (!isMatmul(op.getKind()) && (op.getTransposeB() || op.getBroadcastB())) {
            return "transpose_b and broadcast_b apply to float matmuls only";
        }
        if (!takesEpilogue(op.getKind()) && op.getEpilogueCount() > 0) {
            return "epilogues apply to matmuls and convolutions only";
        }
        if (op.getBroadcastB() && op.getKind() != OpKind.OP_KIND_BATCH_MATMUL) {
            return "broadcast_b applies to batch_matmul only";
        }
        if (op.getEpsilon() != 0 && (op.getKind() != OpKind.OP_KIND_LAYER_NORM
                || !(op.getEpsilon() > 0) || Float.isInfinite(op.getEpsilon()))) {
            return "epsilon must be a positive finite number, and only a layer_norm has one";
        }
        String epilogue = epilogueProblem(op);
        if (epilogue != null) {
            return epilogue;
        }
        long elements = operandElements(op);
        if (elements > maxOperandElements) {
            return "operands of " + elements + " elements in all exceed the limit of " + maxOperandElements;
        }
        return null;
    }

    private static String epilogueProblem(OpSpec op) {
        int bias = 0, residual = 0;
        for (Epilogue e : op.getEpilogueList()) {
            switch (e.getKind()) {
                case EPILOGUE_KIND_BIAS -> bias++;
                case EPILOGUE_KIND_RESIDUAL -> residual++;
                case EPILOGUE_KIND_SCALE -> {
                    if (!Float.isFinite(e.getValue())) {
                        return "a scale must be finite, got " + e.getValue();
                    }
                }
                case EPILOGUE_KIND_RELU, EPILOGUE_KIND_GELU_TANH, EPILOGUE_KIND_GELU_ERF, EPILOGUE_KIND_SILU,
                     EPILOGUE_KIND_ROUND_HALF -> {
                }
                default -> {
                    return "unknown epilogue kind " + e.getKindValue();
                }
            }
        }
        return bias > 1 || residual > 1 ? "at most one bias and one residual per op" : null;
    }

    /**
     * Elements of all the op's operands together (inputs, output, a layer norm's γ and β, a
     * matmul's bias and residual), {@link Long#MAX_VALUE} when that does not fit a long (a sum
     * that wrapped around could pass any limit). The op's shape has its kind's rank.
     */
    public static long operandElements(OpSpec op) {
        OpKind kind = op.getKind();
        if (!takesEpilogue(kind)) {
            long elements = 1;
            for (int d : op.getShapeList()) {
                elements = product(elements, Integer.toUnsignedLong(d));
            }
            return switch (kind) {
                case OP_KIND_ADD, OP_KIND_MUL -> product(3, elements);
                case OP_KIND_LAYER_NORM -> sum(product(2, elements), 2 * Integer.toUnsignedLong(op.getShape(1)));
                default -> product(2, elements);
            };
        }
        if (kind == OpKind.OP_KIND_CONV) {
            return convOperandElements(op);
        }
        int o = op.getShapeCount() - 3;
        long batch = o == 1 ? Integer.toUnsignedLong(op.getShape(0)) : 1;
        long m = Integer.toUnsignedLong(op.getShape(o)), k = Integer.toUnsignedLong(op.getShape(o + 1)),
                n = Integer.toUnsignedLong(op.getShape(o + 2));
        boolean bias = fuses(op, EpilogueKind.EPILOGUE_KIND_BIAS), residual = fuses(op, EpilogueKind.EPILOGUE_KIND_RESIDUAL);
        long perBatch = sum(product(m, k), product(residual ? 2 : 1, product(m, n)));
        long b = product(op.getBroadcastB() ? 1 : batch, product(k, n));
        long scales = switch (kind) {
            case OP_KIND_MATMUL_INT8 -> sum(n, 2); // BScale, AScale, AZero
            case OP_KIND_MATMUL_Q4 -> product(2, product(n, q4Blocks(k))); // BScale, BZero (B counted as k × n)
            default -> 0;
        };
        return sum(sum(sum(product(batch, perBatch), b), bias ? n : 0), scales);
    }

    /**
     * A convolution's X, W, C, Work (its windows gathered for one register tile per output row),
     * and Bias and Residual when its epilogue reads them.
     */
    private static long convOperandElements(OpSpec op) {
        long n = op.getShape(0), c = op.getShape(1), h = op.getShape(2), w = op.getShape(3), m = op.getShape(4);
        long perGroup = product(c / window(op).getGroup(), product(op.getShape(5), op.getShape(6)));
        long rows = product(n, convOutputHeight(op)), outputs = product(product(rows, convOutputWidth(op)), m);
        boolean bias = fuses(op, EpilogueKind.EPILOGUE_KIND_BIAS), residual = fuses(op, EpilogueKind.EPILOGUE_KIND_RESIDUAL);
        long x = product(product(n, c), product(h, w)), weights = product(m, perGroup);
        long work = product(rows, convWorkRow(op));
        return sum(sum(sum(x, weights), product(residual ? 2 : 1, outputs)), sum(work, bias ? m : 0));
    }

    /** Widest column tile of a conv's register tile: the output columns a Work row holds per window row. */
    public static final int MAX_CONV_TILE_COLUMNS = 16;

    /**
     * Floats of one row of a conv's Work (its Wasm kernel's scratch, one row per output row): one
     * tile's gathered windows, (C/G)·KH·KW taps by at most {@value #MAX_CONV_TILE_COLUMNS} output
     * columns; a depthwise conv's (one input and one output channel per group) the padded input rows
     * a band of output rows reads, max((KH − 1)·dh + 1, sh) rows of W + pad left + pad right
     * rounded up to a multiple of sw (a row is stored in sw phases).
     */
    public static long convWorkRow(OpSpec op) {
        ConvWindow w = window(op);
        long c = op.getShape(1), m = op.getShape(4), kh = op.getShape(5), kw = op.getShape(6);
        if (w.getGroup() == c && w.getGroup() == m) {
            long rows = Math.max((kh - 1) * w.getDilationH() + 1, w.getStrideH());
            long padded = op.getShape(3) + (long) w.getPadLeft() + w.getPadRight(), sw = w.getStrideW();
            return product(rows, (padded + sw - 1) / sw * sw); // stored in sw phases of ⌈padded / sw⌉
        }
        return product(product(c / w.getGroup(), product(kh, kw)), Math.min(convOutputWidth(op), MAX_CONV_TILE_COLUMNS));
    }

    /** Whether the op's epilogue has a step of this kind. */
    private static boolean fuses(OpSpec op, EpilogueKind kind) {
        return op.getEpilogueList().stream().anyMatch(e -> e.getKind() == kind);
    }

    /** a + b for non-negative a and b, or {@link Long#MAX_VALUE} where it overflows. */
    private static long sum(long a, long b) {
        long s = a + b;
        return s < 0 ? Long.MAX_VALUE : s;
    }

    /** a × b for non-negative a and b, or {@link Long#MAX_VALUE} where it overflows. */
    public static long product(long a, long b) {
        long high = Math.multiplyHigh(a, b), low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }

    /**
     * Every field that changes what an op computes, as text ({@code matmul|384x768x768|transposeB|bias,gelu_erf},
     * {@code batch_matmul|12x128x64x128|transposeB|scale:0.125,residual}, {@code layer_norm|128x768|epsilon=1.0E-12},
     * {@code conv|1x64x56x56x64x3x3|pads=1,1,1,1|bias,relu}):
     * two ops with the same key can share kernels, two with different keys never do. The SDK writes
     * the same text (client-sdk-js/src/ops.ts, {@code opKey}); both are checked against one list
     * (proto/src/test/resources/op-keys.tsv). A layer norm's default epsilon is no epsilon.
     */
    public static String key(OpSpec op) {
        StringBuilder key = new StringBuilder(name(op.getKind())).append('|');
        for (int i = 0; i < op.getShapeCount(); i++) {
            (i == 0 ? key : key.append('x')).append(Integer.toUnsignedString(op.getShape(i)));
        }
        if (op.getTransposeB()) {
            key.append("|transposeB");
        }
        if (op.getBroadcastB()) {
            key.append("|broadcastB");
        }
        if (op.getKind() == OpKind.OP_KIND_CONV) {
            key.append(windowKey(window(op)));
        }
        if (op.getEpilogueCount() > 0) {
            key.append('|').append(op.getEpilogueList().stream().map(OpRules::label).collect(Collectors.joining(",")));
        }
        if (op.getEpsilon() != 0 && op.getEpsilon() != DEFAULT_EPSILON) {
            key.append("|epsilon=").append(number(op.getEpsilon()));
        }
        return key.toString();
    }

    /**
     * A float as keys write it: the shortest decimal that reads back as the same float (through a
     * double, ties rounded away from zero), laid out as {@link Float#toString} lays it out
     * ({@code 0.125}, {@code 1.0E-12}). Float.toString's own digits are not always the shortest
     * (before Java 19), and TypeScript has no float32 printer: this one both languages implement alike.
     */
    public static String number(float value) {
        if (value == 0) {
            return Float.floatToRawIntBits(value) < 0 ? "-0.0" : "0.0";
        }
        BigDecimal exact = new BigDecimal(value);
        BigDecimal shortest = exact;
        for (int precision = 1; precision <= 9; precision++) {
            BigDecimal rounded = exact.round(new MathContext(precision, RoundingMode.HALF_UP));
            if ((float) rounded.doubleValue() == value) {
                shortest = rounded;
                break;
            }
        }
        BigDecimal magnitude = shortest.abs().stripTrailingZeros();
        String digits = magnitude.unscaledValue().toString();
        int exponent = digits.length() - 1 - magnitude.scale();
        String text;
        if (magnitude.compareTo(PLAIN_FROM) >= 0 && magnitude.compareTo(PLAIN_BELOW) < 0) {
            if (exponent >= 0) {
                String whole = digits.length() > exponent
                        ? digits.substring(0, exponent + 1) : digits + "0".repeat(exponent + 1 - digits.length());
                text = whole + "." + (digits.length() > exponent + 1 ? digits.substring(exponent + 1) : "0");
            } else {
                text = "0." + "0".repeat(-exponent - 1) + digits;
            }
        } else {
            text = digits.charAt(0) + "." + (digits.length() > 1 ? digits.substring(1) : "0") + "E" + exponent;
        }
        return value < 0 ? "-" + text : text;
    }

    /**
     * A conv window's part of a key: what differs from the defaults, as {@code |stride=2x2|dilation=2x2|pads=1,1,1,1|group=64}
     * (pads top, left, bottom, right).
     */
    private static String windowKey(ConvWindow w) {
        StringBuilder key = new StringBuilder();
        if (w.getStrideH() != 1 || w.getStrideW() != 1) {
            key.append("|stride=").append(w.getStrideH()).append('x').append(w.getStrideW());
        }
        if (w.getDilationH() != 1 || w.getDilationW() != 1) {
            key.append("|dilation=").append(w.getDilationH()).append('x').append(w.getDilationW());
        }
        if ((w.getPadTop() | w.getPadLeft() | w.getPadBottom() | w.getPadRight()) != 0) {
            key.append("|pads=").append(w.getPadTop()).append(',').append(w.getPadLeft()).append(',')
                    .append(w.getPadBottom()).append(',').append(w.getPadRight());
        }
        if (w.getGroup() != 1) {
            key.append("|group=").append(w.getGroup());
        }
        return key.toString();
    }

    private static String label(Epilogue e) {
        String name = label(e.getKind());
        return e.getKind() == EpilogueKind.EPILOGUE_KIND_SCALE ? name + ":" + number(e.getValue()) : name;
    }

    /**
     * The label of an epilogue step in keys, ids, metadata and command lines: {@code
     * EPILOGUE_KIND_GELU_TANH} is {@code gelu_tanh} (the SDK derives it from the same enum).
     */
    public static String label(EpilogueKind kind) {
        return kind.name().substring("EPILOGUE_KIND_".length()).toLowerCase(Locale.ROOT);
    }
}
