package dev.jitzoo.codegen.cli;

import dev.jitzoo.codegen.kernel.Op;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nnJIT paper's benchmark kernels (Table 3), from BERT-base: K0 and K1 are the attention
 * projection and the feed-forward MatMul, K2 and K3 attention BatchMatMuls. Shapes in our order:
 * [M, K, N] and [batch, M, K, N].
 */
final class PaperShapes {

    static final Map<String, Op> ALL = new LinkedHashMap<>();

    static {
        ALL.put("K0", Op.matmul(384, 768, 768));
        ALL.put("K1", Op.matmul(640, 768, 3072));
        ALL.put("K2", Op.batchMatmul(12, 384, 384, 64));
        ALL.put("K3", Op.batchMatmul(120, 64, 64, 64));
    }

    private PaperShapes() {
    }
}
