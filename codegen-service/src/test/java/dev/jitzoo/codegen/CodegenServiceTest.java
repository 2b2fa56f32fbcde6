package dev.jitzoo.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.WasmSections;
import dev.jitzoo.localstack.MalformedGrpc;
import dev.jitzoo.proto.codegen.v1.CodegenServiceGrpc;
import dev.jitzoo.proto.codegen.v1.GenerateBatchRequest;
import dev.jitzoo.proto.codegen.v1.GenerateBatchResponse;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The compiler service over a real gRPC channel, with its Redis cache. */
@QuarkusTest
@QuarkusTestResource(value = CodegenInfraResource.class, restrictToAnnotatedClass = true)
class CodegenServiceTest {

    @TestHTTPResource("/")
    URL base;

    private ManagedChannel channel;
    private CodegenServiceGrpc.CodegenServiceBlockingStub codegen;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        codegen = CodegenServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void generatesOnceThenServesTheCachedKernel() {
        GenerateRequest request = request(matmul(31, 17, 13 + (int) (System.nanoTime() % 1000)), 2, 8, 0);
        GenerateResponse first = codegen.generate(request);
        GenerateResponse second = codegen.generate(request);
        byte[] wasm = first.getArtifact().getWasm().toByteArray();
        assertTrue(first.getGenerationMicros() > 0, "compiled");
        assertEquals(0, second.getGenerationMicros(), "cached");
        assertEquals(first.getArtifact(), second.getArtifact());
        assertEquals(request.getOp(), first.getArtifact().getRef().getOp());
        assertEquals(first.getArtifact().getMetadataJson(), WasmSections.customSection(wasm, "jitzoo.abi"));
    }

    @Test
    void streamsABatchInTheOrderGiven() {
        GenerateBatchRequest.Builder batch = GenerateBatchRequest.newBuilder();
        int[][] tiles = {{1, 4}, {4, 8}, {2, 16}, {1, 8}};
        for (int[] t : tiles) {
            batch.addRequests(request(matmul(64, 64, 64), t[0], t[1], 0));
        }
        List<GenerateResponse> responses = new ArrayList<>();
        codegen.generateBatch(batch.build()).forEachRemaining(r -> responses.add(r.getResult()));
        assertEquals(tiles.length, responses.size());
        for (int i = 0; i < tiles.length; i++) {
            Schedule s = responses.get(i).getArtifact().getRef().getSchedule();
            assertEquals(tiles[i][0], s.getY0());
            assertEquals(tiles[i][1], s.getX0());
        }
    }

    @Test
    void aBatchServesWhatTheCacheHoldsAndKeepsWhatItCompiled() {
        int n = 100 + (int) (System.nanoTime() % 1000);
        GenerateRequest known = request(matmul(32, 48, n), 1, 4, 0);
        assertTrue(codegen.generate(known).getGenerationMicros() > 0, "compiled alone first");
        GenerateBatchRequest batch = GenerateBatchRequest.newBuilder()
                .addRequests(request(matmul(32, 48, n), 2, 8, 0))
                .addRequests(known)
                .addRequests(request(matmul(32, 48, n), 4, 8, 0))
                .build();
        List<GenerateBatchResponse> first = new ArrayList<>();
        codegen.generateBatch(batch).forEachRemaining(first::add);
        assertEquals(List.of(true, false, true), first.stream().map(r -> r.getResult().getGenerationMicros() > 0).toList(),
                "the kernel the cache held served from it, the others compiled");
        List<GenerateBatchResponse> again = new ArrayList<>();
        codegen.generateBatch(batch).forEachRemaining(again::add);
        assertEquals(List.of(0L, 0L, 0L), again.stream().map(r -> r.getResult().getGenerationMicros()).toList(),
                "what the first batch compiled was kept");
        for (int i = 0; i < 3; i++) {
            assertEquals(i, again.get(i).getIndex());
            assertEquals(first.get(i).getResult().getArtifact(), again.get(i).getResult().getArtifact());
        }
    }

    @Test
    void generatesFusedAndRowOpsFromTheirProtos() {
        OpSpec fused = OpSpec.newBuilder(matmul(9, 10, 11)).setTransposeB(true)
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_SCALE).setValue(0.5f))
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_BIAS))
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_GELU_ERF)).build();
        GenerateRequest packed = GenerateRequest.newBuilder(request(fused, 2, 8, 0))
                .setSchedule(Schedule.newBuilder().setY0(2).setX0(8).setVectorize(true).setPackB(true)).build();
        String metadata = codegen.generate(packed).getArtifact().getMetadataJson();
        assertTrue(metadata.contains("\"operands\":[\"A\",\"B\",\"C\",\"Bias\"]") && metadata.contains("\"pack\":"),
                metadata);
        OpSpec softmax = OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX).addShape(12).addShape(384).build();
        GenerateRequest rows = GenerateRequest.newBuilder().setOp(softmax).setBackend(Backend.BACKEND_WASM)
                .setSchedule(Schedule.newBuilder().setVectorize(true).setUnroll(2)).build();
        assertTrue(codegen.generate(rows).getArtifact().getMetadataJson().contains("\"op\":\"softmax\""));
        assertInvalid(GenerateRequest.newBuilder(rows).setOp(OpSpec.newBuilder(softmax)
                .addEpilogue(Epilogue.newBuilder().setKind(EpilogueKind.EPILOGUE_KIND_RELU))).build(), "matmuls and convolutions only");
        assertInvalid(GenerateRequest.newBuilder(packed).setOp(OpSpec.newBuilder(fused)
                .addEpilogue(Epilogue.newBuilder().setKindValue(99))).build(), "unknown epilogue");
    }

    @Test
    void refusesImpossibleRequestsWithTheReason() {
        assertInvalid(request(matmul(8, 0, 8), 1, 4, 0), "positive");
        assertInvalid(request(matmul(8, 8, 8), 8, 16, 0), "accumulators");
        assertInvalid(request(OpSpec.newBuilder().setKindValue(42).addShape(1).addShape(1).addShape(1).build(), 1, 4, 0),
                "unknown op");
        assertInvalid(GenerateRequest.newBuilder(request(matmul(8, 8, 8), 1, 4, 0))
                .setBackend(Backend.BACKEND_UNSPECIFIED).build(), "not supported");
        assertInvalid(GenerateRequest.newBuilder(request(matmul(8, 8, 8), 1, 4, 0))
                .setBackend(Backend.BACKEND_WGSL).setSchedule(Schedule.newBuilder().setX0(4).setY0(1).setPackB(true))
                .build(), "Wasm schedule primitive");
        // in a batch, a refused request is answered with its reason and the stream goes on
        List<GenerateBatchResponse> batch = new ArrayList<>();
        codegen.generateBatch(GenerateBatchRequest.newBuilder().addRequests(request(matmul(8, 8, 8), 1, 4, 0))
                .addRequests(request(matmul(8, 8, 8), 1, 5, 0)).addRequests(request(matmul(8, 8, 8), 2, 4, 0)).build())
                .forEachRemaining(batch::add);
        assertEquals(List.of(0, 1, 2), batch.stream().map(GenerateBatchResponse::getIndex).toList());
        assertTrue(batch.get(1).getRefused().startsWith("requests[1]: "), batch.get(1).getRefused());
        assertFalse(batch.get(1).hasResult());
        assertTrue(batch.get(0).getResult().getArtifact().hasRef() && batch.get(2).getResult().getArtifact().hasRef());
        assertEquals("", batch.get(2).getRefused());
    }

    @Test
    void generatesWgslAndCachesItApartFromWasm() {
        OpSpec op = matmul(37, 13, 70 + (int) (System.nanoTime() % 1000));
        GenerateRequest wgsl = GenerateRequest.newBuilder(request(op, 2, 4, 0)).setBackend(Backend.BACKEND_WGSL)
                .setSchedule(Schedule.newBuilder().setY0(2).setX0(4).setVectorize(true).setX1(32).setY1(8).setR1(8)).build();
        GenerateResponse first = codegen.generate(wgsl);
        GenerateResponse second = codegen.generate(wgsl);
        assertTrue(first.getGenerationMicros() > 0, "compiled");
        assertEquals(0, second.getGenerationMicros(), "cached");
        assertEquals(first.getArtifact(), second.getArtifact());
        assertTrue(first.getArtifact().hasWgsl() && !first.getArtifact().hasWasm());
        assertTrue(first.getArtifact().getWgsl().contains("@compute @workgroup_size(8, 4, 1)"), first.getArtifact().getWgsl());
        assertEquals(1, first.getArtifact().getRef().getAbiVersion());
        assertEquals(Backend.BACKEND_WGSL, first.getArtifact().getRef().getBackend());
        String metadata = first.getArtifact().getMetadataJson();
        assertTrue(metadata.contains("\"entry\":\"main\"") && metadata.contains("\"workgroupSize\":[8,4,1]"), metadata);
        GenerateResponse wasm = codegen.generate(GenerateRequest.newBuilder(wgsl).setBackend(Backend.BACKEND_WASM).build());
        assertTrue(wasm.getArtifact().hasWasm());
        assertTrue(!wasm.getArtifact().getRef().getKernelId().equals(first.getArtifact().getRef().getKernelId()));
    }

    @Test
    void wgslKernelsFitTheLimitsTheDeviceSends() {
        GenerateRequest defaults = GenerateRequest.newBuilder(request(matmul(64, 16, 64), 1, 1, 0))
                .setBackend(Backend.BACKEND_WGSL).setSchedule(Schedule.newBuilder().setY0(1).setX0(1)).build();
        GenerateRequest small = GenerateRequest.newBuilder(defaults).setWebgpuLimits(WebGpuLimits.newBuilder()
                .setMaxComputeInvocationsPerWorkgroup(64).setMaxComputeWorkgroupSizeX(64)).build();
        String wide = codegen.generate(defaults).getArtifact().getMetadataJson();
        KernelArtifact fitted = codegen.generate(small).getArtifact();
        assertTrue(wide.contains("\"workgroupSize\":[16,16,1]"), wide);
        assertTrue(fitted.getMetadataJson().contains("\"workgroupSize\":[8,8,1]"), fitted.getMetadataJson());
        assertNotEquals(codegen.generate(defaults).getArtifact().getRef().getKernelId(), fitted.getRef().getKernelId());
        assertEquals(fitted, codegen.generate(small).getArtifact(), "the same device's request is served the same kernel");
        GenerateRequest tooSmall = GenerateRequest.newBuilder(defaults).setSchedule(Schedule.newBuilder().setY0(1).setX0(1)
                .setX1(32).setY1(1)).setWebgpuLimits(WebGpuLimits.newBuilder().setMaxComputeWorkgroupSizeX(16)).build();
        assertInvalid(tooSmall, "maxComputeWorkgroupSizeX 16");
        assertInvalid(GenerateRequest.newBuilder(defaults).setWebgpuLimits(WebGpuLimits.newBuilder()
                .setMaxComputeInvocationsPerWorkgroup(-1)).build(), "below 2^31");
        assertInvalid(GenerateRequest.newBuilder(request(matmul(8, 8, 8), 1, 4, 0))
                .setWebgpuLimits(WebGpuLimits.getDefaultInstance()).build(), "webgpu_limits apply to WGSL");
    }

    @Test
    void survivesGarbageBytes() {
        StatusRuntimeException garbage = MalformedGrpc.callExpectingError(channel,
                "jitzoo.codegen.v1.CodegenService/Generate", new byte[] {0x0a, 0x7f});
        assertTrue(garbage.getStatus().getDescription() != null);
        assertTrue(codegen.generate(request(matmul(3, 3, 3), 1, 4, 0)).getArtifact().hasRef(), "still serving");
    }

    private void assertInvalid(GenerateRequest request, String reason) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> codegen.generate(request));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains(reason), e.getStatus().getDescription());
    }

    static OpSpec matmul(int m, int k, int n) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(k).addShape(n).build();
    }

    static GenerateRequest request(OpSpec op, int y0, int x0, int unroll) {
        return GenerateRequest.newBuilder().setOp(op).setBackend(Backend.BACKEND_WASM)
                .setSchedule(Schedule.newBuilder().setY0(y0).setX0(x0).setVectorize(true).setUnroll(unroll)).build();
    }
}
