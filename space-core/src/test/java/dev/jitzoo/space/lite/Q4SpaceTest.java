package dev.jitzoo.space.lite;

import static dev.jitzoo.space.lite.LiteSpaceTest.op;
import static dev.jitzoo.space.lite.LiteSpaceTest.wasm;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.kernel.v1.WebGpuAdapter;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.InvalidOpException;
import java.util.List;
import org.junit.jupiter.api.Test;

class Q4SpaceTest {

    private static final OpSpec FFN_IN = op(OpKind.OP_KIND_MATMUL_Q4, 128, 384, 1536);
    private final LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 48);

    @Test
    void everyCandidateIsOneTheCompilerTakesBestFirst() {
        List<Candidate> all = space.compose(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(all.size() >= 20, "candidates: " + all.size());
        for (Candidate c : all) {
            assertNull(ScheduleRules.q4Problem(c.getSchedule()), c.toString());
            int y0 = c.getSchedule().getY0(), x0 = c.getSchedule().getX0();
            assertTrue(c.getSchedule().getColumnsOuter() ? y0 * x0 / 4 + x0 / 4 + 1 <= 16 : y0 * x0 + y0 + 2 <= 16, c.toString());
        }
        for (int i = 1; i < all.size(); i++) {
            assertTrue(all.get(i - 1).getScore() >= all.get(i).getScore());
        }
        // staged, the float tile with the most multiply-adds per loaded vector within 16 registers: 4 x 12
        // (12 sums, 3 B vectors, one A: 12/7), as the float matmul's space has it
        assertEquals(List.of(4, 12, true), List.of(all.get(0).getSchedule().getY0(), all.get(0).getSchedule().getX0(),
                all.get(0).getSchedule().getColumnsOuter()));
        assertTrue(all.stream().anyMatch(c -> !c.getSchedule().getColumnsOuter()), "direct tiles stay in the space");
    }

    @Test
    void aDecodeStepGetsOneRowTiles() {
        for (Candidate c : space.compose(op(OpKind.OP_KIND_MATMUL_Q4, 1, 384, 1536), wasm(true, false, 16, 0), Backend.BACKEND_WASM)
                .getCandidatesList()) {
            assertEquals(1, c.getSchedule().getY0(), c.toString());
            assertTrue(!c.getSchedule().getColumnsOuter(), "one row has nothing to spread a widening over: " + c);
        }
    }

    @Test
    void onWebGpuItTakesTheFloatMatmulsSpace() {
        DeviceProfile gpu = DeviceProfile.newBuilder().setLogicalCores(4)
                .setWebgpu(WebGpuAdapter.newBuilder().setVendor("nvidia").setArchitecture("ampere")).build();
        List<Candidate> q4 = space.compose(FFN_IN, gpu, Backend.BACKEND_WGSL).getCandidatesList();
        assertEquals(space.compose(op(OpKind.OP_KIND_MATMUL, 128, 384, 1536), gpu, Backend.BACKEND_WGSL).getCandidatesList(), q4,
                "the weights are widened as read: the tiles are the float matmul's");
        assertTrue(LiteSpace.fit(FFN_IN, gpu, Backend.BACKEND_WGSL, q4.get(0).getSchedule()).isPresent());
        Schedule safe = ScheduleRules.safeDefault(FFN_IN, Backend.BACKEND_WGSL);
        assertTrue(!safe.getPackB() && ScheduleRules.wgslTileProblem(safe) == null, "the WGSL safe default reads B in place: " + safe);
        assertTrue(ScheduleRules.safeDefault(FFN_IN, Backend.BACKEND_WASM).getPackB(), "the Wasm one packs it");
    }

    @Test
    void runsOnWasmWithSimdOnlySplitForTheDevicesThreads() {
        assertThrows(InvalidOpException.class, () -> space.compose(FFN_IN, wasm(false, false, 16, 0), Backend.BACKEND_WASM));
        DeviceProfile threaded = wasm(true, false, 16, 0).toBuilder()
                .setWasm(WasmFeatures.newBuilder().setSimd(true).setThreads(true).setThreadsUsed(2)).build();
        for (Candidate c : space.compose(FFN_IN, threaded, Backend.BACKEND_WASM).getCandidatesList()) {
            int y0 = c.getSchedule().getY0();
            assertEquals((64 + y0 - 1) / y0 * y0, c.getSchedule().getSplitGrain(), c.toString());
        }
        Candidate best = space.compose(FFN_IN, threaded, Backend.BACKEND_WASM).getCandidates(0);
        assertTrue(LiteSpace.fit(FFN_IN, threaded, Backend.BACKEND_WASM, best.getSchedule()).isPresent());
        assertTrue(LiteSpace.fit(FFN_IN, threaded, Backend.BACKEND_WASM,
                best.getSchedule().toBuilder().setPackB(false).build()).isEmpty());
    }
}
