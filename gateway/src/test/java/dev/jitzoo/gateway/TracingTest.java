package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * With traces on, a session's start is one trace: the gateway's {@code jitzoo.session.hello} span,
 * its gRPC client spans for the zoo's Resolve, the space's Compose and codegen's Generate and
 * GenerateBatch as children, and each call carrying the trace to its service in the
 * {@code traceparent} header. (Its own application: traces are off in every other test.)
 */
@QuarkusTest
@TestProfile(TracingTest.Traced.class)
@QuarkusTestResource(value = FakeDownstreams.class, restrictToAnnotatedClass = true)
class TracingTest {

    public static class Traced implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.otel.sdk.disabled", "false",
                    "quarkus.otel.exporter.otlp.enabled", "false", // no collector here: the in-memory exporter only
                    "quarkus.otel.bsp.schedule.delay", "PT0.05S");
        }
    }

    /** The zoo is not among them: the space's answer carries its elections (it asks the zoo's Similar). */
    private static final List<String> DOWNSTREAM = List.of("jitzoo.space.v1.SpaceService/Compose", "jitzoo.codegen.v1.CodegenService/Generate",
            "jitzoo.codegen.v1.CodegenService/GenerateBatch");

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    InMemorySpanExporter spans;

    @Inject
    dev.jitzoo.gateway.session.SessionStore store;

    @Test
    void aSessionsStartIsOneTraceThroughEveryDownstreamCall() throws Exception {
        String sessionId;
        try (TestSocket socket = new TestSocket(endpoint)) {
            OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(33).addShape(8).addShape(8).build();
            socket.send(ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                    .setDevice(DeviceProfile.newBuilder().setFingerprint("tracing-test")).addOps(op).setCredits(10)));
            sessionId = socket.await(ServerFrame::hasWelcome, "Welcome").getWelcome().getSessionId();
            socket.await(ServerFrame::hasOffersDone, "the session's offers");
        }
        SpanData hello = awaitSpan(s -> s.getName().equals("jitzoo.session.hello"), "the session's span");
        assertEquals(SpanKind.SERVER, hello.getKind());
        assertEquals(sessionId, hello.getAttributes().get(AttributeKey.stringKey("jitzoo.session.id")));
        assertEquals("tracing-test", hello.getAttributes().get(AttributeKey.stringKey("jitzoo.device.fingerprint")));
        assertTrue(!hello.getParentSpanContext().isValid(), "a session's trace starts at the gateway");

        for (String method : DOWNSTREAM) {
            // other tests' sessions have calls of their own: this session's is the one in its trace
            SpanData call = awaitSpan(s -> s.getName().equals(method) && s.getKind() == SpanKind.CLIENT
                    && s.getTraceId().equals(hello.getTraceId()), method + "'s client span in the session's trace");
            assertEquals(hello.getSpanId(), call.getParentSpanId(), method + " is a child of the session's span");
            List<String> sent = FakeDownstreams.traceparents(method);
            assertTrue(sent.stream().anyMatch(t -> t.contains(hello.getTraceId())),
                    method + " carried the trace to its service, got " + sent);
        }
    }

    /** A report's record is a PRODUCER span, its context in the record's {@code traceparent} header for the zoo's consumer. */
    @Test
    void aReportsRecordCarriesItsPublishSpan() throws Exception {
        String device = "tracing-report-" + java.util.UUID.randomUUID();
        String token = ReportPublishingTest.keep(store, device, 1);
        try (TestSocket socket = new TestSocket(endpoint)) {
            ReportPublishingTest.resume(socket, token);
            ReportPublishingTest.report(socket, 0);
            socket.await(ServerFrame::hasReportAck, "the report's acknowledgement");
        }
        SpanData publish = awaitSpan(s -> s.getName().equals("kernel-reports publish") && s.getKind() == SpanKind.PRODUCER,
                "the record's publish span");
        String traceparent = ReportPublishingTest.published(device).get(0).headers().lastHeader("traceparent") == null ? ""
                : new String(ReportPublishingTest.published(device).get(0).headers().lastHeader("traceparent").value(),
                        java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(traceparent.contains(publish.getTraceId()) && traceparent.contains(publish.getSpanId()),
                "the record carries its span: " + traceparent);
    }

    private SpanData awaitSpan(java.util.function.Predicate<SpanData> wanted, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            Optional<SpanData> found = spans.getFinishedSpanItems().stream().filter(wanted).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no " + what + " among " + spans.getFinishedSpanItems().stream().map(SpanData::getName).toList());
    }
}
