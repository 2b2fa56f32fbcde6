package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The compiler's op kinds take their names and ranks from kernel.proto's op_rank option, through OpRules. */
class OpKindTest {

    @Test
    void namesAndRanksComeFromTheProto() {
        Map<String, Integer> ranks = Arrays.stream(OpKind.values()).collect(Collectors.toMap(k -> k.abiName, k -> k.rank));
        assertEquals(Map.of("matmul", 3, "batch_matmul", 4, "add", 1, "mul", 1, "softmax", 2, "layer_norm", 2, "matmul_int8", 3, "matmul_q4", 3, "matmul_f16", 3,
                "conv", 7), ranks);
        assertTrue(OpKind.BATCH_MATMUL.matmul);
        assertFalse(OpKind.SOFTMAX.matmul);
    }

    @Test
    void everyServableWireKindHasACompilerKind() {
        for (dev.jitzoo.proto.kernel.v1.OpKind wire : dev.jitzoo.proto.kernel.v1.OpKind.values()) {
            boolean servable = wire != dev.jitzoo.proto.kernel.v1.OpKind.UNRECOGNIZED
                    && dev.jitzoo.proto.rules.OpRules.rank(wire) > 0;
            assertEquals(servable, OpKind.of(wire).isPresent(), wire.name());
        }
    }
}
