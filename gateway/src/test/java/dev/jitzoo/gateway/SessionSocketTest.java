package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.PlanRequest;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.Resume;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.gateway.session.SessionStore;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Bad input over a real WebSocket: each refused frame gets an Error frame and a close code with
 * a reason, and the gateway goes on serving. (The full thread with the three services runs in
 * the end-to-end suite.)
 */
@QuarkusTest
@QuarkusTestResource(value = GatewayInfraResource.class, restrictToAnnotatedClass = true)
class SessionSocketTest {

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    SessionStore store;

    @Test
    void garbageClosesWith1007() throws Exception {
        Outcome outcome = exchange(ByteBuffer.wrap(new byte[] {(byte) 0xff, 0x00, 0x13, 0x37}));
        assertEquals(1007, outcome.closeCode);
        assertEquals(ErrorCode.ERROR_CODE_MALFORMED_FRAME, outcome.error.getError().getCode());
        assertFalse(outcome.reason.isBlank());
    }

    @Test
    void truncatedHelloClosesWith1007() throws Exception {
        byte[] hello = ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1)
                .setBackend(Backend.BACKEND_WASM).addOps(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                        .addShape(128).addShape(256).addShape(96))).build().toByteArray();
        Outcome outcome = exchange(ByteBuffer.wrap(hello, 0, hello.length - 3));
        assertEquals(1007, outcome.closeCode);
    }

    @Test
    void helloWithoutFingerprintClosesWith1008() throws Exception {
        assertInvalidHello(DeviceProfile.getDefaultInstance(), "device.fingerprint is required");
    }

    @Test
    void helloWithAMalformedPrimitiveVectorClosesWith1008() throws Exception {
        assertInvalidHello(DeviceProfile.newBuilder().setFingerprint("rho-test").setPrimitiveVector("1x0").build(),
                "device.primitive_vector is made of 0, 1 and -, got \"1x0\"");
    }

    /** A Hello for one MatMul from {@code device} is refused with INVALID_HELLO, close 1008 and {@code reason}. */
    private void assertInvalidHello(DeviceProfile device, String reason) throws Exception {
        byte[] hello = ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setDevice(device)
                .setBackend(Backend.BACKEND_WASM).addOps(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
                        .addShape(8).addShape(8).addShape(8))).build().toByteArray();
        Outcome outcome = exchange(ByteBuffer.wrap(hello));
        assertEquals(1008, outcome.closeCode);
        assertEquals(ErrorCode.ERROR_CODE_INVALID_HELLO, outcome.error.getError().getCode());
        assertEquals(reason, outcome.reason);
    }

    /**
     * Nothing listens at the zoo's, the space's or codegen's port here: the gateway stays ready
     * (it still stores reports and welcomes kinds whose kernels it keeps), says which service is
     * down in its readiness data and metrics, and answers a Hello that needs a new kernel UNAVAILABLE.
     */
    @Test
    void withTheKernelServicesDownTheGatewayStaysReadySaysSoAndAnswersAHelloUnavailable() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest ready = HttpRequest.newBuilder(endpoint.toURI().resolve("/q/health/ready")).build();
        HttpResponse<String> health = http.send(ready, HttpResponse.BodyHandlers.ofString());
        for (long until = System.nanoTime() + 10_000_000_000L; !health.body().contains("\"codegen\": \"UNREACHABLE") && System.nanoTime() < until; ) {
            Thread.sleep(100);
            health = http.send(ready, HttpResponse.BodyHandlers.ofString());
        }
        assertEquals(200, health.statusCode(), health.body());
        assertTrue(health.body().contains("\"codegen\": \"UNREACHABLE"), health.body());
        assertTrue(health.body().contains("\"zoo\": \"UNREACHABLE"), health.body());
        String metrics = TestSocket.metrics(endpoint);
        for (String service : List.of("zoo", "space", "codegen")) {
            String series = "jitzoo_gateway_downstream_serving{service=\"" + service + "\"}";
            assertEquals(0.0, TestSocket.metric(metrics, series), () -> series + " on the page: "
                    + metrics.lines().filter(l -> l.contains("downstream_serving") || l.startsWith("HTTP")).toList());
        }
        try (TestSocket page = new TestSocket(endpoint)) {
            page.send(ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                    .setDevice(DeviceProfile.newBuilder().setFingerprint("services-down-" + UUID.randomUUID()))
                    .addOps(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(8).addShape(8).addShape(8)).setCredits(4)));
            ServerFrame refused = page.await(ServerFrame::hasError, "the answer to the Hello");
            assertEquals(ErrorCode.ERROR_CODE_UNAVAILABLE, refused.getError().getCode(), refused.toString());
            assertTrue(refused.getError().getMessage().startsWith("kernel services unavailable"), refused.toString());
        }
    }

    @Test
    void reportBeforeHelloClosesWith1008() throws Exception {
        byte[] report = ClientFrame.newBuilder().setReport(Report.newBuilder()).build().toByteArray();
        Outcome outcome = exchange(ByteBuffer.wrap(report));
        assertEquals(1008, outcome.closeCode);
        assertEquals(ErrorCode.ERROR_CODE_PROTOCOL, outcome.error.getError().getCode());
    }

    @Test
    void textClosesWith1007() throws Exception {
        Outcome outcome = exchange((ByteBuffer) null);
        assertEquals(1007, outcome.closeCode);
    }

    @Test
    void oversizedFrameIsRefused() throws Exception {
        Outcome outcome = exchange(ByteBuffer.wrap(new byte[80 * 1024]));
        assertEquals(1009, outcome.closeCode);
        // the gateway's own refusal, with its reason: the transport's cap (1 MiB) is far above the gateway's (64 KiB)
        assertEquals(ErrorCode.ERROR_CODE_MALFORMED_FRAME, outcome.error.getError().getCode());
    }

    @Test
    void aPlanRequestTheSpaceCannotAnswerIsRefusedAndTheConnectionGoesOn() throws Exception {
        byte[] plan = ClientFrame.newBuilder().setPlanRequest(PlanRequest.newBuilder().setLo(1).setHi(64)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("fp").setWasm(WasmFeatures.newBuilder().setSimd(true)))
                .setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(64).addShape(32).addShape(32)))
                .build().toByteArray();
        byte[] reportBeforeHello = ClientFrame.newBuilder().setReport(Report.newBuilder()).build().toByteArray();
        // the space is down in tests: the first frame gets an Error and the connection stays, so the second one is read
        Outcome outcome = exchange(List.of(ByteBuffer.wrap(plan), ByteBuffer.wrap(reportBeforeHello)));
        assertEquals(2, outcome.frames.size());
        assertEquals(ErrorCode.ERROR_CODE_UNAVAILABLE, outcome.frames.get(0).getError().getCode());
        assertEquals(ErrorCode.ERROR_CODE_PROTOCOL, outcome.frames.get(1).getError().getCode());
        assertEquals(1008, outcome.closeCode);
    }

    @Test
    void anUnknownResumeTokenIsRefusedAndTheConnectionStaysOpenForAHello() throws Exception {
        byte[] resume = ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken("no-such-token").setCredits(4)).build().toByteArray();
        byte[] reportBeforeHello = ClientFrame.newBuilder().setReport(Report.newBuilder()).build().toByteArray();
        Outcome outcome = exchange(List.of(ByteBuffer.wrap(resume), ByteBuffer.wrap(reportBeforeHello)));
        assertEquals(ErrorCode.ERROR_CODE_RESUME_REJECTED, outcome.frames.get(0).getError().getCode());
        assertEquals(ErrorCode.ERROR_CODE_PROTOCOL, outcome.frames.get(1).getError().getCode());
        assertEquals(1008, outcome.closeCode);
    }

    /**
     * A session as the store kept it (a gateway restarted, or another replica) goes on on a new
     * connection: a report the store says was stored is acknowledged again, a kernel never
     * issued is still refused, a report of an op not yet reported is stored, and a Hello on top
     * of the resumed session is a protocol error.
     */
    @Test
    void aKeptSessionResumesOnANewConnection() throws Exception {
        OpSpec stored = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(8).addShape(8).addShape(8).build();
        OpSpec open = OpSpec.newBuilder().setKind(OpKind.OP_KIND_SOFTMAX).addShape(8).addShape(8).build();
        KernelRef a = KernelRef.newBuilder().setKernelId("k-a").setOp(stored).setSchedule(Schedule.newBuilder().setX0(1)).build();
        KernelRef b = KernelRef.newBuilder().setKernelId("k-b").setOp(open).setSchedule(Schedule.newBuilder().setX0(2)).build();
        Hello hello = Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM).addOps(stored).addOps(open)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("resume-test")).build();
        String token = UUID.randomUUID().toString();
        store.create(token, "session-1", hello, List.of(a, b), Double.NaN, "public", "").await().indefinitely();
        store.reported(token, 0).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);

        Outcome outcome = exchange(List.of(
                frame(ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken(token).setCredits(4))),
                report(stored, "k-a"), report(open, "k-a"), report(open, "k-b"),
                frame(ClientFrame.newBuilder().setHello(hello))));
        assertEquals("session-1", outcome.frames.get(0).getResumed().getSessionId());
        // a new report is acknowledged once the broker has it, while the next frames are read: its
        // acknowledgement may come after the Hello's refusal, or not at all once the connection closed
        List<ServerFrame> answers = outcome.frames.stream().filter(f -> !f.hasOffersDone() && !(f.hasReportAck()
                && f.getReportAck().getOp().equals(open))).toList();
        assertEquals(stored, answers.get(1).getReportAck().getOp(), "stored before: acknowledged again");
        assertEquals(ErrorCode.ERROR_CODE_INVALID_REPORT, answers.get(2).getError().getCode());
        assertEquals(ErrorCode.ERROR_CODE_PROTOCOL, answers.get(3).getError().getCode());
        assertEquals(1008, outcome.closeCode);
        java.util.Set<Integer> reported = java.util.Set.of();
        for (long deadline = System.currentTimeMillis() + 10_000; !reported.contains(1) && System.currentTimeMillis() < deadline; Thread.sleep(50)) {
            reported = store.find(token).await().indefinitely().orElseThrow().reportedOps();
        }
        assertEquals(java.util.Set.of(0, 1), reported, "the new report stored, and marked so in the kept session");
    }

    /**
     * A kept session is one Redis hash under the SHA-256 of its token, each write of its fields
     * renewing its expiry (a write of many fields too): read back from Redis itself.
     */
    @Test
    void aKeptSessionsHashHoldsItsFieldsAndExpiresAResumeTtlAfterItsLastWrite() throws Exception {
        OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(4).addShape(4).addShape(4).build();
        KernelRef kernel = KernelRef.newBuilder().setKernelId("k-ttl").setOp(op).setSchedule(Schedule.newBuilder().setX0(1)).build();
        Hello hello = Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM).addOps(op)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("ttl-test")).build();
        String token = UUID.randomUUID().toString();
        store.create(token, "session-ttl", hello, List.of(kernel), Double.NaN, "public", "").await().indefinitely();
        store.reported(token, 0).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
        List<String> many = java.util.stream.IntStream.range(0, 1500).mapToObj(i -> "many-" + i).toList();
        store.sent(token, many).await().indefinitely();

        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(dev.jitzoo.localstack.TestInfra.redisUri());
        try (var redis = client.connect()) {
            String key = "jitzoo:session:" + dev.jitzoo.tenant.Digests.sha256Hex(token, 32);
            java.util.Set<String> fields = new java.util.HashSet<>(redis.sync().hkeys(key));
            assertTrue(fields.containsAll(List.of("id", "hello", "peak", "tenant", "page", "k:k-ttl", "s:k-ttl", "r:0")), fields.toString());
            assertEquals(8 + many.size(), fields.size(), "every field of the three writes, the 1,500 of the last among them");
            long ttl = redis.sync().ttl(key);
            assertTrue(ttl > 3500 && ttl <= 3600, "expires within the resume TTL (1 h) of its last write: " + ttl + " s");
            redis.sync().expire(key, 100);
            store.reported(token, 1).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(redis.sync().ttl(key) > 3500, "a report renews it");
            assertEquals(java.util.Set.of(0, 1), store.find(token).await().indefinitely().orElseThrow().reportedOps());
        } finally {
            client.shutdown();
        }
    }

    /**
     * A resume token works for the tenant and page it was issued to, on one connection at a time:
     * replayed from another page it is refused; resumed again elsewhere, the connection it was on
     * is closed.
     */
    @Test
    void aResumeTokenIsBoundToItsPageAndLivesOnOneConnection() throws Exception {
        OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(8).addShape(8).addShape(8).build();
        Hello hello = Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM).addOps(op)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("resume-bound")).build();
        String token = UUID.randomUUID().toString();
        String page = "https://app.example";
        store.create(token, "session-bound", hello, List.of(), Double.NaN, "public", page).await().indefinitely();
        ClientFrame.Builder resume = ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken(token).setCredits(1));

        try (TestSocket elsewhere = new TestSocket(endpoint, java.util.Map.of("Origin", "https://evil.example"))) {
            elsewhere.send(resume);
            ServerFrame refused = elsewhere.await(ServerFrame::hasError, "a refusal");
            assertEquals(ErrorCode.ERROR_CODE_RESUME_REJECTED, refused.getError().getCode());
            assertTrue(refused.getError().getMessage().contains("another tenant or page"), refused.getError().getMessage());
        }
        try (TestSocket first = new TestSocket(endpoint, java.util.Map.of("Origin", page))) {
            first.send(resume);
            assertEquals("session-bound", first.await(ServerFrame::hasResumed, "Resumed").getResumed().getSessionId());
            try (TestSocket second = new TestSocket(endpoint, java.util.Map.of("Origin", page))) {
                second.send(resume);
                assertEquals("session-bound", second.await(ServerFrame::hasResumed, "Resumed").getResumed().getSessionId());
                TestSocket.Close closed = first.closed();
                assertEquals(1008, closed.code(), "the connection the session was on is closed: " + closed);
                assertTrue(second.isOpen(), "the session lives on the new one");
            }
        }
    }

    private static ByteBuffer frame(ClientFrame.Builder frame) {
        return ByteBuffer.wrap(frame.build().toByteArray());
    }

    private static ByteBuffer report(OpSpec op, String kernelId) {
        return frame(ClientFrame.newBuilder().setReport(Report.newBuilder().setOp(op)
                .addRanked(RankedKernel.newBuilder().setKernelId(kernelId).setMedianMs(0.5).setSamples(5))));
    }

    /** What came back: every frame (the last one is the Error of the close, if any), and the close. */
    private record Outcome(List<ServerFrame> frames, ServerFrame error, int closeCode, String reason) {
    }

    /** Opens a connection, sends one binary frame (or a text one when null), waits for the close. */
    private Outcome exchange(ByteBuffer frame) throws Exception {
        return exchange(frame == null ? null : List.of(frame));
    }

    /** Opens a connection, sends binary frames one after the other (or a text one when null), waits for the close. */
    private Outcome exchange(List<ByteBuffer> frames) throws Exception {
        try (TestSocket socket = new TestSocket(endpoint)) {
            if (frames == null) {
                socket.sendText("hello?");
            } else {
                for (ByteBuffer frame : frames) {
                    socket.send(frame);
                }
            }
            TestSocket.Close close = socket.closed();
            List<ServerFrame> received = socket.drain();
            return new Outcome(received, received.isEmpty() ? null : received.get(received.size() - 1), close.code(), close.reason());
        }
    }
}
