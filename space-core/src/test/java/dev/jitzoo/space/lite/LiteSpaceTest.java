package dev.jitzoo.space.lite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.device.GpuArchitecture;
import dev.jitzoo.space.device.InvalidDeviceException;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.primitives.MicrobenchResult;
import dev.jitzoo.space.primitives.PrimitiveTable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LiteSpaceTest {

    private static final OpSpec K0 = op(OpKind.OP_KIND_MATMUL, 384, 768, 768);
    private static final OpSpec K2 = op(OpKind.OP_KIND_BATCH_MATMUL, 12, 384, 384, 64);
    private final LiteSpace space = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 48);

    @Test
    void wasmCandidatesFillTheRegistersAndFitTheCodegensCap() {
        ComposeResponse r = space.compose(K0, DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM);
        // 6 register tiles x loop order x instruction form: the shipped table fixes unroll off, packing on
        assertEquals(24, r.getLiteSpaceSize());
        for (Candidate c : r.getCandidatesList()) {
            Schedule s = c.getSchedule();
            assertEquals(1, s.getUnroll(), "unroll is fixed off by the shipped microbenchmarks: " + s);
            long reg = TableOne.regThread(s.getX0() / 4, s.getY0(), s.getR0());
            assertEquals(reg, c.getUtilization().getRegThread());
            assertTrue(reg <= 16 && reg >= 0.85 * 16, "heuristic 4: " + s);
            assertTrue(s.getX0() / 4 * s.getY0() <= 16, "accumulators: " + s);
            assertTrue(Integer.bitCount(s.getX0()) == 1 && Integer.bitCount(s.getY0()) == 1, "heuristic 2: " + s);
            assertTrue(s.getVectorize() && s.getPackB(), "a MatMul's B is weights: packed once");
            assertTrue(c.getUtilization().getL1BlockBytes() <= 49152, "heuristic 3: " + c.getUtilization());
        }
        assertTrue(r.getCandidatesList().stream().anyMatch(c -> c.getSchedule().getRelaxedSimd()));
        assertTrue(r.getCandidatesList().stream().anyMatch(c -> c.getSchedule().getColumnsOuter()));
        assertBestFirst(r);
        assertTrue(r.getNaiveSpaceSize() / r.getLiteSpaceSize() >= 10_000);
    }

    @Test
    void onThreadsEveryCandidateIsSplitIntoEqualUnitsAndOnOneNone() {
        DeviceProfile one = DeviceProfiles.bundled("this-machine-wasm");
        DeviceProfile two = one.toBuilder().setWasm(one.getWasm().toBuilder().setThreads(true).setThreadsUsed(2)).build();
        List<Candidate> single = space.compose(K0, one, Backend.BACKEND_WASM).getCandidatesList();
        List<Candidate> split = space.compose(K0, two, Backend.BACKEND_WASM).getCandidatesList();
        assertEquals(single.size(), split.size());
        for (int i = 0; i < split.size(); i++) {
            Schedule s = split.get(i).getSchedule();
            assertEquals(SplitAxis.SPLIT_AXIS_UNSPECIFIED, single.get(i).getSchedule().getSplitAxis());
            assertEquals(single.get(i).getSchedule(), s.toBuilder().clearSplitAxis().clearSplitGrain().build(), "the same order");
            assertEquals(SplitAxis.SPLIT_AXIS_ROWS, s.getSplitAxis());
            assertEquals(192, s.getSplitGrain(), "384 rows in two bands of whole row tiles: " + s);
        }
        // 12 batches: one unit per batch; a softmax's rows in two bands
        space.compose(K2, two, Backend.BACKEND_WASM).getCandidatesList()
                .forEach(c -> assertEquals(384, c.getSchedule().getSplitGrain()));
        OpSpec softmax = op(OpKind.OP_KIND_SOFTMAX, 7, 128);
        space.compose(softmax, two, Backend.BACKEND_WASM).getCandidatesList()
                .forEach(c -> assertEquals(4, c.getSchedule().getSplitGrain()));
        // a schedule made on another thread count is split anew for this device
        Schedule fourThreads = single.get(0).getSchedule().toBuilder().setSplitAxis(SplitAxis.SPLIT_AXIS_ROWS).setSplitGrain(96).build();
        assertEquals(192, LiteSpace.fit(K0, two, Backend.BACKEND_WASM, fourThreads).orElseThrow().getSchedule().getSplitGrain());
        assertEquals(SplitAxis.SPLIT_AXIS_UNSPECIFIED,
                LiteSpace.fit(K0, one, Backend.BACKEND_WASM, fourThreads).orElseThrow().getSchedule().getSplitAxis());
        assertThrows(InvalidDeviceException.class, () -> space.compose(K0, two.toBuilder()
                .setWasm(two.getWasm().toBuilder().setThreads(false)).build(), Backend.BACKEND_WASM));
    }

    @Test
    void aOneRowProductOnThreadsIsSplitByColumnsOfWholePanels() {
        DeviceProfile one = DeviceProfiles.bundled("this-machine-wasm");
        DeviceProfile two = one.toBuilder().setWasm(one.getWasm().toBuilder().setThreads(true).setThreadsUsed(2)).build();
        OpSpec decode = op(OpKind.OP_KIND_MATMUL, 1, 384, 1152); // a decode step's QKV product: M = 1
        List<Candidate> candidates = space.compose(decode, two, Backend.BACKEND_WASM).getCandidatesList();
        assertFalse(candidates.isEmpty());
        for (Candidate c : candidates) {
            Schedule s = c.getSchedule();
            if (!s.getPackB()) {
                assertEquals(1, s.getSplitGrain(), "B read in place: its one row cannot be shared out: " + s);
                continue;
            }
            assertEquals(SplitAxis.SPLIT_AXIS_COLUMNS, s.getSplitAxis(), s.toString());
            assertEquals(0, s.getSplitGrain() % s.getX0(), "whole panels: " + s);
            assertEquals(2, (1152 + s.getSplitGrain() - 1) / s.getSplitGrain(), "two bands of 576 columns: " + s);
        }
        assertTrue(candidates.stream().anyMatch(c -> c.getSchedule().getSplitAxis() == SplitAxis.SPLIT_AXIS_COLUMNS));
        // on one thread nothing is split; with rows to share out (the prefill's), rows
        space.compose(decode, one, Backend.BACKEND_WASM).getCandidatesList()
                .forEach(c -> assertEquals(SplitAxis.SPLIT_AXIS_UNSPECIFIED, c.getSchedule().getSplitAxis()));
        space.compose(op(OpKind.OP_KIND_MATMUL, 64, 384, 1152), two, Backend.BACKEND_WASM).getCandidatesList()
                .forEach(c -> assertEquals(SplitAxis.SPLIT_AXIS_ROWS, c.getSchedule().getSplitAxis()));
    }

    @Test
    void thePrimitiveTableFixesOrOpensEachPrimitive() {
        DeviceProfile device = DeviceProfiles.bundled("this-machine-wasm");
        PrimitiveTable open = PrimitiveTable.derive(List.of(), 0.05); // nothing measured: every primitive open
        List<Candidate> all = new LiteSpace(0.85, 1000, open).compose(K0, device, Backend.BACKEND_WASM).getCandidatesList();
        // 6 SIMD tiles x unroll 2 x order 2 x relaxed 2 x packed 2, and the scalar tiles (no relaxed form) x 8
        long simd = all.stream().filter(c -> c.getSchedule().getVectorize()).count();
        assertEquals(96, simd);
        assertTrue(all.size() > simd, "vectorize open: scalar tiles too");
        assertTrue(all.stream().anyMatch(c -> !c.getSchedule().getPackB()) && all.stream().anyMatch(c -> c.getSchedule().getUnroll() == 2));
        assertTrue(all.stream().noneMatch(c -> !c.getSchedule().getVectorize() && c.getSchedule().getRelaxedSimd()));
        Map<String, Double> pays = Map.of("vectorize", 2.0, "unroll", 1.3, "loop_order", 1.2, "relaxed_simd", 1.1, "cache_read", 2.0);
        PrimitiveTable on = PrimitiveTable.derive(List.of(new MicrobenchResult("node", "a", "", pays)), 0.05);
        List<Candidate> fixed = new LiteSpace(0.85, 1000, on).compose(K0, device, Backend.BACKEND_WASM).getCandidatesList();
        assertEquals(6, fixed.size(), "one candidate per tile");
        assertTrue(fixed.stream().map(Candidate::getSchedule).allMatch(s -> s.getVectorize() && s.getUnroll() == 2
                && s.getColumnsOuter() && s.getRelaxedSimd() && s.getPackB()));
        // a primitive a device lacks stays off whatever the table says
        assertTrue(new LiteSpace(0.85, 1000, on).compose(K0, wasm(true, false, 0, 0), Backend.BACKEND_WASM)
                .getCandidatesList().stream().noneMatch(c -> c.getSchedule().getRelaxedSimd()));
    }

    @Test
    void theKBlockIsTheWholeKWhenItFitsL1ElseTheLargestThatDoes() {
        // 16 columns, 2 rows, K = 768: 4·(16·768 + 768·2 + 16·2) = 55424 B > 48 KiB; r1 = 256: 4·(4096 + 512 + 32) = 18560 B
        assertEquals(256, WasmSpace.kBlock(768, 16, 2, 49152));
        // K = 64: 4·(1024 + 128 + 32) = 4736 B fits
        assertEquals(0, WasmSpace.kBlock(64, 16, 2, 49152));
        // nothing fits 1 KiB: even r1 = 32 needs 4·(512 + 64 + 32) = 2432 B
        assertEquals(-1, WasmSpace.kBlock(768, 16, 2, 1024));
    }

    @Test
    void attentionBatchMatMulsReadBInPlace() {
        ComposeResponse r = space.compose(K2, DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM);
        assertTrue(r.getCandidatesList().stream().noneMatch(c -> c.getSchedule().getPackB()), "B is an activation");
        OpSpec shared = K2.toBuilder().setBroadcastB(true).build();
        assertTrue(space.compose(shared, DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM)
                .getCandidatesList().stream().allMatch(c -> c.getSchedule().getPackB()), "one B for every batch is constant");
    }

    @Test
    void theDevicesFeaturesDecideTheInstructionForms() {
        DeviceProfile plain = wasm(true, false, 0, 0);
        List<Candidate> simd = space.compose(K0, plain, Backend.BACKEND_WASM).getCandidatesList();
        assertFalse(simd.isEmpty());
        assertTrue(simd.stream().noneMatch(c -> c.getSchedule().getRelaxedSimd()), "no relaxed SIMD on this device");
        List<Candidate> scalar = space.compose(K0, wasm(false, false, 0, 0), Backend.BACKEND_WASM).getCandidatesList();
        assertFalse(scalar.isEmpty());
        assertTrue(scalar.stream().noneMatch(c -> c.getSchedule().getVectorize()));
        List<Candidate> arm = space.compose(K0, wasm(true, true, 32, 65536), Backend.BACKEND_WASM).getCandidatesList();
        assertFalse(arm.isEmpty());
        assertTrue(arm.stream().allMatch(c -> c.getUtilization().getRegThread() > 16), "32 registers: larger tiles");
    }

    @Test
    void webGpuCandidatesFollowHeuristicsFiveToSevenAndComeMostBlocksFirst() {
        for (String name : List.of("nvidia-ampere-webgpu", "intel-gen9-webgpu", "arm-mali-webgpu")) {
            DeviceProfile device = DeviceProfiles.bundled(name);
            GpuArchitecture gpu = GpuArchitecture.lookup(device.getWebgpu().getVendor(), device.getWebgpu().getArchitecture());
            ComposeResponse r = space.compose(K0, device, Backend.BACKEND_WGSL);
            assertTrue(r.getLiteSpaceSize() > 0 && r.getLiteSpaceSize() <= 48, name + ": " + r.getLiteSpaceSize());
            long previous = Long.MAX_VALUE;
            for (Candidate c : r.getCandidatesList()) {
                var u = c.getUtilization();
                assertTrue(u.getThreadBlock() <= 256 && u.getThreadBlock() % gpu.warpWidth() == 0, name + " heuristic 5: " + u);
                assertTrue(u.getL1BlockBytes() <= 16384, name + " heuristic 6: " + u);
                assertTrue(new TableOne.BlocksPerCore(u.getRegLimit(), u.getL1Limit(), u.getWarpLimit()).registersBind(0.85),
                        name + " heuristic 7: " + u);
                assertTrue(u.getBlockCore() <= previous, "most blocks per core first");
                previous = u.getBlockCore();
            }
        }
    }

    @Test
    void smallAndTinyOpsStillGetAWebGpuSpaceOfBlocksThatFitThem() {
        // a MiniLM layer at sequence 8: Q/K/V (8 rows), attention's batch_matmuls (8 x 8 per head)
        List<OpSpec> ops = List.of(op(OpKind.OP_KIND_MATMUL, 8, 384, 384), op(OpKind.OP_KIND_BATCH_MATMUL, 12, 8, 32, 8),
                op(OpKind.OP_KIND_BATCH_MATMUL, 12, 8, 8, 32));
        DeviceProfile ampere = DeviceProfiles.bundled("nvidia-ampere-webgpu");
        DeviceProfile unknown = ampere.toBuilder().setWebgpu(ampere.getWebgpu().toBuilder().setVendor("google").setArchitecture("swiftshader")).build();
        for (DeviceProfile device : List.of(ampere, DeviceProfiles.bundled("arm-mali-webgpu"), unknown)) {
            for (OpSpec op : ops) {
                ComposeResponse r = space.compose(op, device, Backend.BACKEND_WGSL);
                String what = device.getWebgpu().getArchitecture() + " " + op.getShapeList();
                assertTrue(r.getCandidatesCount() > 0, what + ": no candidate");
                int m = op.getShape(op.getShapeCount() - 3), n = op.getShape(op.getShapeCount() - 1);
                for (Candidate c : r.getCandidatesList()) {
                    Schedule s = c.getSchedule();
                    assertTrue(s.getY1() <= Integer.highestOneBit(m * 2 - 1) && s.getX1() <= Integer.highestOneBit(n * 2 - 1), what + ": " + s);
                    assertTrue(WebGpuSpace.runs(s, DeviceProfiles.limits(device)), what + ": " + s);
                }
            }
        }
        // an op large enough for every filter gets no relaxed block: whole warps, at most 2:1
        for (Candidate c : space.compose(op(OpKind.OP_KIND_MATMUL, 128, 384, 384), ampere, Backend.BACKEND_WGSL).getCandidatesList()) {
            Schedule s = c.getSchedule();
            assertEquals(0, c.getUtilization().getThreadBlock() % 32, s.toString());
            assertTrue(s.getX1() <= 2 * s.getY1() && s.getY1() <= 2 * s.getX1(), s.toString());
        }
    }

    @Test
    void unknownGpusGetTheSafeDefaults() {
        DeviceProfile known = DeviceProfiles.bundled("nvidia-ampere-webgpu");
        DeviceProfile unknown = known.toBuilder().setWebgpu(known.getWebgpu().toBuilder().setArchitecture("mystery-9000")).build();
        assertEquals(GpuArchitecture.UNKNOWN, GpuArchitecture.lookup("nvidia", "mystery-9000"));
        assertEquals("ampere", GpuArchitecture.lookup("NVIDIA", " Ampere ").name());
        ComposeResponse r = space.compose(K0, unknown, Backend.BACKEND_WGSL);
        assertTrue(r.getCandidatesList().stream().allMatch(c -> c.getUtilization().getThreadBlock() <= 256));
    }

    @Test
    void aTransposedBIsReadPackedByEveryVectorTile() {
        OpSpec qk = op(OpKind.OP_KIND_BATCH_MATMUL, 12, 128, 64, 128).toBuilder().setTransposeB(true).build();
        DeviceProfile device = DeviceProfiles.bundled("this-machine-wasm");
        ComposeResponse r = space.compose(qk, device, Backend.BACKEND_WASM);
        assertTrue(r.getCandidatesCount() > 0);
        assertTrue(r.getCandidatesList().stream().allMatch(c -> !c.getSchedule().getVectorize() || c.getSchedule().getPackB()));
        assertFalse(LiteSpace.fit(qk, device, Backend.BACKEND_WASM,
                Schedule.newBuilder().setX0(4).setY0(2).setVectorize(true).build()).isPresent(), "a vector tile needs B packed");
    }

    @Test
    void rowOpsTryVectorsAndUnrollsOnly() {
        DeviceProfile device = DeviceProfiles.bundled("this-machine-wasm");
        for (OpKind kind : List.of(OpKind.OP_KIND_SOFTMAX, OpKind.OP_KIND_LAYER_NORM)) {
            ComposeResponse r = space.compose(op(kind, 192, 16), device, Backend.BACKEND_WASM);
            assertEquals(8, r.getCandidatesCount());
            assertBestFirst(r);
            assertTrue(r.getCandidates(0).getSchedule().getVectorize());
            assertTrue(r.getCandidatesList().stream().allMatch(c -> LiteSpace.fit(op(kind, 192, 16), device,
                    Backend.BACKEND_WASM, c.getSchedule()).isPresent()));
        }
        DeviceProfile noSimd = device.toBuilder().setWasm(device.getWasm().toBuilder().setSimd(false).setRelaxedSimd(false)).build();
        ComposeResponse scalar = space.compose(op(OpKind.OP_KIND_ADD, 6144), noSimd, Backend.BACKEND_WASM);
        assertEquals(4, scalar.getCandidatesCount());
        assertTrue(scalar.getCandidatesList().stream().noneMatch(c -> c.getSchedule().getVectorize()));
        assertFalse(LiteSpace.fit(op(OpKind.OP_KIND_ADD, 6144), device, Backend.BACKEND_WASM,
                Schedule.newBuilder().setX0(4).setY0(2).setVectorize(true).build()).isPresent(), "a matmul tile is no row schedule");
        assertThrows(InvalidOpException.class, () -> space.compose(op(OpKind.OP_KIND_SOFTMAX, 192, 16, 4), device, Backend.BACKEND_WASM));
    }

    @Test
    void badRequestsGetTheReason() {
        assertThrows(InvalidOpException.class, () -> space.compose(op(OpKind.OP_KIND_MATMUL, 4, 0, 4),
                DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM));
        assertThrows(InvalidOpException.class, () -> space.compose(op(OpKind.OP_KIND_MATMUL, 4, -3, 4),
                DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM));
        // the gateway's caps hold here too, and sizes whose products wrap around 64 bits do not slip under them
        InvalidOpException huge = assertThrows(InvalidOpException.class, () -> space.compose(
                op(OpKind.OP_KIND_BATCH_MATMUL, 16, 1 << 30, 1 << 30, 1 << 30), DeviceProfiles.bundled("this-machine-wasm"),
                Backend.BACKEND_WASM));
        assertTrue(huge.getMessage().contains("exceed the limit of 268435456"), huge.getMessage());
        assertThrows(InvalidOpException.class, () -> space.compose(op(OpKind.OP_KIND_SOFTMAX, 1 << 20, 1 << 20),
                DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WASM));
        InvalidDeviceException noGpu = assertThrows(InvalidDeviceException.class,
                () -> space.compose(K0, DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_WGSL));
        assertTrue(noGpu.getMessage().contains("webgpu adapter"), noGpu.getMessage());
        InvalidDeviceException noBackend = assertThrows(InvalidDeviceException.class,
                () -> space.compose(K0, DeviceProfiles.bundled("this-machine-wasm"), Backend.BACKEND_UNSPECIFIED));
        assertTrue(noBackend.getMessage().contains("BACKEND_WASM or BACKEND_WGSL"), noBackend.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new LiteSpace(0, 48));
        assertThrows(IllegalArgumentException.class, () -> new LiteSpace(1.5, 48));
    }

    private static void assertBestFirst(ComposeResponse r) {
        for (int i = 1; i < r.getCandidatesCount(); i++) {
            assertTrue(r.getCandidates(i - 1).getScore() >= r.getCandidates(i).getScore(), "best first");
        }
    }

    static DeviceProfile wasm(boolean simd, boolean relaxed, int registers, int l1) {
        return DeviceProfile.newBuilder().setLogicalCores(4).setWasm(WasmFeatures.newBuilder().setSimd(simd)
                .setRelaxedSimd(relaxed).setSimdRegisters(registers).setL1DataBytes(l1)).build();
    }

    static OpSpec op(OpKind kind, int... dims) {
        OpSpec.Builder b = OpSpec.newBuilder().setKind(kind);
        for (int d : dims) {
            b.addShape(d);
        }
        return b.build();
    }
}
