package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.localstack.MalformedGrpc;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.records.ReportRecords;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.DevicePrimitives;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import dev.jitzoo.proto.zoo.v1.PrimitivesRequest;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import dev.jitzoo.proto.zoo.v1.SimilarResponse;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
import dev.jitzoo.zoo.domain.Zoo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The zoo against real Kafka, MongoDB-wire and Redis servers, through its gRPC and HTTP edges. */
@QuarkusTest
@QuarkusTestResource(value = ZooInfraResource.class, restrictToAnnotatedClass = true)
class ZooServiceTest {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(64).addShape(32).addShape(48).build();

    @TestHTTPResource("/")
    URL base;

    private ManagedChannel channel;
    private ZooServiceGrpc.ZooServiceBlockingStub zoo;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        zoo = ZooServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void electsTheFastestReportedKernelAndServesItToTheNextDevice() throws Exception {
        DeviceProfile device = device();
        assertFalse(resolve(device).getFound(), "a new device kind starts with nothing");

        publish(report(device, "session-a", Map.of("kslow", 2.0, "kmid", 1.5)));
        ResolvedKernel first = awaitBest(device, "kmid");
        assertEquals(1.5, first.getMedianMs(), 1e-9);

        publish(report(device, "session-b", Map.of("kfast", 0.5, "kslow", 2.2)));
        ResolvedKernel second = awaitBest(device, "kfast");
        assertEquals(1, second.getReports());
        assertEquals(OP, second.getKernel().getOp());
        assertEquals(4, second.getKernel().getSchedule().getY0(), "the full kernel reference round-trips");

        HttpResponse<String> best = get("api/v1/best?fingerprint=" + device.getFingerprint() + "&shape=64,32,48");
        assertEquals(200, best.statusCode());
        assertTrue(best.body().contains("\"kernelId\":\"kfast\""), best.body());
        assertEquals("{\"fingerprint\":\"" + device.getFingerprint() + "\",\"count\":4}",
                get("api/v1/reports/count?fingerprint=" + device.getFingerprint()).body());
    }

    @Test
    void skipsGarbageAndRefusedRecordsAndKeepsConsuming() throws Exception {
        DeviceProfile device = device();
        publish(new byte[] {(byte) 0xff, 0x01, 0x02, 0x7f});
        publish(report(device, "", Map.of("kbad", 1.0)).toByteArray()); // no session id: refused
        publish(report(device, "session-ok", Map.of("kgood", 3.0)));
        awaitBest(device, "kgood");
        assertEquals("{\"fingerprint\":\"" + device.getFingerprint() + "\",\"count\":1}",
                get("api/v1/reports/count?fingerprint=" + device.getFingerprint()).body(),
                "only the valid report is stored");
    }

    @Test
    void redeliveredReportIsStoredOnce() throws Exception {
        DeviceProfile device = device();
        KernelReport report = report(device, "session-r", Map.of("kone", 1.0));
        publish(report);
        awaitBest(device, "kone");
        publish(report);
        publish(report(device, "session-s", Map.of("kone", 3.0)));
        Instant deadline = Instant.now().plusSeconds(20);
        while (resolve(device).getReports() < 2 && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
        }
        assertEquals(2, resolve(device).getReports(), "two sessions, not three reports");
        assertEquals(2.0, resolve(device).getMedianMs(), 1e-9);
    }

    /**
     * A record of one session's reports (as the gateway writes them, the device once): each report
     * is stored and elected; one refused report dead-letters its record once, and the others are
     * stored all the same.
     */
    @Test
    void aRecordOfASessionsReportsIsStoredReportByReport() throws Exception {
        OpSpec other = OP.toBuilder().setShape(0, 96).build();
        DeviceProfile device = device();
        String session = "batch-" + UUID.randomUUID();
        publish(ReportRecords.encode(device, List.of(report(device, session, Map.of("kbatch-a", 1.0)),
                report(device, other, session, Map.of("kbatch-b", 2.0)))));
        assertEquals(1, awaitBest(device, "kbatch-a").getReports());
        assertEquals(2.0, awaitBest(device, other, "kbatch-b").getMedianMs(), 1e-9);

        DeviceProfile partly = device();
        String refused = "batch-refused-" + UUID.randomUUID();
        publish(ReportRecords.encode(partly, List.of(report(partly, refused, Map.of()), report(partly, refused, Map.of("kkept", 1.0)),
                report(partly, other, refused, Map.of()))));
        awaitBest(partly, "kkept");
        assertEquals("{\"fingerprint\":\"" + partly.getFingerprint() + "\",\"count\":1}",
                get("api/v1/reports/count?fingerprint=" + partly.getFingerprint()).body(), "the valid report of the record is stored");
        Instant deadline = Instant.now().plusSeconds(30);
        String listed = get("api/v1/dlq/reports?limit=10000").body();
        while (!listed.contains(refused) && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            listed = get("api/v1/dlq/reports?limit=10000").body();
        }
        assertEquals(1, listed.split(refused, -1).length - 1, "its record dead-lettered once, not once a refused report: " + listed);
        assertTrue(listed.contains("a report ranks at least one kernel"), listed);
    }

    @Test
    void refusesMalformedRequestsWithAReasonAndKeepsServing() throws Exception {
        StatusRuntimeException noFingerprint = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                () -> zoo.resolve(ResolveRequest.newBuilder().setBackend(Backend.BACKEND_WASM).addOps(OP).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, noFingerprint.getStatus().getCode());
        assertTrue(noFingerprint.getStatus().getDescription().contains("fingerprint"));

        StatusRuntimeException garbage = MalformedGrpc.callExpectingError(channel,
                "jitzoo.zoo.v1.ZooService/Resolve", new byte[] {0x0a, (byte) 0xff, 0x01});
        assertTrue(garbage.getStatus().getDescription() != null, "the status carries a reason");

        assertFalse(resolve(device()).getFound(), "still serving after bad requests");
        HttpResponse<String> badShape = get("api/v1/best?fingerprint=x&shape=1,2,zero");
        assertEquals(400, badShape.statusCode());
        assertEquals("bad op or shape: matmul 1,2,zero", badShape.body(), "the reason, as text");
        HttpResponse<String> countWithout = get("api/v1/reports/count");
        assertEquals(400, countWithout.statusCode());
        assertEquals("fingerprint is required", countWithout.body());
        assertEquals(404, get("api/v1/best?fingerprint=nobody&shape=64,32,48").statusCode());
    }

    @Test
    void offersTheBestKernelsOfSimilarDeviceKindsAndTheKindsOwnBest() throws Exception {
        OpSpec op = OP.toBuilder().setShape(0, 65).build(); // an op of its own: other tests report on OP
        DeviceProfile a = wasmDevice(true, 16), b = wasmDevice(false, 16), arm = wasmDevice(true, 32);
        publish(report(a, op, "s-a", Map.of("k1", 1.0, "k2", 2.0)));
        publish(report(b, op, "s-b", Map.of("k2", 1.0, "k1", 1.25)));
        publish(report(arm, op, "s-arm", Map.of("k3", 0.1)));
        awaitBest(arm, op, "k3");
        awaitBest(b, op, "k2");
        awaitBest(a, op, "k1");

        SimilarResponse fresh = similar(wasmDevice(true, 16), op, 10);
        assertEquals(2, fresh.getSimilarDevices(), "a and b; the arm64 kind has other registers");
        // k1: 1·1/1 + 0.75·1/1.25 = 1.6; k2: 1·1/2 + 0.75·1/1 = 1.25
        assertEquals(List.of("k1", "k2"), fresh.getKernelsList().stream().map(k -> k.getKernel().getKernelId()).toList());
        assertEquals(1.6, fresh.getKernels(0).getScore(), 1e-9);
        assertEquals(2, fresh.getKernels(0).getDevices());
        assertEquals(op, fresh.getKernels(0).getKernel().getOp(), "the full kernel reference round-trips");
        assertFalse(fresh.getOwn().getFound(), "a new kind has no best of its own");

        SimilarResponse own = similar(a, op, 1);
        assertEquals(List.of("k2"), own.getKernelsList().stream().map(k -> k.getKernel().getKernelId()).toList(),
                "its neighbour's best, never its own timings");
        assertTrue(own.getOwn().getFound());
        assertEquals("k1", own.getOwn().getKernel().getKernelId());
        assertEquals(1, own.getOwn().getReports());

        assertEquals(0, similar(wasmDevice(true, 16), OP.toBuilder().setShape(0, 66).build(), 5).getKernelsCount(),
                "nothing until the zoo has data for the op");
        for (int bad : new int[] {0, 65}) {
            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> similar(a, op, bad));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("limit must be 1 to 64"), e.getStatus().getDescription());
        }
    }

    @Test
    void poolsMicrobenchmarksPerDeviceKindAndRefusesBadOnes() throws Exception {
        DeviceProfile x = device(), y = device();
        publish("microbench-results", microbench(x, "mb-1", Map.of(Primitive.PRIMITIVE_VECTORIZE, 2.0,
                Primitive.PRIMITIVE_UNROLL, 0.7)).toByteArray());
        publish("microbench-results", microbench(x, "mb-1", Map.of(Primitive.PRIMITIVE_VECTORIZE, 2.0)).toByteArray()); // redelivered
        publish("microbench-results", new byte[] {(byte) 0xff, 0x13}); // garbage
        publish("microbench-results", microbench(x, "mb-bad", Map.of(Primitive.PRIMITIVE_VECTORIZE, -1.0)).toByteArray());
        publish("microbench-results", microbench(x, "mb-2", Map.of(Primitive.PRIMITIVE_VECTORIZE, 0.5)).toByteArray());
        publish("microbench-results", microbench(y, "mb-3", Map.of(Primitive.PRIMITIVE_PASSES, 1.5)).toByteArray());

        Instant deadline = Instant.now().plusSeconds(30);
        Map<String, DevicePrimitives> devices = Map.of();
        while (!(devices.containsKey(y.getFingerprint()) && devices.containsKey(x.getFingerprint())
                && devices.get(x.getFingerprint()).getReports() == 2) && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
            devices = zoo.primitives(PrimitivesRequest.getDefaultInstance()).getDevicesList().stream()
                    .collect(java.util.stream.Collectors.toMap(DevicePrimitives::getFingerprint, d -> d));
        }
        DevicePrimitives px = devices.get(x.getFingerprint());
        assertEquals(2, px.getReports(), "two sessions; the redelivered and the refused ones not counted");
        assertEquals(List.of(Primitive.PRIMITIVE_UNROLL, Primitive.PRIMITIVE_VECTORIZE),
                px.getSpeedupsList().stream().map(PrimitiveSpeedup::getPrimitive).toList());
        assertEquals(0.7, px.getSpeedups(0).getSpeedup(), 1e-9);
        assertEquals(1.0, px.getSpeedups(1).getSpeedup(), 1e-9, "geometric mean of 2.0 and 0.5");
        assertEquals("node 20", px.getEngine());
        assertEquals(1.5, devices.get(y.getFingerprint()).getSpeedups(0).getSpeedup(), 1e-9);
        String http = get("api/v1/primitives").body();
        assertTrue(http.contains("{\"fingerprint\":\"" + y.getFingerprint() + "\",\"primitive\":\"passes\",\"speedup\":1."),
                http);
    }

    /**
     * A kind's microbenchmarks measure its peak, the median of its origins' latest (a liar, and an
     * origin's older record arriving late, do not move it); a Wasm latency beyond twice that peak
     * is refused for that kind, while a kind never measured may still claim it.
     */
    @Test
    void aKindsMeasuredPeakBoundsTheLatenciesItReports() throws Exception {
        DeviceProfile measured = device(), unmeasured = device();
        long now = System.currentTimeMillis();
        publishPeak(measured, "pk-1", "o-1", 40, now);
        publishPeak(measured, "pk-2", "o-2", 50, now);
        publishPeak(measured, "pk-3", "o-3", 900, now); // one origin lies
        publishPeak(measured, "pk-0", "o-1", 800, now - 60_000); // o-1's older result, late: its newer one stands
        Instant deadline = Instant.now().plusSeconds(30);
        String peak = get("api/v1/kinds/" + measured.getFingerprint() + "/peak").body();
        while (!peak.contains("\"peakGflops\":50.0") && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            peak = get("api/v1/kinds/" + measured.getFingerprint() + "/peak").body();
        }
        assertEquals("{\"fingerprint\":\"" + measured.getFingerprint() + "\",\"peakGflops\":50.0,\"ceilingGflops\":100.0}", peak);
        assertEquals("{\"fingerprint\":\"" + unmeasured.getFingerprint() + "\",\"peakGflops\":null,\"ceilingGflops\":1000.0}",
                get("api/v1/kinds/" + unmeasured.getFingerprint() + "/peak").body());

        // OP is 196,608 FLOPs: 0.0005 ms is 393 GFLOP/s, under what any device may claim, over twice this kind's peak
        publish(report(measured, "pk-lie", Map.of("kpeak-lie", 0.0005)));
        publish(report(measured, "pk-honest", Map.of("kpeak-honest", 0.005)));
        publish(report(unmeasured, "pk-other", Map.of("kpeak-lie", 0.0005)));
        awaitBest(unmeasured, "kpeak-lie");
        assertEquals(1, awaitBest(measured, "kpeak-honest").getReports(), "the impossible report is not counted");
        deadline = Instant.now().plusSeconds(30);
        String letters = get("api/v1/dlq/reports?limit=10000").body();
        while (!letters.contains("\"sessionId\":\"pk-lie\"") && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            letters = get("api/v1/dlq/reports?limit=10000").body();
        }
        assertTrue(letters.contains("ms its op takes at 100.0 GFLOP/s, the most its device can reach"), letters);
    }

    private static void publishPeak(DeviceProfile device, String session, String origin, double gflops, long atMs) throws Exception {
        publish("microbench-results", microbench(device, session, Map.of(Primitive.PRIMITIVE_VECTORIZE, 1.5)).toBuilder()
                .setOrigin(origin).setPeakGflops(gflops).setReceivedAtMs(atMs).build().toByteArray());
    }

    private static MicrobenchReport microbench(DeviceProfile device, String session, Map<Primitive, Double> speedups) {
        MicrobenchReport.Builder report = MicrobenchReport.newBuilder().setSessionId(session).setDevice(device)
                .setEngine("node 20").setReceivedAtMs(System.currentTimeMillis());
        speedups.forEach((p, s) -> report.addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitive(p).setSpeedup(s)));
        return report.build();
    }

    private SimilarResponse similar(DeviceProfile device, OpSpec op, int limit) {
        return zoo.similar(SimilarRequest.newBuilder().setDevice(device).setOp(op).setBackend(Backend.BACKEND_WASM)
                .setLimit(limit).build());
    }

    private static DeviceProfile wasmDevice(boolean relaxed, int registers) {
        return device().toBuilder().setWasm(WasmFeatures.newBuilder().setSimd(true).setRelaxedSimd(relaxed)
                .setSimdRegisters(registers)).build();
    }

    /**
     * A poisoning drill through Kafka: a third of the origins lie (a slow kernel first at a fake
     * latency, the honest best last at a fake-slow one), one of them flooding sessions, one more
     * session claims an impossible latency; the honest best is elected at its honest latency, and
     * a kind reported on by one flooding address alone counts one origin.
     */
    @Test
    void aPoisonedCrowdStillElectsTheHonestKernel() throws Exception {
        DeviceProfile device = device();
        publish(report(device, "a-impossible", Map.of("kbad", 1e-300)).toBuilder().setOrigin("a-0").build());
        for (int a = 0; a < 3; a++) {
            for (int session = 0; session < (a == 0 ? 20 : 1); session++) {
                publish(report(device, "a" + a + "-" + session, Map.of("kbad", 0.9, "kslow", 1.1, "kfast", 40.0))
                        .toBuilder().setOrigin("a-" + a).build());
            }
        }
        for (int h = 0; h < 6; h++) {
            publish(report(device, "h" + h, Map.of("kfast", 1.0 + 0.01 * h, "kmid", 1.3, "kslow", 2.0))
                    .toBuilder().setOrigin("h-" + h).build());
        }
        Instant deadline = Instant.now().plusSeconds(30);
        while (resolve(device).getOrigins() < 9 && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
        }
        ResolvedKernel best = resolve(device);
        assertEquals("kfast", best.getKernel().getKernelId());
        assertEquals(1.02, best.getMedianMs(), 0.011, "the honest latency: the liars' 40 ms is an outlier");
        assertEquals(9, best.getOrigins());
        assertEquals(16, best.getReports(), "every session that ranked it, the flood's latest 8 of 20 among them; not the impossible one");

        DeviceProfile flooded = device();
        for (int session = 0; session < 10; session++) {
            publish(report(flooded, "f" + session, Map.of("kbad", 0.9)).toBuilder().setOrigin("one-address").build());
        }
        deadline = Instant.now().plusSeconds(30);
        while (resolve(flooded).getReports() < Zoo.SESSIONS_PER_ORIGIN && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
        }
        assertEquals(Zoo.SESSIONS_PER_ORIGIN, resolve(flooded).getReports(), "ten sessions from one address: its latest 8 count");
        assertEquals(1, resolve(flooded).getOrigins(), "one origin, never a settled kind (nor, at the production minimum of 3, an election)");
    }

    /**
     * Dead letters can be inspected (with why each was refused) and replayed: a valid report that
     * was dead-lettered is stored by the replay, once however often it is replayed.
     */
    @Test
    void deadLettersAreListedWithTheirReasonAndReplayedIntoTheZooOnce() throws Exception {
        DeviceProfile device = device();
        publish(report(device, "", Map.of("kbad", 1.0)).toByteArray()); // no session id: refused, dead-lettered
        String session = "dlq-" + UUID.randomUUID();
        publish("kernel-reports-dlq", report(device, session, Map.of("kreplayed", 1.0)).toByteArray());
        Instant deadline = Instant.now().plusSeconds(30);
        String listed = get("api/v1/dlq/reports?limit=10000").body();
        while (!(listed.contains(session) && listed.contains("session id is required")) && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            listed = get("api/v1/dlq/reports?limit=10000").body();
        }
        assertTrue(listed.contains("\"sessionId\":\"" + session + "\""), listed);
        assertTrue(listed.contains("\"reason\":\"session id is required\""), listed);

        double waiting = awaitMetric("jitzoo_zoo_dlq_depth{channel=\"reports\"}", depth -> depth >= 2);
        assertTrue(waiting >= 2, "both letters wait, read " + waiting);

        HttpResponse<String> replayed = post("api/v1/dlq/reports/replay");
        assertEquals(200, replayed.statusCode(), replayed.body());
        awaitBest(device, "kreplayed");
        post("api/v1/dlq/reports/replay");
        Thread.sleep(1000);
        assertEquals("{\"fingerprint\":\"" + device.getFingerprint() + "\",\"count\":1}",
                get("api/v1/reports/count?fingerprint=" + device.getFingerprint()).body(), "replayed twice, stored once");

        assertEquals(400, get("api/v1/dlq/nonsense").statusCode());
        assertEquals(400, get("api/v1/dlq/reports?limit=0").statusCode());
    }

    /** What an operator watches: reports ingested and refused by reason, elections changed, cache lookups, ingest lag. */
    @Test
    void countsIngestRefusalsElectionsAndCacheLookups() throws Exception {
        DeviceProfile device = device();
        publish(report(device, "m-1", Map.of("kmetric", 1.0)));
        awaitBest(device, "kmetric");
        publish(report(device, "m-2", Map.of("kmetric", 1e-300)).toByteArray()); // faster than any device: refused
        Instant deadline = Instant.now().plusSeconds(30);
        String metrics = get("q/metrics").body();
        while (!metrics.contains("reason=\"impossible_latency\"") && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            metrics = get("q/metrics").body();
        }
        for (String name : List.of("jitzoo_zoo_reports_ingested_total", "jitzoo_zoo_elections_changed_total",
                "jitzoo_zoo_reports_refused_total{reason=\"impossible_latency\"", "jitzoo_zoo_cache_lookups_total{result=\"hit\"",
                "jitzoo_zoo_cache_lookups_total{result=\"miss\"", "jitzoo_zoo_ingest_lag_seconds_count", "jitzoo_zoo_cache_stale_keys",
                "jitzoo_zoo_election_windows", "jitzoo_zoo_dlq_depth{channel=\"microbench\"")) {
            assertTrue(metrics.contains(name), name + " in\n" + metrics.lines().filter(l -> l.startsWith("jitzoo")).toList());
        }
    }

    /** Polls a metric (its exact name and labels) until {@code done} holds of it, for up to 30 s; returns its last value. */
    private double awaitMetric(String series, java.util.function.DoublePredicate done) throws Exception {
        Instant deadline = Instant.now().plusSeconds(30);
        double value = Double.NaN;
        while (Instant.now().isBefore(deadline)) {
            value = get("q/metrics").body().lines().filter(l -> l.startsWith(series + " ")).findFirst()
                    .map(l -> Double.parseDouble(l.substring(series.length() + 1))).orElse(Double.NaN);
            if (done.test(value)) {
                break;
            }
            Thread.sleep(500);
        }
        return value;
    }

    private static DeviceProfile device() {
        return DeviceProfile.newBuilder().setFingerprint("test-" + UUID.randomUUID()).build();
    }

    private ResolvedKernel resolve(DeviceProfile device) {
        return resolve(device, OP);
    }

    private ResolvedKernel resolve(DeviceProfile device, OpSpec op) {
        return zoo.resolve(ResolveRequest.newBuilder().setDevice(device).setBackend(Backend.BACKEND_WASM)
                .addOps(op).build()).getKernels(0);
    }

    private ResolvedKernel awaitBest(DeviceProfile device, String kernelId) throws InterruptedException {
        return awaitBest(device, OP, kernelId);
    }

    private ResolvedKernel awaitBest(DeviceProfile device, OpSpec op, String kernelId) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        ResolvedKernel resolved = resolve(device, op);
        while (!(resolved.getFound() && resolved.getKernel().getKernelId().equals(kernelId))) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("zoo never elected " + kernelId + "; last answer: " + resolved);
            }
            Thread.sleep(100);
            resolved = resolve(device, op);
        }
        return resolved;
    }

    private static KernelReport report(DeviceProfile device, String session, Map<String, Double> timings) {
        return report(device, OP, session, timings);
    }

    private static KernelReport report(DeviceProfile device, OpSpec op, String session, Map<String, Double> timings) {
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId(session).setDevice(device)
                .setOp(op).setBackend(Backend.BACKEND_WASM).setReceivedAtMs(System.currentTimeMillis());
        timings.entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> report.addRanked(
                Measurement.newBuilder().setMedianMs(e.getValue()).setSamples(5).setKernel(KernelRef.newBuilder()
                        .setKernelId(e.getKey()).setBackend(Backend.BACKEND_WASM).setOp(op).setAbiVersion(1)
                        .setSchedule(Schedule.newBuilder().setY0(4).setX0(8).setVectorize(true)))));
        return report.build();
    }

    private static void publish(KernelReport report) throws Exception {
        publish(report.toByteArray());
    }

    private static void publish(byte[] payload) throws Exception {
        publish("kernel-reports", payload);
    }

    private static void publish(String topic, byte[] payload) throws Exception {
        try (var producer = new KafkaProducer<>(Map.<String, Object>of("bootstrap.servers", TestInfra.kafkaBootstrap()),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, "test", payload)).get(10, TimeUnit.SECONDS);
        }
    }

    /** The admin token the test profile configures. */
    static final String ADMIN = "test-admin-token";

    private HttpResponse<String> post(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base.toString() + path)).header("Authorization", "Bearer " + ADMIN)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base.toString() + path)).header("Authorization", "Bearer " + ADMIN).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The admin surfaces answer only the admin token's holder: no token or a wrong one is 401, a
     * cross-site form's text/plain POST is 415 even with the cookie, the dashboard's link sets an
     * HttpOnly, SameSite=Strict cookie and drops the token from the address; health stays open.
     */
    @Test
    void adminSurfacesNeedTheTokenAndPostsTakeJsonOnly() throws Exception {
        URI dlq = URI.create(base.toString() + "api/v1/dlq/reports");
        assertEquals(401, http.send(HttpRequest.newBuilder(dlq).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(dlq).header("Authorization", "Bearer nope").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(401, wrong.statusCode());
        assertTrue(wrong.body().contains("admin token"), wrong.body());
        assertEquals(401, http.send(HttpRequest.newBuilder(URI.create(base.toString() + "dashboard/")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(200, get("api/v1/dlq/reports").statusCode());

        HttpResponse<String> link = http.send(HttpRequest.newBuilder(URI.create(base.toString() + "dashboard/?token=" + ADMIN)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(303, link.statusCode());
        assertEquals("/dashboard/", link.headers().firstValue("Location").orElseThrow());
        String cookie = link.headers().firstValue("Set-Cookie").orElseThrow();
        assertTrue(cookie.toLowerCase(java.util.Locale.ROOT).contains("httponly") && cookie.contains("SameSite=Strict"), cookie);
        String pair = cookie.substring(0, cookie.indexOf(';'));
        assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base.toString() + "dashboard/")).header("Cookie", pair).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        HttpResponse<String> form = http.send(HttpRequest.newBuilder(URI.create(base.toString() + "api/v1/dlq/reports/replay"))
                .header("Cookie", pair).header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(415, form.statusCode(), "a cross-site form's POST: " + form.body());
        assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base.toString() + "q/health/ready")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
    }
}
