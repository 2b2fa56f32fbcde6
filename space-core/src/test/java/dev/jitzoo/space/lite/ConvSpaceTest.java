package dev.jitzoo.space.lite;

import static dev.jitzoo.space.lite.LiteSpaceTest.wasm;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.ConvWindow;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.InvalidOpException;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConvSpaceTest {

    /** A ResNet block's 3x3 convolution, 64 channels at 56x56, same padding. */
    private static final OpSpec BLOCK = conv(1, 64, 56, 56, 64, 3, 3, ConvWindow.newBuilder().setPadTop(1).setPadLeft(1).setPadBottom(1)
            .setPadRight(1).build());
    private final LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 64);

    static OpSpec conv(int n, int c, int h, int w, int m, int kh, int kw, ConvWindow window) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_CONV).addShape(n).addShape(c).addShape(h).addShape(w).addShape(m)
                .addShape(kh).addShape(kw).setConv(window).build();
    }

    @Test
    void everyCandidateIsOneTheCompilerTakesTallestTilesFirst() {
        List<Candidate> all = space.compose(BLOCK, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(all.size() >= 20, "candidates: " + all.size());
        for (Candidate c : all) {
            assertNull(ScheduleRules.convProblem(c.getSchedule()), c.toString());
        }
        // 4 x 12: 12 sums over 4 filter values and 3 window vectors a step (1.71 madds a load), 56 of 60 columns real
        assertEquals(List.of(4, 12), List.of(all.get(0).getSchedule().getY0(), all.get(0).getSchedule().getX0()));
    }

    @Test
    void aDepthwiseConvTakesBandsOfOutputRowsWideFirst() {
        OpSpec depthwise = conv(1, 96, 56, 56, 96, 7, 7, ConvWindow.newBuilder().setPadTop(3).setPadLeft(3).setPadBottom(3)
                .setPadRight(3).setGroup(96).build());
        List<Candidate> all = space.compose(depthwise, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        for (Candidate c : all) {
            assertNull(ScheduleRules.convProblem(c.getSchedule()), c.toString());
            assertTrue(c.getSchedule().getY0() <= 4, c.toString());
        }
        // 4 rows x 8: 8 sums a filter value (with an input vector and the filter value, 10 of 16 registers), the band's
        // copy of 10 input rows shared by 4 output rows
        assertEquals(List.of(4, 8), List.of(all.get(0).getSchedule().getY0(), all.get(0).getSchedule().getX0()));
    }

    @Test
    void relaxedTilesOnlyWhereTheDeviceHasRelaxedSimdAndWasmOnly() {
        List<Candidate> relaxed = space.compose(BLOCK, wasm(true, true, 16, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertTrue(relaxed.get(0).getSchedule().getRelaxedSimd(), relaxed.get(0).toString());
        assertTrue(LiteSpace.fit(BLOCK, wasm(true, false, 16, 0), Backend.BACKEND_WASM, relaxed.get(0).getSchedule()).isEmpty());
        assertTrue(space.compose(BLOCK, wasm(true, false, 16, 0), Backend.BACKEND_WASM).getCandidatesList().stream()
                .noneMatch(c -> c.getSchedule().getRelaxedSimd()));
        assertThrows(InvalidOpException.class, () -> space.compose(BLOCK, wasm(false, false, 16, 0), Backend.BACKEND_WASM));
    }

    @Test
    void onWebGpuEveryCandidateIsOneTheWgslCompilerTakes() {
        var gpu = dev.jitzoo.proto.kernel.v1.DeviceProfile.newBuilder().setLogicalCores(4).setWebgpu(dev.jitzoo.proto.kernel.v1.WebGpuAdapter.newBuilder()
                .setVendor("nvidia").setArchitecture("ampere")).build();
        List<Candidate> all = space.compose(BLOCK, gpu, Backend.BACKEND_WGSL).getCandidatesList();
        assertTrue(all.size() >= 20, "candidates: " + all.size());
        for (Candidate c : all) {
            assertNull(ScheduleRules.wgslConvProblem(c.getSchedule()), c.toString());
        }
        // 32 sums over 12 values read a tap (4 x 8 or 8 x 4: 64 channels and 56 outputs a row fill both)
        assertEquals(32, all.get(0).getSchedule().getY0() * all.get(0).getSchedule().getX0(), all.get(0).toString());
        assertTrue(LiteSpace.fit(BLOCK, gpu, Backend.BACKEND_WGSL, all.get(0).getSchedule()).isPresent());
    }

    @Test
    void onTwoThreadsEachImageSplitsIntoHalvesOfItsOutputRows() {
        var twoThreads = wasm(true, false, 16, 0);
        twoThreads = twoThreads.toBuilder().setWasm(twoThreads.getWasm().toBuilder().setThreads(true).setThreadsUsed(2)).build();
        List<Candidate> all = space.compose(BLOCK, twoThreads, Backend.BACKEND_WASM).getCandidatesList();
        for (Candidate c : all) {
            assertEquals(SplitAxis.SPLIT_AXIS_ROWS, c.getSchedule().getSplitAxis());
            assertEquals(28, c.getSchedule().getSplitGrain(), c.toString());
        }
    }

    @Test
    void refusesAWindowThatDoesNotFit() {
        assertThrows(InvalidOpException.class, () -> space.compose(conv(1, 4, 2, 2, 4, 3, 3, ConvWindow.getDefaultInstance()),
                wasm(true, false, 16, 0), Backend.BACKEND_WASM));
    }
}
