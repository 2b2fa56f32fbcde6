package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The nnJIT paper's benchmark kernels (its Table 3), from BERT-base: K0 and K1 the attention
 * projection and the feed-forward MatMul, K2 and K3 attention BatchMatMuls, in our dimension order
 * ([M, K, N] and [batch, M, K, N]). The one home of these shapes: the command line's {@code --op K0},
 * the case sets, and the harness, which reads the name from the files {@code codegen cases} writes
 * ({@code K0-...}).
 */
public final class PaperKernels {

    /** K0..K3 in order. */
    public static final Map<String, OpSpec> ALL;

    static {
        Map<String, OpSpec> all = new LinkedHashMap<>();
        all.put("K0", op(OpKind.OP_KIND_MATMUL, 384, 768, 768));
        all.put("K1", op(OpKind.OP_KIND_MATMUL, 640, 768, 3072));
        all.put("K2", op(OpKind.OP_KIND_BATCH_MATMUL, 12, 384, 384, 64));
        all.put("K3", op(OpKind.OP_KIND_BATCH_MATMUL, 120, 64, 64, 64));
        ALL = java.util.Collections.unmodifiableMap(all);
    }

    private PaperKernels() {
    }

    /** The kernel named {@code K0}..{@code K3} (any case), or null. */
    public static OpSpec named(String name) {
        return name == null ? null : ALL.get(name.toUpperCase(Locale.ROOT));
    }

    public static OpSpec op(OpKind kind, int... dims) {
        OpSpec.Builder b = OpSpec.newBuilder().setKind(kind);
        for (int d : dims) {
            b.addShape(d);
        }
        return b.build();
    }
}
