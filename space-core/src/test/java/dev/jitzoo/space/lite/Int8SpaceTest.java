package dev.jitzoo.space.lite;

import static dev.jitzoo.space.lite.LiteSpaceTest.op;
import static dev.jitzoo.space.lite.LiteSpaceTest.wasm;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.InvalidOpException;
import java.util.List;
import org.junit.jupiter.api.Test;

class Int8SpaceTest {

    private static final OpSpec FFN_IN = op(OpKind.OP_KIND_MATMUL_INT8, 128, 384, 1536);
    private final LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 48);

    @Test
    void everyCandidateIsOneTheCompilerTakesBestFirst() {
        List<Candidate> all = space.compose(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(all.size() >= 20, "candidates: " + all.size());
        for (Candidate c : all) {
            assertNull(ScheduleRules.int8Problem(c.getSchedule()), c.toString());
        }
        for (int i = 1; i < all.size(); i++) {
            assertTrue(all.get(i - 1).getScore() >= all.get(i).getScore());
        }
        // the most dots per loaded vector within 16 registers, 12/7 a load: 4 x 12 (12 sums, 3 B vectors, 1 A pair)
        // before 3 x 16, which pads 128 rows to 129
        assertEquals(List.of(4, 12), List.of(all.get(0).getSchedule().getY0(), all.get(0).getSchedule().getX0()));
    }

    @Test
    void fewerRegistersSmallerTiles() {
        List<Candidate> all = space.compose(FFN_IN, wasm(true, false, 8, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertFalse(all.isEmpty());
        for (Candidate c : all) {
            int sums = c.getSchedule().getY0() * c.getSchedule().getX0() / 4;
            assertTrue(sums + c.getSchedule().getX0() / 4 + 1 <= 8, c.toString());
        }
    }

    @Test
    void runsOnWasmWithSimdOnlySplitForTheDevicesThreads() {
        assertThrows(InvalidOpException.class, () -> space.compose(FFN_IN, wasm(false, false, 16, 0), Backend.BACKEND_WASM));
        assertThrows(InvalidOpException.class, () -> space.compose(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WGSL),
                "no int8 WGSL kernels: WebGPU runs int8 products in float");
        DeviceProfile threaded = wasm(true, false, 16, 0).toBuilder()
                .setWasm(WasmFeatures.newBuilder().setSimd(true).setThreads(true).setThreadsUsed(2)).build();
        for (Candidate c : space.compose(FFN_IN, threaded, Backend.BACKEND_WASM).getCandidatesList()) {
            // 128 rows over 2 threads: 64-row units, whole bands of the tile's rows
            int y0 = c.getSchedule().getY0();
            assertEquals((64 + y0 - 1) / y0 * y0, c.getSchedule().getSplitGrain(), c.toString());
        }
        Candidate best = space.compose(FFN_IN, threaded, Backend.BACKEND_WASM).getCandidates(0);
        assertTrue(LiteSpace.fit(FFN_IN, threaded, Backend.BACKEND_WASM, best.getSchedule()).isPresent());
        assertTrue(LiteSpace.fit(FFN_IN, threaded, Backend.BACKEND_WASM,
                best.getSchedule().toBuilder().setPackB(false).build()).isEmpty());
    }
}
