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
import dev.jitzoo.proto.kernel.v1.WebGpuAdapter;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.InvalidOpException;
import java.util.List;
import org.junit.jupiter.api.Test;

class F16SpaceTest {

    private static final OpSpec FFN_IN = op(OpKind.OP_KIND_MATMUL_F16, 128, 384, 1536);
    private final LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 64);

    @Test
    void everyCandidateIsOneTheCompilerTakesStagedFirst() {
        List<Candidate> all = space.compose(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(all.size() >= 20, "candidates: " + all.size());
        for (Candidate c : all) {
            assertNull(ScheduleRules.f16Problem(c.getSchedule()), c.toString());
        }
        assertEquals(List.of(4, 12, true), List.of(all.get(0).getSchedule().getY0(), all.get(0).getSchedule().getX0(),
                all.get(0).getSchedule().getColumnsOuter()));
        assertTrue(all.stream().anyMatch(c -> !c.getSchedule().getColumnsOuter()), "direct tiles stay in the space");
    }

    @Test
    void stagedTilesTakeRelaxedMaddWhereTheDeviceHasIt() {
        List<Candidate> all = space.compose(FFN_IN, wasm(true, true, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(all.get(0).getSchedule().getRelaxedSimd(), all.get(0).toString());
        assertTrue(all.stream().noneMatch(c -> c.getSchedule().getRelaxedSimd() && !c.getSchedule().getColumnsOuter()));
        assertTrue(LiteSpace.fit(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WASM, all.get(0).getSchedule()).isEmpty(),
                "a relaxed schedule does not fit a device without relaxed SIMD");
    }

    @Test
    void aDecodeStepGetsDirectTiles() {
        for (Candidate c : space.compose(op(OpKind.OP_KIND_MATMUL_F16, 1, 384, 1536), wasm(true, false, 16, 0), Backend.BACKEND_WASM)
                .getCandidatesList()) {
            assertEquals(1, c.getSchedule().getY0(), c.toString());
            assertTrue(!c.getSchedule().getColumnsOuter(), c.toString());
        }
        assertThrows(InvalidOpException.class, () -> space.compose(FFN_IN, wasm(false, false, 16, 0), Backend.BACKEND_WASM));
    }

    @Test
    void onWebGpuItTakesTheFloatMatmulsSpace() {
        DeviceProfile gpu = DeviceProfile.newBuilder().setLogicalCores(4)
                .setWebgpu(WebGpuAdapter.newBuilder().setVendor("nvidia").setArchitecture("ampere")).build();
        List<Candidate> f16 = space.compose(FFN_IN, gpu, Backend.BACKEND_WGSL).getCandidatesList();
        List<Candidate> f32 = space.compose(op(OpKind.OP_KIND_MATMUL, 128, 384, 1536), gpu, Backend.BACKEND_WGSL).getCandidatesList();
        assertEquals(f32, f16, "the weights are widened as read: the tiles are the float matmul's");
        assertTrue(LiteSpace.fit(FFN_IN, gpu, Backend.BACKEND_WGSL, f16.get(0).getSchedule()).isPresent());
        assertTrue(LiteSpace.fit(FFN_IN, gpu, Backend.BACKEND_WGSL, space.compose(FFN_IN, wasm(true, false, 16, 0), Backend.BACKEND_WASM)
                .getCandidates(0).getSchedule()).isEmpty(), "a Wasm primitive (columnsOuter) does not fit WebGPU");
    }
}
