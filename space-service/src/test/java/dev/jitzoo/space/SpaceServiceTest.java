package dev.jitzoo.space;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.localstack.MalformedGrpc;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.kernel.v1.WebGpuAdapter;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.DynamicRequest;
import dev.jitzoo.proto.space.v1.DynamicResponse;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.ExtentPlan;
import dev.jitzoo.proto.kernel.v1.PlanPiece;
import dev.jitzoo.proto.kernel.v1.UKernel;
import java.util.Set;
import java.util.stream.Collectors;
import dev.jitzoo.proto.space.v1.SpaceServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse;
import grpc.health.v1.HealthGrpc;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The space service over a real gRPC channel. */
@QuarkusTest
class SpaceServiceTest {

    @TestHTTPResource("/")
    URL base;

    private ManagedChannel channel;
    private SpaceServiceGrpc.SpaceServiceBlockingStub space;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        space = SpaceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void composesTheLiteSpaceBestFirstWithItsUtilization() {
        ComposeResponse response = space.compose(request(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(384).addShape(768).addShape(768).build(), true));
        assertTrue(response.getCandidatesCount() >= 4, "a handful of tilings");
        assertEquals(response.getLiteSpaceSize(), response.getCandidatesCount());
        assertTrue(response.getNaiveSpaceSize() > 10_000L * response.getCandidatesCount());
        for (int i = 1; i < response.getCandidatesCount(); i++) {
            assertTrue(response.getCandidates(i - 1).getScore() >= response.getCandidates(i).getScore(), "best first");
        }
        for (Candidate c : response.getCandidatesList()) {
            assertTrue(c.getSchedule().getY0() * c.getSchedule().getX0() / 4 <= 16, "fits the SIMD registers");
            assertTrue(c.getSchedule().getVectorize());
            assertTrue(c.getUtilization().getRegThread() >= 14 && c.getUtilization().getRegThread() <= 16);
        }
    }

    @Test
    void aDeadZooLeavesTheLiteSpaceWholeAndSaysWhy() {
        ComposeResponse response = space.compose(request(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(64).addShape(64).addShape(64).build(), true));
        assertTrue(response.getZooUnavailable().startsWith("the zoo did not answer"), response.getZooUnavailable());
        assertEquals(0, response.getExploitationSize());
        assertFalse(response.getSettled());
        assertEquals(response.getLiteSpaceSize(), response.getCandidatesCount());
        assertTrue(response.getCandidatesList().stream().allMatch(c -> c.getSource() == CandidateSource.CANDIDATE_SOURCE_EXPLORATION));

        ComposeRequest anonymous = request(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                .addShape(64).addShape(64).addShape(64).build(), true);
        anonymous = anonymous.toBuilder().setDevice(anonymous.getDevice().toBuilder().clearFingerprint()).build();
        assertEquals("the device has no fingerprint to look up", space.compose(anonymous).getZooUnavailable());
    }

    @Test
    void composesForWebGpuFromTheAdaptersLimits() {
        DeviceProfile gpu = DeviceProfile.newBuilder().setLogicalCores(8).setWebgpu(WebGpuAdapter.newBuilder()
                .setVendor("nvidia").setArchitecture("ampere").setLimits(WebGpuLimits.newBuilder()
                        .setMaxComputeInvocationsPerWorkgroup(128))).build();
        ComposeResponse response = space.compose(ComposeRequest.newBuilder().setBackend(Backend.BACKEND_WGSL)
                .setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(384).addShape(768).addShape(768))
                .setDevice(gpu).build());
        assertFalse(response.getCandidatesList().isEmpty());
        assertTrue(response.getCandidatesList().stream().allMatch(c -> c.getUtilization().getThreadBlock() <= 128));
    }

    @Test
    void withoutSimdNoCandidateIsVectorized() {
        ComposeResponse response = space.compose(request(OpSpec.newBuilder().setKind(OpKind.OP_KIND_BATCH_MATMUL)
                .addShape(12).addShape(384).addShape(64).addShape(384).build(), false));
        assertFalse(response.getCandidatesList().isEmpty());
        assertTrue(response.getCandidatesList().stream().noneMatch(c -> c.getSchedule().getVectorize()));
    }

    @Test
    void refusesAbsurdDevicesWithTheReason() {
        ComposeRequest good = request(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(4).addShape(4).addShape(4).build(), true);
        assertInvalid(ComposeRequest.newBuilder(good).setDevice(good.getDevice().toBuilder().setLogicalCores(0)).build(),
                "logical_cores must be 1 to 1024");
        assertInvalid(ComposeRequest.newBuilder(good).setDevice(good.getDevice().toBuilder()
                .setWasm(WasmFeatures.newBuilder().setSimd(true).setL1DataBytes(-1))).build(), "wasm.l1_data_bytes");
        assertInvalid(ComposeRequest.newBuilder(good).clearDevice().build(), "device is required");
        assertInvalid(ComposeRequest.newBuilder(good).setBackend(Backend.BACKEND_WGSL).build(), "webgpu adapter");
    }

    @Test
    void refusesImpossibleOpsWithTheReason() {
        assertInvalid(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(4).addShape(0).addShape(4).build(),
                "positive");
        assertInvalid(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(4).addShape(4).build(), "3 dimensions");
        assertInvalid(OpSpec.newBuilder().setKindValue(99).addShape(4).addShape(4).addShape(4).build(), "unknown op");
        StatusRuntimeException noOp = assertThrows(StatusRuntimeException.class,
                () -> space.compose(ComposeRequest.getDefaultInstance()));
        assertEquals(Status.Code.INVALID_ARGUMENT, noOp.getStatus().getCode());
    }

    @Test
    void servesTheUKernelSetAndAPlanForEveryExtentOfADynamicMatmul() {
        OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(512).addShape(768).addShape(3072)
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS)).build();
        DynamicResponse response = space.dynamic(dynamic(op, 1, 512));
        assertFalse(response.getKernelsList().isEmpty());
        Set<Integer> rows = response.getKernelsList().stream().map(UKernel::getRows).collect(Collectors.toSet());
        for (int i = 1; i < response.getKernelsCount(); i++) {
            assertTrue(response.getKernels(i).getRows() > response.getKernels(i - 1).getRows(), "fewest rows first");
        }
        assertEquals(512, response.getPlansCount());
        for (int i = 0; i < 512; i++) {
            ExtentPlan plan = response.getPlans(i);
            assertEquals(i + 1, plan.getExtent());
            int covered = 0;
            for (PlanPiece piece : plan.getPiecesList()) {
                assertTrue(rows.contains(piece.getRows()), "extent " + plan.getExtent() + " calls a uKernel of the set");
                covered += piece.getRows() * piece.getCount();
            }
            assertEquals(plan.getPaddedExtent(), covered);
            assertTrue(covered >= plan.getExtent(), "extent " + plan.getExtent() + " is covered");
        }
    }

    @Test
    void refusesADynamicRequestItCannotServeWithTheReason() {
        OpSpec matmul = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(64).addShape(64).addShape(64).build();
        assertInvalidDynamic(dynamic(matmul, 0, 64), "1 <= lo <= hi");
        assertInvalidDynamic(dynamic(matmul, 65, 64), "1 <= lo <= hi");
        assertInvalidDynamic(dynamic(matmul, 1, 1 << 20), "at most at 4096");
        assertInvalidDynamic(dynamic(matmul, 1, -1), "at most at 4096");
        assertInvalidDynamic(dynamic(OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX).addShape(64).addShape(64).build(), 1, 64),
                "MatMuls only");
        assertInvalidDynamic(DynamicRequest.newBuilder().setLo(1).setHi(8).build(), "op is required");
        assertInvalidDynamic(DynamicRequest.newBuilder().setOp(matmul).setLo(1).setHi(8).build(), "device is required");
    }

    /**
     * A plan over 1..4096 rows takes seconds: it is composed off the event loop, so the Composes
     * asked meanwhile are answered while it is still under way; asked again, it is remembered.
     */
    @Test
    void aLongPlanDoesNotHoldUpComposesAndIsComposedOnce() throws Exception {
        OpSpec matmul = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(4096).addShape(768).addShape(768).build();
        var plan = SpaceServiceGrpc.newFutureStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS).dynamic(dynamic(matmul, 1, 4096));
        for (int i = 0; i < 3; i++) {
            assertTrue(space.compose(request(matmul, true)).getCandidatesCount() > 0);
        }
        assertFalse(plan.isDone(), "three Composes answered while the plan is still being composed");
        DynamicResponse first = plan.get(60, TimeUnit.SECONDS);
        assertEquals(4096, first.getPlansCount());
        var again = SpaceServiceGrpc.newFutureStub(channel).dynamic(dynamic(matmul, 1, 4096));
        assertEquals(first, again.get(60, TimeUnit.SECONDS), "the same plan, remembered");
    }

    @Test
    void survivesGarbageBytesAndReportsHealth() {
        StatusRuntimeException garbage = MalformedGrpc.callExpectingError(channel,
                "jitzoo.space.v1.SpaceService/Compose", new byte[] {0x12, 0x7f, 0x01});
        assertTrue(garbage.getStatus().getDescription() != null, "a reason comes back");
        HealthCheckResponse health = HealthGrpc.newBlockingStub(channel)
                .check(HealthCheckRequest.newBuilder().setService("").build());
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, health.getStatus());
    }

    private void assertInvalid(OpSpec op, String reason) {
        assertInvalid(request(op, true), reason);
    }

    private void assertInvalid(ComposeRequest request, String reason) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> space.compose(request));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains(reason), e.getStatus().getDescription());
    }

    private void assertInvalidDynamic(DynamicRequest request, String reason) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> space.dynamic(request));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains(reason), e.getStatus().getDescription());
    }

    private static DynamicRequest dynamic(OpSpec op, int lo, int hi) {
        return DynamicRequest.newBuilder().setOp(op).setLo(lo).setHi(hi).setDevice(request(op, true).getDevice()).build();
    }

    private static ComposeRequest request(OpSpec op, boolean simd) {
        return ComposeRequest.newBuilder().setOp(op).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("test").setLogicalCores(2)
                        .setWasm(WasmFeatures.newBuilder().setSimd(simd))).build();
    }
}
