package dev.jitzoo.gateway.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KernelSourcesTest {

    private static OpSpec op(OpKind kind, int... dims) {
        OpSpec.Builder b = OpSpec.newBuilder().setKind(kind);
        for (int d : dims) {
            b.addShape(d);
        }
        return b.build();
    }

    private static ComposeResponse space(int candidates) {
        ComposeResponse.Builder r = ComposeResponse.newBuilder();
        for (int i = 0; i < candidates; i++) {
            r.addCandidates(Candidate.newBuilder().setSchedule(Schedule.newBuilder().setUnroll(i)));
        }
        return r.build();
    }

    @Test
    void offersGoRoundRobinOverTheOps() {
        OpSpec a = op(OpKind.OP_KIND_MATMUL, 4, 4, 4), b = op(OpKind.OP_KIND_SOFTMAX, 4, 4), c = op(OpKind.OP_KIND_ADD, 16);
        Schedule none = Schedule.newBuilder().setX0(99).build();
        List<KernelSources.Planned> order = KernelSources.roundRobin(List.of(a, b, c), List.of(space(3), space(1), space(2)),
                List.of(Set.of(none), Set.of(none), Set.of(none)));
        assertEquals(List.of(a, b, c, a, c, a), order.stream().map(KernelSources.Planned::op).toList());
        assertEquals(List.of(0, 0, 0, 1, 1, 2), order.stream().map(KernelSources.Planned::rank).toList());
        assertEquals(2, order.get(5).candidate().getSchedule().getUnroll(), "within an op, the space's order");
    }

    @Test
    void anOpsInitialKernelIsNotOfferedAgain() {
        OpSpec a = op(OpKind.OP_KIND_MATMUL, 4, 4, 4), b = op(OpKind.OP_KIND_SOFTMAX, 4, 4);
        List<KernelSources.Planned> order = KernelSources.roundRobin(List.of(a, b), List.of(space(3), space(2)),
                List.of(Set.of(space(3).getCandidates(1).getSchedule()), Set.of(space(2).getCandidates(0).getSchedule())));
        assertEquals(List.of(a, b, a), order.stream().map(KernelSources.Planned::op).toList());
        assertEquals(List.of(0, 1, 2), order.stream().map(KernelSources.Planned::rank).toList());
    }

    @Test
    void aResumedSessionIsOfferedOnlyWhatItWasNotGiven() {
        OpSpec a = op(OpKind.OP_KIND_MATMUL, 4, 4, 4), b = op(OpKind.OP_KIND_SOFTMAX, 4, 4);
        Set<Schedule> givenA = Set.of(space(3).getCandidates(0).getSchedule(), space(3).getCandidates(2).getSchedule());
        List<KernelSources.Planned> order = KernelSources.roundRobin(List.of(a, b), List.of(space(3), space(2)),
                List.of(givenA, Set.of()));
        assertEquals(List.of(b, a, b), order.stream().map(KernelSources.Planned::op).toList());
        assertEquals(List.of(0, 1, 1), order.stream().map(KernelSources.Planned::rank).toList());
    }

    @Test
    void aNewKindStartsFromTheLiteSpacesFirstCandidateNotANeighboursBest() {
        ComposeResponse extended = ComposeResponse.newBuilder()
                .addCandidates(Candidate.newBuilder().setSource(CandidateSource.CANDIDATE_SOURCE_EXPLOITATION)
                        .setSchedule(Schedule.newBuilder().setX0(16)))
                .addCandidates(Candidate.newBuilder().setSchedule(Schedule.newBuilder().setX0(8)))
                .addCandidates(Candidate.newBuilder().setSchedule(Schedule.newBuilder().setX0(4)))
                .build();
        assertEquals(Optional.of(Schedule.newBuilder().setX0(8).build()), KernelSources.firstOwnCandidate(extended),
                "the exploitation set stays offers, sent first");
        assertEquals(Optional.empty(), KernelSources.firstOwnCandidate(extended.toBuilder().removeCandidates(2).removeCandidates(1).build()),
                "a settled kind explores nothing: its own best comes from the zoo");
        assertEquals(Optional.empty(), KernelSources.firstOwnCandidate(null), "no space answer: the safe default");
    }

    /** One row, one SIMD vector: valid for any shape. */
    private static final Schedule SAFE = Schedule.newBuilder().setY0(1).setX0(4).setVectorize(true).build();

    @Test
    void everyOpKindHasASafeDefaultTheCompilerTakes() {
        assertEquals(SAFE, KernelSources.safeDefault(op(OpKind.OP_KIND_MATMUL, 4, 4, 4), Backend.BACKEND_WASM));
        OpSpec transposed = op(OpKind.OP_KIND_BATCH_MATMUL, 2, 4, 4, 4).toBuilder().setTransposeB(true).build();
        assertTrue(KernelSources.safeDefault(transposed, Backend.BACKEND_WASM).getPackB(), "a Wasm vector tile reads a transposed B packed");
        assertEquals(SAFE, KernelSources.safeDefault(transposed, Backend.BACKEND_WGSL),
                "WGSL reads a transposed B in place: packing is a Wasm primitive, refused for WGSL");
        Schedule row = KernelSources.safeDefault(op(OpKind.OP_KIND_LAYER_NORM, 4, 4), Backend.BACKEND_WASM);
        assertEquals(Schedule.newBuilder().setVectorize(true).build(), row, "row ops take vectorize and unroll only");
    }

    @Test
    void aSessionOnThreadsRunsEveryScheduleSplitForThemAndOneThreadNone() {
        OpSpec matmul = op(OpKind.OP_KIND_MATMUL, 384, 768, 768);
        Hello two = Hello.newBuilder().setBackend(Backend.BACKEND_WASM).setDevice(DeviceProfile.newBuilder()
                .setWasm(WasmFeatures.newBuilder().setThreads(true).setThreadsUsed(2))).build();
        Schedule safe = KernelSources.safeDefault(matmul, two);
        assertEquals(SplitAxis.SPLIT_AXIS_ROWS, safe.getSplitAxis());
        assertEquals(192, safe.getSplitGrain(), "two equal bands of whole row tiles");
        Schedule elected = Schedule.newBuilder().setY0(4).setX0(8).setVectorize(true).setSplitAxis(SplitAxis.SPLIT_AXIS_ROWS)
                .setSplitGrain(96).build(); // made for four threads
        assertEquals(192, KernelSources.forSession(matmul, elected, two).getSplitGrain());
        Hello one = two.toBuilder().setDevice(DeviceProfile.getDefaultInstance()).build();
        assertEquals(SplitAxis.SPLIT_AXIS_UNSPECIFIED, KernelSources.forSession(matmul, elected, one).getSplitAxis());
        assertEquals(0, KernelSources.forSession(matmul, elected, one).getSplitGrain());
        Hello gpu = two.toBuilder().setBackend(Backend.BACKEND_WGSL).build();
        assertEquals(SAFE, KernelSources.safeDefault(matmul, gpu), "WGSL takes no split");
    }
}
