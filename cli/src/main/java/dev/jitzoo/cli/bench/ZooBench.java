package dev.jitzoo.cli.bench;

import static dev.jitzoo.cli.bench.BenchReport.round;
import static dev.jitzoo.cli.bench.BenchReport.say;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import dev.jitzoo.cli.suite.ServiceLauncher;
import dev.jitzoo.cli.suite.Suite;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.bson.Document;

/**
 * {@code ./jitzoo bench zoo}, run against a stack (the private one BenchCli starts): reports
 * published to Kafka as the gateway would, and the zoo timed as it ingests and elects them, as it
 * answers Resolve at a steady rate (beside a bare gRPC server under the same load, and the store
 * beside its ingest), and as it turns one report into an election; then a poisoning
 * drill at growing attacker shares, and an adversary drill: one origin flooding a kind its honest
 * devices elected, and forging its kind's peak. The stack's zoo serves elections of 3 origins or
 * more, as in production. Prints a table, or one JSON line with {@code --json}.
 */
public final class ZooBench {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(128).addShape(768).addShape(768).build();
    /** True latencies of the kernels every honest device times, k0 the fastest. */
    private static final double[] TRUE_MS = {1.00, 1.08, 1.20, 1.35, 1.60};

    private final String zooHttp;
    private final KafkaProducer<String, byte[]> producer;
    private final ManagedChannel channel;
    private final HttpClient http = HttpClient.newHttpClient();
    private final Random random = new Random(7);
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private ZooBench(String zooHttp, String kafka) {
        this.zooHttp = zooHttp;
        this.producer = new KafkaProducer<>(Map.of("bootstrap.servers", kafka, "acks", "all", "linger.ms", 5,
                "batch.size", 262_144), new StringSerializer(), new ByteArraySerializer());
        URI zoo = URI.create(zooHttp);
        this.channel = ManagedChannelBuilder.forAddress(zoo.getHost(), zoo.getPort()).usePlaintext().build();
    }

    public static void main(String[] args) throws Exception {
        BenchArgs argv = BenchArgs.of(args);
        boolean json = argv.json();
        int reports = argv.count("--reports", 5000);
        int rate = argv.count("--rate", 1000);
        int warmUp = argv.count("--warmup-reports", 20_000);
        int warm = argv.count("--warm-reports", 20_000);
        String zooHttp = System.getenv().getOrDefault("JITZOO_ZOO_HTTP", "http://127.0.0.1:8083");
        ZooBench bench = new ZooBench(zooHttp, ServiceLauncher.here().kafkaBootstrap());
        try {
            Map<String, Object> figures = new LinkedHashMap<>();
            String mongo = System.getenv().getOrDefault("JITZOO_MONGO_URI", "");
            figures.put("store", mongo.isBlank() ? "embedded MongoDB-wire server (H2), Redis cache" : "MongoDB, Redis cache");
            figures.put("reports", reports);
            bench.ingest(reports, warmUp, warm, figures);
            bench.storeAlone(reports, figures);
            bench.reportToElected(100, figures);
            bench.resolveLoad(bench.channel, "resolve", rate, 3, 10, figures);
            bench.bareResolveLoad(rate, 3, 10, figures);
            bench.poisoning(figures);
            bench.adversary(1000, figures);
            BenchReport.print(figures, json, BenchReport::list);
        } finally {
            bench.producer.close();
            bench.channel.shutdownNow();
        }
    }

    /**
     * Publishes honest reports over 200 device kinds, and times the zoo until it ingested them all:
     * first on the zoo as it started (its JIT cold); then, after {@code warmUp} more reports on kinds
     * of their own, {@code warm} reports on 200 kinds of theirs, as a zoo in service ingests.
     */
    private void ingest(int reports, int warmUp, int warm, Map<String, Object> figures) throws Exception {
        say("publishing " + reports + " reports over 200 device kinds to the zoo as it started...");
        double[] cold = timedIngest(reports, this::kind);
        figures.put("publish_reports_per_s", Math.round(reports / cold[0]));
        figures.put("ingest_reports_per_s", Math.round(reports / cold[1]));
        figures.put("ingest_s", round(cold[1], 1));
        say("  ingested in " + round(cold[1], 1) + " s");
        say("warm-up: " + warmUp + " more reports over 200 other kinds (not timed)...");
        timedIngest(warmUp, i -> kind(i) + "-warm-up");
        say("publishing " + warm + " reports over 200 new kinds to the warm zoo...");
        double[] warmed = timedIngest(warm, i -> kind(i) + "-warm");
        figures.put("warm_ingest_reports_per_s", Math.round(warm / warmed[1]));
        say("  ingested in " + round(warmed[1], 1) + " s");
    }

    /** Seconds to publish {@code reports} over 200 kinds ({@code kind} of 0..199), and until the zoo ingested them all. */
    private double[] timedIngest(int reports, java.util.function.IntFunction<String> kind) throws Exception {
        double before = ingested();
        long t0 = System.nanoTime();
        for (int i = 0; i < reports; i++) {
            String k = kind.apply(i % 200);
            producer.send(new ProducerRecord<>("kernel-reports", k, honest(k, "s" + k + i, "o" + i).toByteArray()));
        }
        producer.flush();
        double published = (System.nanoTime() - t0) / 1e9;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
        double done;
        while ((done = ingested() - before) < reports) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the zoo ingested " + (int) done + " of " + reports + " reports in 15 minutes");
            }
            Thread.sleep(50);
        }
        return new double[] {published, (System.nanoTime() - t0) / 1e9};
    }

    /**
     * The store alone, for comparison with ingest: the documents the zoo just stored, written again
     * as the zoo writes them (unordered inserts of a poll's 2,000, into a scratch collection with the
     * zoo's indexes) and timed; then the collection is dropped. The zoo's ingest at the store's pace
     * would be {@code speedup_vs_store} 1.
     */
    private void storeAlone(int documents, Map<String, Object> figures) {
        say("the store alone: " + documents + " of the zoo's documents written again...");
        String database = System.getenv().getOrDefault("JITZOO_ZOO_DATABASE", "jitzoo");
        try (MongoClient mongo = MongoClients.create(ServiceLauncher.here().mongoUri())) {
            MongoDatabase db = mongo.getDatabase(database);
            List<Document> docs = new ArrayList<>();
            List<String> kinds = IntStream.range(0, 200).mapToObj(this::kind).toList();
            db.getCollection("reports").find(Filters.in("fingerprint", kinds)).limit(documents).forEach(d -> {
                d.remove("_id");
                docs.add(d);
            });
            MongoCollection<Document> scratch = db.getCollection("bench_store_" + run);
            for (Document index : db.getCollection("reports").listIndexes()) { // the zoo's, as the store keeps them
                if (!"_id_".equals(index.getString("name"))) {
                    scratch.createIndex(index.get("key", Document.class), new IndexOptions().unique(index.getBoolean("unique", false)));
                }
            }
            try {
                long t0 = System.nanoTime();
                for (int from = 0; from < docs.size(); from += 2000) {
                    scratch.insertMany(docs.subList(from, Math.min(docs.size(), from + 2000)), new InsertManyOptions().ordered(false));
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                long perSecond = Math.round(docs.size() / seconds);
                figures.put("store_documents_per_s", perSecond);
                figures.put("speedup_vs_store", round(((Number) figures.get("ingest_reports_per_s")).doubleValue() / perSecond, 3));
                figures.put("warm_speedup_vs_store", round(((Number) figures.get("warm_ingest_reports_per_s")).doubleValue() / perSecond, 3));
                say("  " + docs.size() + " documents in " + round(seconds, 1) + " s");
            } finally {
                scratch.drop();
            }
        }
    }

    /**
     * A new device kind at a time: two origins' reports (an election needs three), then how long
     * from the third one's publishing until Resolve answers its kernel.
     */
    private void reportToElected(int samples, Map<String, Object> figures) throws Exception {
        say("report to election, " + samples + " new device kinds one after another...");
        List<Double> ms = new ArrayList<>();
        ZooServiceGrpc.ZooServiceBlockingStub zoo = ZooServiceGrpc.newBlockingStub(channel);
        for (int i = 0; i < samples; i++) {
            String kind = "bench-new-" + run + "-" + i;
            for (int seed = 0; seed < 2; seed++) {
                producer.send(new ProducerRecord<>("kernel-reports", kind, honest(kind, "p" + seed + "-" + i, "p" + seed + "-" + i).toByteArray())).get();
            }
            long t0 = System.nanoTime();
            producer.send(new ProducerRecord<>("kernel-reports", kind, honest(kind, "n" + i, "n" + i).toByteArray())).get();
            while (!resolve(zoo, kind).getFound()) {
                if (System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(30)) {
                    throw new IllegalStateException("no election for " + kind + " within 30 s");
                }
                Thread.sleep(1);
            }
            ms.add((System.nanoTime() - t0) / 1e6);
        }
        figures.put("report_to_elected_p50_ms", round(Percentiles.rankAbove(ms, 0.5), 1));
        figures.put("report_to_elected_p99_ms", round(Percentiles.rankAbove(ms, 0.99), 1));
    }

    /**
     * Resolve at a steady rate over the kinds ingested: the first {@code warmUp} seconds warm both
     * JVMs' code paths and are not counted; then latency quantiles over {@code seconds}, and the rate reached.
     */
    private void resolveLoad(ManagedChannel to, String name, int perSecond, int warmUp, int seconds, Map<String, Object> figures)
            throws Exception {
        say(name.replace('_', ' ') + " at " + perSecond + " requests/s for " + warmUp + " s of warm-up, then " + seconds + " s measured...");
        ZooServiceGrpc.ZooServiceFutureStub zoo = ZooServiceGrpc.newFutureStub(to);
        ConcurrentLinkedQueue<Double> ms = new ConcurrentLinkedQueue<>();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger answered = new AtomicInteger();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger sent = new AtomicInteger();
        long periodNanos = 1_000_000_000L / perSecond;
        long unmeasured = (long) perSecond * warmUp;
        long total = unmeasured + (long) perSecond * seconds;
        long start = System.nanoTime();
        timer.scheduleAtFixedRate(() -> {
            if (sent.get() >= total) {
                return;
            }
            int i = sent.getAndIncrement();
            long t0 = System.nanoTime();
            var call = zoo.withDeadlineAfter(5, TimeUnit.SECONDS).resolve(request(kind(i % 200)));
            call.addListener(() -> {
                try {
                    call.get();
                    if (i >= unmeasured) {
                        ms.add((System.nanoTime() - t0) / 1e6);
                    }
                } catch (Exception e) {
                    failed.incrementAndGet();
                }
                answered.incrementAndGet();
            }, Runnable::run);
        }, 0, periodNanos, TimeUnit.NANOSECONDS);
        while (answered.get() < total && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(warmUp + seconds + 10)) {
            Thread.sleep(50);
        }
        timer.shutdownNow();
        double elapsed = (System.nanoTime() - start) / 1e9 - warmUp;
        List<Double> all = new ArrayList<>(ms);
        figures.put(name + "_requests_per_s", Math.round(all.size() / elapsed));
        figures.put(name + "_p50_ms", round(Percentiles.rankAbove(all, 0.5), 2));
        figures.put(name + "_p99_ms", round(Percentiles.rankAbove(all, 0.99), 2));
        figures.put(name + "_failed", failed.get());
    }

    /**
     * The same Resolve load against a bare gRPC-Java server in a JVM of its own ({@link
     * BareResolveServer}), on the same machine beside the same stack: what gRPC alone costs here.
     */
    private void bareResolveLoad(int perSecond, int warmUp, int seconds, Map<String, Object> figures) throws Exception {
        Process server = new ProcessBuilder(Suite.javaMain(BareResolveServer.class, List.of("-Xmx256m")))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ManagedChannel bare = null;
        try {
            String port = new BufferedReader(new InputStreamReader(server.getInputStream())).readLine();
            if (port == null) {
                throw new IllegalStateException("the bare gRPC server did not start");
            }
            bare = ManagedChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(port.trim())).usePlaintext().build();
            resolveLoad(bare, "bare_grpc_resolve", perSecond, warmUp, seconds, figures);
        } finally {
            if (bare != null) {
                bare.shutdownNow();
            }
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * For each attacker share: 30 honest origins and attackers from distinct origins (one of them
     * flooding 50 sessions) report on a new device kind; which kernel is elected. Then a kind only
     * a flooding address reports on: how many origins it counts.
     */
    private void poisoning(Map<String, Object> figures) throws Exception {
        say("poisoning drill...");
        ZooServiceGrpc.ZooServiceBlockingStub zoo = ZooServiceGrpc.newBlockingStub(channel);
        Map<String, Boolean> honestWins = new LinkedHashMap<>();
        for (double share : new double[] {0.1, 0.2, 0.3, 0.33, 0.4, 0.5}) {
            String kind = "bench-poison-" + run + "-" + share;
            int attackers = (int) Math.round(30 * share / (1 - share));
            for (int a = 0; a < attackers; a++) {
                for (int s = 0; s < (a == 0 ? 50 : 1); s++) {
                    send(kind, attacker(kind, "a" + a + "-" + s, "a" + a));
                }
            }
            for (int h = 0; h < 30; h++) {
                send(kind, honest(kind, "h" + h, "h" + h));
            }
            producer.flush();
            ResolvedKernel best = awaitOrigins(zoo, kind, 30 + attackers);
            boolean honest = best.getKernel().getKernelId().equals("k0");
            honestWins.put(String.valueOf(share), honest);
            say(String.format("  %.0f%% attacker origins (%d of %d): elected %s", 100 * share, attackers, 30 + attackers,
                    best.getKernel().getKernelId()));
        }
        double held = 0;
        for (Map.Entry<String, Boolean> e : honestWins.entrySet()) {
            if (!e.getValue()) {
                break;
            }
            held = Double.parseDouble(e.getKey());
        }
        figures.put("honest_elected_by_attacker_share", honestWins);
        figures.put("honest_elected_up_to_attacker_share", held);
    }

    /**
     * The adversary drill: five honest origins elect a kind's kernel; then one origin floods
     * {@code sessions} sessions ranking its own kernel first at 0.9 times the honest best, and the
     * kind's election is read again. A kind only that origin reports on is never served. One
     * origin then sends a microbenchmark claiming a peak of 1e-6 GFLOP/s for another kind, whose
     * honest devices report as the gateway would (stamped with the ceiling Resolve implies): is the
     * forged peak applied, and is any honest report dead-lettered?
     */
    void adversary(int sessions, Map<String, Object> figures) throws Exception {
        say("adversary drill: one origin floods " + sessions + " sessions, then forges a kind's peak...");
        ZooServiceGrpc.ZooServiceBlockingStub zoo = ZooServiceGrpc.newBlockingStub(channel);
        String kind = "bench-adversary-" + run;
        for (int h = 0; h < 5; h++) {
            send(kind, honest(kind, "ah" + h, "ah" + h));
        }
        producer.flush();
        ResolvedKernel before = awaitOrigins(zoo, kind, 5);
        double seen = handled();
        for (int s = 0; s < sessions; s++) {
            send(kind, flooder(kind, "af" + s));
        }
        String alone = "bench-alone-" + run;
        for (int s = 0; s < 50; s++) {
            send(alone, flooder(alone, "al" + s));
        }
        producer.flush();
        awaitHandled(seen, sessions + 50);
        ResolvedKernel after = resolve(zoo, kind);
        boolean honest = before.getKernel().getKernelId().equals("k0") && after.getKernel().getKernelId().equals("k0");
        boolean aloneElected = resolve(zoo, alone).getFound();
        say("  elected before the flood " + before.getKernel().getKernelId() + ", after " + after.getKernel().getKernelId()
                + " (" + after.getOrigins() + " origins); a kind only the flooder reports on: " + (aloneElected ? "elected" : "not served"));
        figures.put("flood_sessions", sessions);
        figures.put("elected_after_flood_is_honest", honest);
        figures.put("flooder_alone_elected", aloneElected);

        String forged = "bench-forged-" + run;
        producer.send(new ProducerRecord<>("microbench-results", forged, MicrobenchReport.newBuilder().setSessionId("forge-" + run)
                .setOrigin("forger-" + run).setDevice(DeviceProfile.newBuilder().setFingerprint(forged))
                .addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitive(Primitive.PRIMITIVE_VECTORIZE).setSpeedup(1.5))
                .setPeakGflops(1e-6).setReceivedAtMs(System.currentTimeMillis()).build().toByteArray())).get();
        Thread.sleep(2000); // the microbenchmark's own consumer stores it
        double peak = resolve(zoo, forged).getKindPeakGflops();
        double ceiling = LatencyRules.ceilingFlops(Backend.BACKEND_WASM, peak);
        double refusedBefore = refused();
        double handledBefore = handled();
        int refusedAtGateway = 0;
        for (int h = 0; h < 5; h++) {
            KernelReport report = honest(forged, "fh" + h, "fh" + h).toBuilder().setCeilingGflops(ceiling / 1e9).build();
            if (report.getRankedList().stream().anyMatch(m -> LatencyRules.problem(OP, m.getMedianMs(), ceiling) != null)) {
                refusedAtGateway++; // the gateway would answer INVALID_REPORT, acknowledging nothing
                continue;
            }
            send(forged, report);
        }
        producer.flush();
        awaitHandled(handledBefore, 5 - refusedAtGateway);
        double deadLettered = refused() - refusedBefore;
        say("  a forged peak of 1e-6 GFLOP/s from one origin: kind's peak " + (peak > 0 ? peak + " GFLOP/s" : "not measured")
                + "; honest reports refused at the gateway " + refusedAtGateway + ", dead-lettered " + (int) deadLettered);
        figures.put("forged_peak_applied", peak > 0 && peak < LatencyRules.PEAK_FLOOR_GFLOPS);
        figures.put("honest_reports_refused_at_gateway", refusedAtGateway);
        figures.put("honest_reports_dead_lettered", (int) deadLettered);
    }

    /** A flooder's session: its own kernel first at 0.9 times the honest best, from one address. */
    private KernelReport flooder(String kind, String session) {
        return report(kind, session, "flooder").addRanked(measurement("k-flood", 0.9 * TRUE_MS[0]))
                .addRanked(measurement("k4", TRUE_MS[4])).build();
    }

    /** Waits until the zoo handled (stored or refused) {@code count} reports more than {@code since}, at most 2 minutes. */
    private void awaitHandled(double since, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (handled() - since < count && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
    }

    /** Reports the zoo stored or refused so far. */
    private double handled() throws IOException, InterruptedException {
        return ingested() + refused();
    }

    /** Reports the zoo refused (to the dead-letter topic) so far, from its metrics. */
    private double refused() throws IOException, InterruptedException {
        return Metrics.read(http, zooHttp).total("jitzoo_zoo_reports_refused_total");
    }

    private ResolvedKernel awaitOrigins(ZooServiceGrpc.ZooServiceBlockingStub zoo, String kind, int origins) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        ResolvedKernel best = resolve(zoo, kind);
        // every origin ranks every kernel that can win (attackers rank k0, k2, k3 and k4 too): once all
        // reports are in, the winner is ranked by them all
        while (System.nanoTime() < deadline && !(best.getFound() && best.getOrigins() >= origins)) {
            Thread.sleep(100);
            best = resolve(zoo, kind);
        }
        return best;
    }

    private void send(String kind, KernelReport report) {
        producer.send(new ProducerRecord<>("kernel-reports", kind, report.toByteArray()));
    }

    private String kind(int i) {
        return "bench-" + run + "-" + i;
    }

    private static ResolvedKernel resolve(ZooServiceGrpc.ZooServiceBlockingStub zoo, String kind) {
        return zoo.withDeadlineAfter(5, TimeUnit.SECONDS).resolve(request(kind)).getKernels(0);
    }

    private static ResolveRequest request(String kind) {
        return ResolveRequest.newBuilder().setDevice(DeviceProfile.newBuilder().setFingerprint(kind))
                .setBackend(Backend.BACKEND_WASM).addOps(OP).build();
    }

    /** An honest device's report: the five kernels timed with ±6% noise, ranked by what it measured. */
    private KernelReport honest(String kind, String session, String origin) {
        record Timed(int kernel, double ms) {
        }
        List<Timed> timed = new ArrayList<>();
        for (int k = 0; k < TRUE_MS.length; k++) {
            timed.add(new Timed(k, TRUE_MS[k] * (1 + 0.06 * (2 * random.nextDouble() - 1))));
        }
        timed.sort((a, b) -> Double.compare(a.ms(), b.ms()));
        KernelReport.Builder report = report(kind, session, origin);
        for (Timed t : timed) {
            report.addRanked(measurement("k" + t.kernel(), t.ms()));
        }
        return report.build();
    }

    /** A liar: a slow kernel first at a fake-fast latency, the honest best last at a fake-slow one. */
    private KernelReport attacker(String kind, String session, String origin) {
        return report(kind, session, origin).addRanked(measurement("k-slow", 0.2)).addRanked(measurement("k3", 0.3))
                .addRanked(measurement("k4", 0.4)).addRanked(measurement("k2", 5.0)).addRanked(measurement("k0", 50.0)).build();
    }

    private KernelReport.Builder report(String kind, String session, String origin) {
        return KernelReport.newBuilder().setSessionId(session + "-" + run).setOrigin(origin + "-" + run)
                .setDevice(DeviceProfile.newBuilder().setFingerprint(kind)).setOp(OP).setBackend(Backend.BACKEND_WASM)
                .setReceivedAtMs(System.currentTimeMillis());
    }

    private static Measurement measurement(String kernelId, double ms) {
        return Measurement.newBuilder().setMedianMs(ms).setSamples(7)
                .setKernel(KernelRef.newBuilder().setKernelId(kernelId).setBackend(Backend.BACKEND_WASM).setOp(OP)).build();
    }

    /** The zoo's count of ingested reports, from its metrics. */
    private double ingested() throws IOException, InterruptedException {
        return Metrics.read(http, zooHttp).total("jitzoo_zoo_reports_ingested_total");
    }
}
