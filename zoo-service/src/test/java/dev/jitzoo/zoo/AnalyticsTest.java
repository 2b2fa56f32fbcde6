package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The analytics API against the real stack: two device kinds report on an op of this test's own
 * (three origins for one, one for the other), then every endpoint and export is read back, and
 * bad query parameters get clear 400s.
 */
@QuarkusTest
@QuarkusTestResource(value = ZooInfraResource.class, restrictToAnnotatedClass = true)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AnalyticsTest {

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    /** An op no other test reports on: its analytics are this test's alone. */
    private final OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(24).addShape(40).addShape(8 + (int) (Math.random() * 1000) * 8).build();
    private final String settled = "kind-a-" + run;
    private final String single = "kind-b-" + run;
    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    void report() throws Exception {
        // two sessions start from the safe default (kslow), the third from the zoo's kfast
        for (int h = 0; h < 3; h++) {
            KernelReport report = report(settled, "a" + h, "origin-" + h, Map.of("kfast", 1.0 + 0.01 * h, "kslow", 2.0));
            publish(report.toBuilder().setInitial(report.getRanked(h < 2 ? 1 : 0)).setInitialFromZoo(h == 2).build());
        }
        publish(report(single, "b0", "origin-b", Map.of("kslow", 1.5, "kfast", 1.8)));
        Instant deadline = Instant.now().plusSeconds(30);
        while (!(get("api/v1/kinds/" + settled + "/elections").body().contains("\"origins\":3")
                && get("api/v1/kinds/" + single + "/elections").body().contains("kslow")) && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
        }
    }

    @Test
    void kindsSayHowManySessionsAndOriginsReported() throws Exception {
        JsonNode kinds = read("api/v1/kinds?limit=10000");
        JsonNode a = find(kinds, "fingerprint", settled);
        assertEquals(3, a.get("sessions").asInt());
        assertEquals(3, a.get("origins").asInt());
        assertEquals(1, a.get("ops").asInt());
        assertTrue(a.get("lastMs").asLong() >= a.get("firstMs").asLong());
        assertEquals(1, find(kinds, "fingerprint", single).get("origins").asInt());
    }

    @Test
    void aKindsElectionsNameTheKernelAndItsEvidence() throws Exception {
        JsonNode elections = read("api/v1/kinds/" + settled + "/elections");
        assertEquals(1, elections.size());
        JsonNode e = elections.get(0);
        assertEquals("kfast", e.get("kernelId").asText());
        assertEquals(1.01, e.get("medianMs").asDouble(), 1e-9);
        assertEquals(3, e.get("origins").asInt());
        assertEquals(2.0 / 1.01, e.get("speedupVsInitial").asDouble(), 1e-9, "the median of 2/1, 2/1.01 and 1.02/1.02");
        assertEquals((2.0 / 1.0 + 2.0 / 1.01) / 2, e.get("speedupVsSafeDefault").asDouble(), 1e-9, "the two that started from it");
        assertTrue(read("api/v1/kinds/" + single + "/elections").get(0).get("speedupVsInitial").isNull(), "no session timed its initial");
        assertEquals("wasm", e.get("backend").asText());
        assertTrue(e.get("op").asText().startsWith("matmul"), e.toString());
        assertEquals(0, read("api/v1/kinds/no-such-kind/elections").size());
    }

    @Test
    void coverageCountsKindsAndSettledOnesPerOp() throws Exception {
        JsonNode mine = coverage(3);
        assertEquals(2, mine.get("kinds").asInt());
        assertEquals(1, mine.get("settled").asInt(), "three origins settle a kind, one does not");
        assertEquals(2, coverage(1).get("settled").asInt());
    }

    @Test
    void volumeCountsSessionsPerBucket() throws Exception {
        JsonNode volume = read("api/v1/volume?bucket=minute&hours=1");
        int sessions = 0;
        for (JsonNode bucket : volume) {
            assertEquals(0, bucket.get("fromMs").asLong() % 60_000, "minute buckets");
            sessions += bucket.get("sessions").asInt();
        }
        assertTrue(sessions >= 4, volume.toString());
    }

    @Test
    void winRatesSayHowOftenEachKernelWasRankedFirst() throws Exception {
        JsonNode rates = read("api/v1/win-rates?op=matmul&shape=" + shape());
        JsonNode fast = find(rates, "kernelId", "kfast");
        assertEquals(4, fast.get("ranked").asInt());
        assertEquals(3, fast.get("first").asInt());
        assertEquals(0.75, fast.get("rate").asDouble(), 1e-9);
        assertEquals(0.25, find(rates, "kernelId", "kslow").get("rate").asDouble(), 1e-9);
    }

    @Test
    void exportsEveryMeasurementAsCsvAndJsonLines() throws Exception {
        HttpResponse<String> csv = get("api/v1/export/measurements?format=csv&fingerprint=" + settled);
        assertEquals(200, csv.statusCode());
        assertTrue(csv.headers().firstValue("content-type").orElse("").startsWith("text/csv"));
        List<String> lines = csv.body().lines().toList();
        assertEquals("fingerprint,key,session_id,origin,rank,kernel_id,median_ms,samples,received_at_ms", lines.get(0));
        assertEquals(1 + 6, lines.size(), "three sessions, two kernels each");
        assertTrue(lines.get(1).startsWith(settled + ","), lines.get(1));

        HttpResponse<String> jsonl = get("api/v1/export/measurements?format=jsonl&fingerprint=" + single);
        List<JsonNode> rows = jsonl.body().lines().map(line -> {
            try {
                return json.readTree(line);
            } catch (Exception e) {
                throw new AssertionError(line, e);
            }
        }).toList();
        assertEquals(2, rows.size());
        assertEquals("origin-b-" + run, rows.get(0).get("origin").asText());
        assertEquals(0, rows.get(0).get("rank").asInt());
    }

    @Test
    void badQueryParametersGetClear400s() throws Exception {
        Map<String, String> bad = Map.of(
                "api/v1/volume?bucket=week", "bucket must be minute, hour or day, got week",
                "api/v1/volume?hours=0", "hours must be 1 to 8784, got 0",
                "api/v1/kinds?limit=0", "limit must be 1 to 10000, got 0",
                "api/v1/coverage?settledOrigins=0", "settledOrigins must be 1 to 1000000, got 0",
                "api/v1/export/measurements?format=xml", "format must be csv or jsonl, got xml",
                "api/v1/win-rates?op=matmul", "shape is required, e.g. shape=128,256,96",
                "api/v1/win-rates?op=pool&shape=1,2,3", "bad op or shape: pool 1,2,3",
                "api/v1/win-rates?op=conv&shape=1,2,3", "op: OP_KIND_CONV needs 7 dimensions, got 3");
        for (Map.Entry<String, String> query : bad.entrySet()) {
            HttpResponse<String> response = get(query.getKey());
            assertEquals(400, response.statusCode(), query.getKey());
            assertEquals(query.getValue(), response.body(), query.getKey());
        }
    }

    private JsonNode coverage(int settledOrigins) throws Exception {
        return find(read("api/v1/coverage?settledOrigins=" + settledOrigins), "opKey", "matmul|" + shape().replace(",", "x") + "|wasm");
    }

    private String shape() {
        return op.getShape(0) + "," + op.getShape(1) + "," + op.getShape(2);
    }

    private static JsonNode find(JsonNode array, String field, String value) {
        for (JsonNode node : array) {
            if (value.equals(node.get(field).asText())) {
                return node;
            }
        }
        throw new AssertionError("no " + field + "=" + value + " in " + array);
    }

    private JsonNode read(String path) throws Exception {
        HttpResponse<String> response = get(path);
        assertEquals(200, response.statusCode(), path + ": " + response.body());
        return json.readTree(response.body());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base.toString() + path)).header("Authorization", "Bearer " + ZooServiceTest.ADMIN).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private KernelReport report(String fingerprint, String session, String origin, Map<String, Double> timings) {
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId(session + "-" + run).setOrigin(origin + "-" + run)
                .setDevice(DeviceProfile.newBuilder().setFingerprint(fingerprint)).setOp(op).setBackend(Backend.BACKEND_WASM)
                .setReceivedAtMs(System.currentTimeMillis());
        timings.entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> report.addRanked(Measurement.newBuilder()
                .setMedianMs(e.getValue()).setSamples(5)
                .setKernel(KernelRef.newBuilder().setKernelId(e.getKey()).setBackend(Backend.BACKEND_WASM).setOp(op))));
        return report.build();
    }

    private static void publish(KernelReport report) throws Exception {
        try (var producer = new KafkaProducer<>(Map.<String, Object>of("bootstrap.servers", TestInfra.kafkaBootstrap()),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>("kernel-reports", "test", report.toByteArray())).get(10, TimeUnit.SECONDS);
        }
    }
}
