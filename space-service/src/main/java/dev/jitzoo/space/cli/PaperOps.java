package dev.jitzoo.space.cli;

import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The paper's Table 3 kernels K0..K3, and ops as the command line names them. */
final class PaperOps {

    static final Map<String, OpSpec> ALL = new LinkedHashMap<>();

    static {
        ALL.put("K0", op(OpKind.OP_KIND_MATMUL, 384, 768, 768));
        ALL.put("K1", op(OpKind.OP_KIND_MATMUL, 640, 768, 3072));
        ALL.put("K2", op(OpKind.OP_KIND_BATCH_MATMUL, 12, 384, 384, 64));
        ALL.put("K3", op(OpKind.OP_KIND_BATCH_MATMUL, 120, 64, 64, 64));
    }

    private PaperOps() {
    }

    /** {@code K0..K3}, or {@code matmul} / {@code batch_matmul} with dimensions "M,K,N" / "batch,M,K,N". */
    static OpSpec parse(String name, String shape) {
        if (name == null) {
            throw new IllegalArgumentException("--op is required: matmul, batch_matmul or K0..K3");
        }
        OpSpec paper = ALL.get(name.toUpperCase(Locale.ROOT));
        if (paper != null && shape == null) {
            return paper;
        }
        OpKind kind = switch (name) {
            case "matmul" -> OpKind.OP_KIND_MATMUL;
            case "batch_matmul" -> OpKind.OP_KIND_BATCH_MATMUL;
            default -> throw new IllegalArgumentException("unknown op '" + name + "'; use matmul, batch_matmul or K0..K3");
        };
        if (shape == null) {
            throw new IllegalArgumentException("--shape is required for " + name);
        }
        int[] dims;
        try {
            dims = Arrays.stream(shape.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape must be integers separated by commas, got '" + shape + "'");
        }
        return op(kind, dims);
    }

    private static OpSpec op(OpKind kind, int... dims) {
        OpSpec.Builder b = OpSpec.newBuilder().setKind(kind);
        for (int d : dims) {
            b.addShape(d);
        }
        return b.build();
    }
}
