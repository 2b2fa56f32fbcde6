package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.gateway.session.SessionStore;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.Resume;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.records.ReportRecords;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A report's way to the broker: acknowledged only once the record is on {@code kernel-reports},
 * keyed by the device's fingerprint, as the zoo reads it; every report of a page sending them all
 * at once, once each; with traces off, no trace context in its headers.
 */
@QuarkusTest
@QuarkusTestResource(value = GatewayInfraResource.class, restrictToAnnotatedClass = true)
class ReportPublishingTest {

    static final int OPS = 16;

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    SessionStore store;

    @Test
    void everyAcknowledgedReportIsOnTheTopicOnceKeyedByItsDevice() throws Exception {
        String device = "publish-" + UUID.randomUUID();
        String token = keep(store, device, OPS);
        try (TestSocket page = new TestSocket(endpoint)) {
            resume(page, token);
            for (int i = 0; i < OPS; i++) {
                report(page, i);
            }
            Set<OpSpec> acked = new java.util.HashSet<>();
            for (int i = 0; i < OPS; i++) {
                acked.add(page.await(ServerFrame::hasReportAck, "report acknowledgement " + (i + 1)).getReportAck().getOp());
            }
            assertEquals(OPS, acked.size(), "one acknowledgement per op");
        }
        List<KernelReport> published = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : published(device)) {
            published.addAll(ReportRecords.decode(record.value()));
            // traces are off here (TracingTest turns them on): no span is made for a record, none travels with it
            assertEquals(List.of(), Arrays.stream(record.headers().toArray()).map(Header::key).toList(), "no trace context");
        }
        assertEquals(OPS, published.size(), "each acknowledged report on the topic once");
        Set<String> kernels = new java.util.HashSet<>();
        published.forEach(r -> {
            assertEquals(device, r.getDevice().getFingerprint());
            kernels.add(r.getRanked(0).getKernel().getKernelId());
        });
        assertEquals(OPS, kernels.size(), "every op's report, none twice");
        assertTrue(kernels.contains("k-0") && kernels.contains("k-" + (OPS - 1)), kernels.toString());
    }

    @Test
    void framesSentBehindAResumeAreReadAfterItsAnswer() throws Exception {
        String device = "behind-resume-" + UUID.randomUUID();
        String token = keep(store, device, 2);
        try (TestSocket page = new TestSocket(endpoint)) {
            // no wait for Resumed: the Resume's answer waits on the store, and the frames behind it wait for that answer
            page.send(ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken(token).setCredits(0)));
            report(page, 0);
            report(page, 1);
            List<ServerFrame> answers = new ArrayList<>();
            Set<OpSpec> acked = new java.util.HashSet<>();
            for (ServerFrame frame; acked.size() < 2 && (frame = page.next(Duration.ofSeconds(10))) != null; ) {
                answers.add(frame);
                if (frame.hasReportAck()) {
                    acked.add(frame.getReportAck().getOp());
                }
            }
            assertTrue(answers.get(0).hasResumed(), "Resumed first, not a refusal of a report before the session: " + answers);
            assertTrue(answers.stream().noneMatch(ServerFrame::hasError), answers.toString());
            assertEquals(Set.of(op(0), op(1)), acked, answers.toString());
        }
    }

    /** The records on {@code kernel-reports} keyed by the device, read from the topic's start (waiting up to 20 s for one). */
    static List<ConsumerRecord<String, byte[]>> published(String device) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> topic = consumer()) {
            topic.subscribe(List.of("kernel-reports"));
            long deadline = System.currentTimeMillis() + 20_000;
            for (int quiet = 0; System.currentTimeMillis() < deadline && (records.isEmpty() || quiet < 2); ) {
                int before = records.size();
                for (ConsumerRecord<String, byte[]> record : topic.poll(Duration.ofMillis(500))) {
                    if (device.equals(record.key())) {
                        records.add(record);
                    }
                }
                quiet = records.size() == before ? quiet + 1 : 0;
            }
        }
        return records;
    }

    private static KafkaConsumer<String, byte[]> consumer() {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfra.kafkaBootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "report-publishing-test-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        return new KafkaConsumer<>(config);
    }

    // ---- a kept session, resumed: its kernels issued, so its reports are accepted ----

    static OpSpec op(int i) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(8 + i).addShape(8).addShape(8).build();
    }

    /** Keeps a session of {@code ops} MatMuls, each issued kernel {@code k-<i>}, for the device; returns its resume token. */
    static String keep(SessionStore store, String device, int ops) {
        Hello.Builder hello = Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint(device));
        List<KernelRef> issued = new ArrayList<>();
        for (int i = 0; i < ops; i++) {
            hello.addOps(op(i));
            issued.add(KernelRef.newBuilder().setKernelId("k-" + i).setOp(op(i)).setSchedule(Schedule.newBuilder().setX0(1)).build());
        }
        String token = UUID.randomUUID().toString();
        store.create(token, "session-" + device, hello.build(), issued, Double.NaN, "public", "").await().indefinitely();
        return token;
    }

    static void resume(TestSocket socket, String token) throws Exception {
        socket.send(ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken(token).setCredits(0)));
        socket.await(ServerFrame::hasResumed, "Resumed");
    }

    static void report(TestSocket socket, int op) throws Exception {
        socket.send(ClientFrame.newBuilder().setReport(Report.newBuilder().setOp(op(op))
                .addRanked(RankedKernel.newBuilder().setKernelId("k-" + op).setMedianMs(0.5).setSamples(5))));
    }
}
