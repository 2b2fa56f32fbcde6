package dev.jitzoo.space.extended;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.SimilarKernel;
import dev.jitzoo.proto.zoo.v1.SimilarResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.lite.LiteSpace;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The extended space: the zoo's kernels of similar devices ahead of the lite space, settled devices explore no more. */
class ExtendedSpaceTest {

    private static final OpSpec K0 = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(384).addShape(768).addShape(768).build();
    private static final DeviceProfile HERE = DeviceProfiles.bundled("this-machine-wasm");
    private final LiteSpace lite = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, 48);
    private final ExtendedSpace extended = new ExtendedSpace(3);
    private final ComposeResponse liteSpace = lite.compose(K0, HERE, Backend.BACKEND_WASM);

    @Test
    void withoutZooDataTheLiteSpaceIsTheExplorationSet() {
        for (ExtendedSpace.ZooAnswer answer : List.of(ExtendedSpace.ZooAnswer.of(SimilarResponse.getDefaultInstance()),
                ExtendedSpace.ZooAnswer.unavailable("the zoo did not answer"))) {
            ComposeResponse r = extend(answer);
            assertEquals(0, r.getExploitationSize());
            assertFalse(r.getSettled());
            assertEquals(answer.unavailable(), r.getZooUnavailable());
            assertEquals(schedules(liteSpace), schedules(r), "the lite space in its order");
            assertTrue(r.getCandidatesList().stream().allMatch(c -> c.getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLORATION));
            assertEquals(liteSpace.getLiteSpaceSize(), r.getLiteSpaceSize());
            assertEquals(liteSpace.getNaiveSpaceSize(), r.getNaiveSpaceSize());
        }
    }

    @Test
    void similarDevicesBestsComeFirstAboutATenthOfTheSpaceAndOnlyWhatRunsHere() {
        assertEquals(24, liteSpace.getCandidatesCount());
        assertEquals(3, ExtendedSpace.exploitationLimit(24));
        Schedule fromLite = liteSpace.getCandidates(7).getSchedule();
        Schedule foreign = Schedule.newBuilder().setX0(8).setY0(2).setR0(1).setR1(64).setVectorize(true).setUnroll(4).build();
        Schedule own = liteSpace.getCandidates(0).getSchedule();
        SimilarResponse zoo = SimilarResponse.newBuilder()
                .addKernels(neighbour(K0, own, 9)) // the kind's own best: the session already starts on it
                .addKernels(neighbour(K0, fromLite, 2.5))
                .addKernels(neighbour(K0.toBuilder().setTransposeB(true).build(), foreign, 2.4)) // another op
                .addKernels(neighbour(K0, fromLite, 2.3)) // the same schedule again
                .addKernels(neighbour(K0, foreign.toBuilder().setX0(64).build(), 2.2)) // 16×2 accumulators: over the cap
                .addKernels(neighbour(K0, foreign, 1.5))
                .addKernels(neighbour(K0, liteSpace.getCandidates(3).getSchedule(), 1.0))
                .addKernels(neighbour(K0, liteSpace.getCandidates(4).getSchedule(), 0.9)) // past the limit
                .setOwn(ResolvedKernel.newBuilder().setFound(true).setReports(40).setOrigins(2)
                        .setKernel(KernelRef.newBuilder().setOp(K0).setSchedule(own)))
                .build();
        ComposeResponse r = extend(ExtendedSpace.ZooAnswer.of(zoo));

        assertEquals(3, r.getExploitationSize());
        assertFalse(r.getSettled(), "40 sessions, but from 2 origins of 3");
        assertEquals(zoo.getOwn(), r.getOwn(), "the kind's own election travels on to the gateway's Welcome");
        List<Candidate> exploitation = r.getCandidatesList().subList(0, 3);
        assertEquals(List.of(fromLite, foreign, liteSpace.getCandidates(3).getSchedule()),
                exploitation.stream().map(Candidate::getSchedule).toList());
        assertEquals(List.of(2.5, 1.5, 1.0), exploitation.stream().map(Candidate::getScore).toList(), "the zoo's scores");
        assertTrue(exploitation.stream().allMatch(c -> c.getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLOITATION));
        // Table 1 on this device for the foreign tile: 2 B vectors + 2 A splats + 2×2 accumulators; 4·(8·64 + 64·2 + 8·2) bytes
        assertEquals(8, exploitation.get(1).getUtilization().getRegThread());
        assertEquals(4 * (8 * 64 + 64 * 2 + 8 * 2), exploitation.get(1).getUtilization().getL1BlockBytes());
        assertEquals(liteSpace.getCandidates(7).getUtilization(), exploitation.get(0).getUtilization());

        List<Schedule> exploration = new ArrayList<>(schedules(liteSpace));
        exploration.remove(fromLite);
        exploration.remove(liteSpace.getCandidates(3).getSchedule());
        assertEquals(exploration, schedules(r).subList(3, r.getCandidatesCount()), "the rest of the lite space, in order");
        assertEquals(24 + 1, r.getCandidatesCount(), "the lite space and the one foreign kernel");
    }

    @Test
    void aSettledDeviceKindExploresNoMore() {
        Schedule neighbourBest = liteSpace.getCandidates(5).getSchedule();
        SimilarResponse zoo = SimilarResponse.newBuilder().addKernels(neighbour(K0, neighbourBest, 1.0))
                .setOwn(ResolvedKernel.newBuilder().setFound(true).setReports(3).setOrigins(3)
                        .setKernel(KernelRef.newBuilder().setOp(K0).setSchedule(liteSpace.getCandidates(0).getSchedule())))
                .build();
        ComposeResponse r = extend(ExtendedSpace.ZooAnswer.of(zoo));
        assertTrue(r.getSettled());
        assertEquals(List.of(neighbourBest), schedules(r), "only the neighbour's best, to confirm");
        assertEquals(1, r.getExploitationSize());
    }

    @Test
    void aKernelNeedingWhatTheDeviceLacksIsLeftOut() {
        DeviceProfile noRelaxed = HERE.toBuilder().setWasm(HERE.getWasm().toBuilder().setRelaxedSimd(false)).build();
        Schedule relaxed = Schedule.newBuilder().setX0(8).setY0(4).setR0(1).setVectorize(true).setRelaxedSimd(true).build();
        SimilarResponse zoo = SimilarResponse.newBuilder().addKernels(neighbour(K0, relaxed, 3)).build();
        assertEquals(0, extended.extend(lite.compose(K0, noRelaxed, Backend.BACKEND_WASM), ExtendedSpace.ZooAnswer.of(zoo),
                K0, noRelaxed, Backend.BACKEND_WASM).getExploitationSize());
        DeviceProfile scalar = HERE.toBuilder().setWasm(WasmFeatures.newBuilder()).build();
        assertTrue(LiteSpace.fit(K0, scalar, Backend.BACKEND_WASM, relaxed.toBuilder().setRelaxedSimd(false).build()).isEmpty(),
                "no SIMD, no vectors");
        assertEquals(1, extend(ExtendedSpace.ZooAnswer.of(zoo)).getExploitationSize(), "this machine has relaxed SIMD");

        DeviceProfile gpu = DeviceProfiles.bundled("arm-mali-webgpu");
        int maxInvocations = DeviceProfiles.limits(gpu).getMaxComputeInvocationsPerWorkgroup();
        Schedule wide = Schedule.newBuilder().setX0(4).setY0(1).setX1(4 * 32).setY1(2 * maxInvocations / 32)
                .setVectorize(true).setUnroll(4).build(); // twice the adapter's invocations
        assertTrue(LiteSpace.fit(K0, gpu, Backend.BACKEND_WGSL, wide).isEmpty());
        Schedule fits = wide.toBuilder().setY1(maxInvocations / 32).build();
        assertEquals(maxInvocations, LiteSpace.fit(K0, gpu, Backend.BACKEND_WGSL, fits).orElseThrow().getUtilization().getThreadBlock());
        assertTrue(LiteSpace.fit(K0, gpu, Backend.BACKEND_WGSL, fits.toBuilder().setPackB(true).build()).isEmpty(), "Wasm only");
    }

    @Test
    void refusesANonsenseSettleCount() {
        assertThrows(IllegalArgumentException.class, () -> new ExtendedSpace(0));
    }

    private ComposeResponse extend(ExtendedSpace.ZooAnswer answer) {
        return extended.extend(liteSpace, answer, K0, HERE, Backend.BACKEND_WASM);
    }

    private static SimilarKernel neighbour(OpSpec op, Schedule schedule, double score) {
        return SimilarKernel.newBuilder().setScore(score).setDevices(1).setKernel(KernelRef.newBuilder()
                .setKernelId("k-" + schedule.hashCode()).setBackend(Backend.BACKEND_WASM).setOp(op).setSchedule(schedule)).build();
    }

    private static List<Schedule> schedules(ComposeResponse r) {
        return r.getCandidatesList().stream().map(Candidate::getSchedule).toList();
    }
}
