package dev.jitzoo.cli.bench;

import static dev.jitzoo.cli.bench.BenchReport.round;
import static dev.jitzoo.cli.bench.BenchReport.say;

import dev.jitzoo.cli.suite.ServiceLauncher;
import dev.jitzoo.cli.suite.ServiceLauncher.Instance;
import dev.jitzoo.cli.suite.ServiceLauncher.Launch;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.ProtocolVersion;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code ./jitzoo bench scale}, beside a private stack (BenchCli starts it): what a second instance
 * of a service adds, on this machine, as Kubernetes would add a pod.
 * <ul>
 * <li>Zoo consumers: one zoo alone in its consumer group, and two zoos in another group, each group
 * on a topic of two partitions; reports published as the gateway would, timed until ingested.</li>
 * <li>Codegen instances behind a gateway: one gateway whose codegen address resolves to one
 * instance, and one whose address resolves to two (127.0.0.1 and 127.0.0.2, from a hosts file: a
 * headless Service's DNS answer), both calling it with gRPC's round_robin as the chart configures;
 * sessions of new shapes, every kernel of their lite spaces generated and offered.</li>
 * </ul>
 * Every instance gets the same warm-up work first; then rounds alternate one and two instances (and,
 * for codegen, one instance at half the sessions in flight: the load each of two sees), and the
 * medians and their ratio are printed, with the CPU seconds each instance used per unit of work
 * (the capacity model's figures). One JSON line with {@code --json}.
 */
public final class ScaleBench {

    private static final int PARTITIONS = 2;
    private static final int OPS_PER_SESSION = 4;
    private static final int SESSIONS_IN_FLIGHT = 16;
    /** Rounds of one instance at half the sessions in flight: what each of two instances is asked, on one alone. */
    private static final int ONE_AT_HALF_LOAD = -1;
    /** Each instance's own count of its work: reports a zoo stored, kernels a codegen compiled. */
    private static final String INGESTED = "jitzoo_zoo_reports_ingested_total";
    private static final String COMPILES = "jitzoo_codegen_compile_seconds_count";
    /** The chart's gateway JVM (values.yaml gateway.javaToolOptions) in its 1 Gi pod: MaxRAMPercentage=75 of it. */
    static final String CHART_GATEWAY_JVM = "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Xmx768m";

    /** The private stack's addresses, and how its services start: these instances start the same way. */
    private final ServiceLauncher stack = ServiceLauncher.here();
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<Instance> started = new ArrayList<>();
    private final Random random = new Random(11);
    /** Ops asked so far: each op's N comes from it, so no two ops of a run share a shape (no cache hit). */
    private final AtomicInteger opsAsked = new AtomicInteger();

    public static void main(String[] args) throws Exception {
        BenchArgs argv = BenchArgs.of(args);
        boolean json = argv.json();
        int rounds = argv.count("--rounds", 3);
        // rounds of one and of two instances before counting: an instance of two gets half a round's work,
        // and its JIT is still warming after two (it spent 57% more CPU per kernel than the first)
        int warmup = argv.count("--warmup", 4);
        int reports = argv.count("--reports", 20_000);
        int sessions = argv.count("--sessions", 200);
        int held = argv.count("--held", 10_000);
        ScaleBench bench = new ScaleBench();
        Runtime.getRuntime().addShutdownHook(new Thread(bench::stopAll)); // a bench stopped by a signal leaves no instance behind
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("cores", Runtime.getRuntime().availableProcessors());
        try {
            // codegen first: the zoo rounds leave MongoDB with many reports, which the sessions' Resolve and Similar calls read
            bench.codegen(rounds, warmup, sessions, figures);
            bench.zoo(rounds, warmup, reports, figures);
            bench.held(held, figures);
        } finally {
            bench.stopAll();
        }
        BenchReport.print(figures, json, ScaleBench::table);
        System.exit(0);
    }

    // ---- zoo consumers ----

    private void zoo(int rounds, int warmup, int reports, Map<String, Object> figures) throws Exception {
        String one = "scale-reports-1-" + run;
        String two = "scale-reports-2-" + run;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.kafkaBootstrap()));
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", stack.kafkaBootstrap(),
                     "acks", "all", "linger.ms", 5, "batch.size", 262_144), new StringSerializer(), new ByteArraySerializer())) {
            admin.createTopics(List.of(new NewTopic(one, PARTITIONS, (short) 1), new NewTopic(two, PARTITIONS, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
            say("zoo: one consumer on " + one + ", two on " + two + " (" + PARTITIONS + " partitions each)");
            List<Instance> single = List.of(zooInstance("zoo-1a", one, 28301));
            List<Instance> pair = List.of(zooInstance("zoo-2a", two, 28302), zooInstance("zoo-2b", two, 28303));
            awaitGroup(admin, "scale-" + one, 1);
            figures.put("zoo_partitions_per_instance", awaitGroup(admin, "scale-" + two, 2));
            RoundOf round = n -> ingest(producer, n == 1 ? one : two, n == 1 ? single : pair, reports);
            // each zoo of the pair gets half a round's reports: a second round of two warms them as much as the one alone
            Map<Integer, List<Round>> results = alternate(rounds, warmup, round, () -> round.run(2), 1, 2);
            summarize("zoo", "reports", results, figures);
            memory("zoo", List.of(single.get(0), pair.get(0), pair.get(1)), figures);
        }
    }

    private Instance zooInstance(String name, String topic, int port) {
        return start(name, "zoo", "127.0.0.1", port, Map.of("MP_MESSAGING_INCOMING_REPORTS_TOPIC", topic,
                "MP_MESSAGING_INCOMING_REPORTS_GROUP_ID", "scale-" + topic, "MP_MESSAGING_INCOMING_REPORTS_CLIENT_ID", name), List.of());
    }

    /**
     * Until the group has {@code members} consumers that hold every partition between them; then
     * the partitions each holds, by its client id (the instance's name).
     */
    private Map<String, Integer> awaitGroup(Admin admin, String group, int members) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < deadline) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
            int assigned = d.members().stream().mapToInt(m -> m.assignment().topicPartitions().size()).sum();
            if (d.groupState() == GroupState.STABLE && d.members().size() == members && assigned == PARTITIONS) {
                Map<String, Integer> partitions = new java.util.TreeMap<>();
                d.members().forEach(m -> partitions.merge(m.clientId(), m.assignment().topicPartitions().size(), Integer::sum));
                say("  " + group + ": partitions by consumer " + partitions);
                return partitions;
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("consumer group " + group + " did not settle with " + members + " members in 2 minutes");
    }

    /** Reports over 200 device kinds (keys, so both partitions get them), timed from the first send until all are ingested. */
    private Round ingest(KafkaProducer<String, byte[]> producer, String topic, List<Instance> zoos, int reports) throws Exception {
        Map<String, Double> before = counters(zoos, INGESTED);
        Map<String, Double> cpu = cpuByProcess();
        Map<String, Double> jit = jitByInstance(zoos);
        CpuSampler.Machine machine = CpuSampler.Machine.now();
        String batch = UUID.randomUUID().toString().substring(0, 6);
        long t0 = System.nanoTime();
        for (int i = 0; i < reports; i++) {
            String kind = "scale-" + batch + "-" + (i % 200);
            producer.send(new ProducerRecord<>(topic, kind, report(kind, batch + "-" + i).toByteArray()));
        }
        producer.flush();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        Map<String, Double> ingested = counters(zoos, INGESTED);
        while (total(ingested) - total(before) < reports) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the zoo ingested too few of " + reports + " reports in 10 minutes");
            }
            Thread.sleep(100);
            ingested = counters(zoos, INGESTED);
        }
        return new Round(reports, (System.nanoTime() - t0) / 1e9, CpuSampler.since(cpu, cpuByProcess()),
                CpuSampler.since(jit, jitByInstance(zoos)), zoos, machine.busySince(), CpuSampler.since(before, ingested));
    }

    private KernelReport report(String kind, String session) {
        OpSpec op = matmul(128, 768, 768);
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId(session).setOrigin("o-" + session)
                .setDevice(DeviceProfile.newBuilder().setFingerprint(kind)).setOp(op).setBackend(Backend.BACKEND_WASM)
                .setReceivedAtMs(System.currentTimeMillis());
        double base = 1 + 0.05 * random.nextDouble();
        for (int k = 0; k < 5; k++) {
            report.addRanked(Measurement.newBuilder().setMedianMs(base * (1 + 0.1 * k)).setSamples(7)
                    .setKernel(KernelRef.newBuilder().setKernelId("k" + k).setBackend(Backend.BACKEND_WASM).setOp(op)));
        }
        return report.build();
    }

    // ---- codegen instances behind a gateway ----

    private void codegen(int rounds, int warmup, int sessions, Map<String, Object> figures) throws Exception {
        // the headless Service's answer, as a hosts file the gateways' JVMs read instead of the system's
        Path hosts = stack.home().resolve("scale-hosts");
        Files.writeString(hosts, "127.0.0.1 codegen-one.scale\n127.0.0.2 codegen-b.scale\n127.0.0.1 codegen-two.scale\n"
                + "127.0.0.2 codegen-two.scale\n");
        int port = 28310;
        List<Instance> codegens = List.of(start("codegen-a", "codegen", "127.0.0.1", port, Map.of(), List.of()),
                start("codegen-b", "codegen", "127.0.0.2", port, Map.of(), List.of()));
        Instance one = gateway("gateway-1", 28311, "codegen-one.scale", port, hosts);
        Instance two = gateway("gateway-2", 28312, "codegen-two.scale", port, hosts);
        Instance toB = gateway("gateway-1b", 28314, "codegen-b.scale", port, hosts);
        say("codegen: gateway-1 calls codegen-a; gateway-2 calls codegen-a and codegen-b (round_robin over their addresses); "
                + "gateway-1b calls codegen-b, in the warm-up only");
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxFrameSize(1 << 22)
                .setMaxMessageSize(1 << 24));
        try {
            // codegen-a alone warms codegen-a only: a round of codegen-b alone warms the second as much
            RoundOf round = n -> n == 2 ? generate(client, two, codegens, sessions, SESSIONS_IN_FLIGHT)
                    : generate(client, one, codegens.subList(0, 1), sessions, n == ONE_AT_HALF_LOAD ? SESSIONS_IN_FLIGHT / 2 : SESSIONS_IN_FLIGHT);
            Map<Integer, List<Round>> results = alternate(rounds, warmup, round,
                    () -> generate(client, toB, codegens.subList(1, 2), sessions, SESSIONS_IN_FLIGHT), 1, 2, ONE_AT_HALF_LOAD);
            summarize("codegen", "kernels", results, figures);
            // is a second instance's cost coordination, or the lighter load each instance then gets? One alone at that load says
            figures.put("codegen_efficiency_one_at_half_load_vs_one", efficiency(results.get(ONE_AT_HALF_LOAD), results.get(1), Round::perCpuSecond));
            figures.put("codegen_efficiency_one_at_half_load_vs_one_without_jit", efficiency(results.get(ONE_AT_HALF_LOAD), results.get(1),
                    Round::perCpuSecondWithoutJit));
            memory("codegen", codegens, figures);
            stack.running("space").ifPresent(space -> memory("space", List.of(new Instance("stack space", ServiceLauncher.LOOPBACK,
                    stack.port("space"), Optional.of(space), stack.logs())), figures));
            figures.put("connections_per_instance", connections(two, codegens));
        } finally {
            vertx.close();
        }
    }

    /**
     * The gateway's established gRPC connections to each instance, after the rounds: round_robin
     * keeps one to every address the name resolves to.
     */
    private static Map<String, Integer> connections(Instance gateway, List<Instance> instances) {
        Map<String, Integer> byPeer = gateway.process().map(Sockets::establishedByPeer).orElse(Map.of());
        Map<String, Integer> byInstance = new LinkedHashMap<>();
        instances.forEach(i -> byInstance.put(i.name(), byPeer.getOrDefault(i.host() + ":" + i.port(), 0)));
        say("  " + gateway.name() + "'s connections to each codegen: " + byInstance);
        return byInstance;
    }

    private Instance gateway(String name, int port, String codegenHost, int codegenPort, Path hosts) {
        return start(name, "gateway", "127.0.0.1", port, Map.of("JITZOO_CODEGEN_HOST", codegenHost,
                "JITZOO_CODEGEN_PORT", String.valueOf(codegenPort), "QUARKUS_GRPC_CLIENTS_CODEGEN_LOAD_BALANCING_POLICY", "round_robin",
                "JITZOO_GATEWAY_TRUST_FORWARDED_FOR", "true"), List.of("-Djdk.net.hosts.file=" + hosts));
    }

    /** Sessions of new shapes, {@code inFlight} at a time, each until its last offer: the kernels delivered. */
    private Round generate(WebSocketClient client, Instance gateway, List<Instance> codegens, int sessions, int inFlight) throws Exception {
        Map<String, Double> compiled = counters(codegens, COMPILES);
        Map<String, Double> cpu = cpuByProcess();
        Map<String, Double> jit = jitByInstance(codegens);
        CpuSampler.Machine machine = CpuSampler.Machine.now();
        AtomicLong kernels = new AtomicLong();
        Semaphore open = new Semaphore(inFlight);
        List<CompletableFuture<Void>> done = Collections.synchronizedList(new ArrayList<>());
        long t0 = System.nanoTime();
        for (int i = 0; i < sessions; i++) {
            open.acquire();
            CompletableFuture<Void> session = session(client, gateway.port(), i, kernels);
            session.whenComplete((v, e) -> open.release());
            done.add(session);
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        return new Round(kernels.get(), (System.nanoTime() - t0) / 1e9, CpuSampler.since(cpu, cpuByProcess()),
                CpuSampler.since(jit, jitByInstance(codegens)), codegens, machine.busySince(),
                CpuSampler.since(compiled, counters(codegens, COMPILES)));
    }

    private CompletableFuture<Void> session(WebSocketClient client, int port, int n, AtomicLong kernels) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        List<OpSpec> ops = new ArrayList<>();
        for (int i = 0; i < OPS_PER_SESSION; i++) {
            // a shape no op asked before (its N): every kernel is generated, none comes from codegen's cache
            int asked = opsAsked.getAndIncrement();
            ops.add(matmul(16 * (1 + random.nextInt(32)), 64 * (1 + asked / 4000), 17 + asked % 4000));
        }
        byte[] hello = ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(ProtocolVersion.PROTOCOL_VERSION_CURRENT_VALUE).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("scale-" + run).setUserAgent("jitzoo-bench").setLogicalCores(2)
                        .setWasm(WasmFeatures.newBuilder().setSimd(true))).addAllOps(ops).setCredits(100_000)).build().toByteArray();
        WebSocketConnectOptions options = new WebSocketConnectOptions().setHost("127.0.0.1").setPort(port).setURI("/v1/session")
                .addHeader("X-Forwarded-For", "10.9." + (n >> 8 & 255) + "." + (n & 255));
        client.connect(options).onSuccess(ws -> {
            ws.binaryMessageHandler(data -> {
                ServerFrame frame;
                try {
                    frame = ServerFrame.parseFrom(data.getBytes());
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    done.completeExceptionally(e);
                    return;
                }
                switch (frame.getFrameCase()) {
                    case WELCOME -> kernels.addAndGet(frame.getWelcome().getInitialCount());
                    case OFFER -> kernels.incrementAndGet();
                    case OFFERS_DONE -> {
                        ws.close();
                        done.complete(null);
                    }
                    case ERROR -> done.completeExceptionally(new IllegalStateException(frame.getError().getMessage()));
                    default -> { }
                }
            });
            ws.closeHandler(v -> done.completeExceptionally(new IllegalStateException("closed with " + ws.closeStatusCode())));
            ws.writeBinaryMessage(Buffer.buffer(hello));
        }).onFailure(done::completeExceptionally);
        return done;
    }

    // ---- a gateway pod's memory ----

    /**
     * A gateway sized as the chart's pod (its JVM options, the heap at 75% of the 1 Gi limit), and
     * {@code sessions} held on it by {@code bench gateway}'s held phase: the process's resident
     * memory with them, which the pod's memory limit must hold.
     */
    private void held(int sessions, Map<String, Object> figures) throws Exception {
        say("gateway pod: " + sessions + " sessions held on a gateway with the chart's JVM options (" + CHART_GATEWAY_JVM + ")");
        Instance gateway = start("gateway-held", "gateway", "127.0.0.1", 28313, Map.of("JITZOO_GATEWAY_TRUST_FORWARDED_FOR", "true"),
                List.of(CHART_GATEWAY_JVM.split(" ")));
        ProcessHandle process = gateway.process().orElseThrow(() -> new IllegalStateException("gateway-held has no process"));
        Map<String, Object> f = GatewayBench.held(java.net.URI.create("ws://127.0.0.1:" + gateway.port() + "/v1/session"), process,
                sessions, TimeUnit.MINUTES.toMillis(5));
        long rss = (long) f.get("gateway_rss_bytes");
        figures.put("gateway_sessions_held", f.get("sessions_held"));
        figures.put("gateway_nonheap_bytes_held", nonHeap(gateway));
        figures.put("gateway_heap_used_bytes_held", f.get("heap_used_bytes"));
        figures.put("gateway_rss_bytes_held", rss);
        if (((Number) f.get("sessions_held")).longValue() >= 10_000) {
            figures.put("gateway_rss_bytes_at_10k_sessions", rss);
        }
    }

    // ---- memory ----

    /**
     * The most memory an instance of the service holds after its rounds (RSS), and the most its JVM
     * keeps outside the Java heap (metaspace, code, direct and mapped buffers, by its own metrics;
     * thread stacks and native allocations come on top): a pod's limit must leave room for that
     * beside the heap its JVM may grow to.
     */
    private void memory(String service, List<Instance> instances, Map<String, Object> figures) {
        long rss = -1;
        long nonHeap = -1;
        for (Instance i : instances) {
            rss = Math.max(rss, i.process().map(CpuSampler::residentBytes).orElse(-1L));
            nonHeap = Math.max(nonHeap, nonHeap(i));
        }
        figures.put(service + "_rss_bytes_max", rss);
        figures.put(service + "_nonheap_bytes_max", nonHeap);
    }

    /** What the instance's JVM says it holds outside the heap: non-heap pools committed, and buffers; -1 where it does not say. */
    private long nonHeap(Instance instance) {
        try {
            Metrics m = Metrics.read(http, "http://" + instance.host() + ":" + instance.port());
            double pools = m.values("jvm_memory_committed_bytes", "area=\"nonheap\"").sum();
            return pools <= 0 ? -1 : (long) (pools + m.total("jvm_buffer_memory_used_bytes"));
        } catch (Exception e) {
            say("  " + instance.name() + ": no memory figures (" + e + ")");
            return -1;
        }
    }

    // ---- rounds ----

    /**
     * What one round did: units of work, seconds, the CPU seconds of every process and of the JIT
     * compiler threads of the instances doing it, how busy the whole machine was (every core, every
     * process), and the work each instance did by its own count (reports ingested, kernels compiled).
     */
    private record Round(double units, double seconds, Map<String, Double> cpuByProcess, Map<String, Double> jitByInstance,
                         List<Instance> doing, double machineBusy, Map<String, Double> workByInstance) {
        double perSecond() {
            return units / seconds;
        }

        double perCpuSecond() {
            return units / cpuSeconds();
        }

        /** The CPU seconds of the instances that did the work. */
        double cpuSeconds() {
            return doing.stream().mapToDouble(i -> cpuByProcess.getOrDefault(i.name(), 0.0)).sum();
        }

        /** Of those, the seconds their JIT compilers took: the warming a new instance pays, not the work. */
        double jitSeconds() {
            return doing.stream().mapToDouble(i -> jitByInstance.getOrDefault(i.name(), 0.0)).sum();
        }

        double perCpuSecondWithoutJit() {
            return units / (cpuSeconds() - jitSeconds());
        }
    }

    private interface RoundOf {
        Round run(int instances) throws Exception;
    }

    /** A warm-up round beside the others, so each instance gets as much warm-up work as the one alone. */
    private interface WarmUp {
        void run() throws Exception;
    }

    /**
     * {@code warmup} times a round of one instance, one of two and {@code evenUp} (an instance of two
     * gets half a round's work, and its JIT would warm as late: a JVM compiles for its first tens of
     * CPU seconds here), not counted; then {@code rounds} of each of {@code setups} (instances, or
     * {@link #ONE_AT_HALF_LOAD}), alternating, counted.
     */
    private static Map<Integer, List<Round>> alternate(int rounds, int warmup, RoundOf round, WarmUp evenUp, int... setups)
            throws Exception {
        say("  warm-up rounds (not counted)");
        for (int w = 0; w < warmup; w++) {
            round.run(1);
            round.run(2);
            evenUp.run();
        }
        Map<Integer, List<Round>> results = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            for (int n : setups) {
                Round done = round.run(n);
                results.computeIfAbsent(n, k -> new ArrayList<>()).add(done);
                String setup = n == ONE_AT_HALF_LOAD ? "1 instance at half the sessions in flight" : n == 1 ? "1 instance" : n + " instances";
                say(String.format(java.util.Locale.ROOT, "  round %d, %s: %.0f units in %.1f s (%.0f/s), %.1f CPU s "
                        + "(JIT %.1f), machine %.0f%% busy", r + 1, setup, done.units(), done.seconds(), done.perSecond(),
                        done.cpuSeconds(), done.jitSeconds(), 100 * done.machineBusy()));
            }
        }
        return results;
    }

    /** The median work per CPU second of {@code rounds} against that of {@code baseline}, to 2 places. */
    private static double efficiency(List<Round> rounds, List<Round> baseline, java.util.function.ToDoubleFunction<Round> perCpuSecond) {
        return round(Percentiles.median(rounds.stream().map(perCpuSecond::applyAsDouble).toList())
                / Percentiles.median(baseline.stream().map(perCpuSecond::applyAsDouble).toList()), 2);
    }

    private static void summarize(String service, String unit, Map<Integer, List<Round>> results, Map<String, Object> figures) {
        double one = Percentiles.median(results.get(1).stream().map(Round::perSecond).toList());
        double two = Percentiles.median(results.get(2).stream().map(Round::perSecond).toList());
        figures.put(service + "_" + unit + "_per_s_1", Math.round(one));
        figures.put(service + "_" + unit + "_per_s_2", Math.round(two));
        figures.put(service + "_speedup_2_vs_1", round(two / one, 2));
        for (int n : new int[] {1, 2}) {
            double machineBusy = Percentiles.median(results.get(n).stream().map(Round::machineBusy).toList());
            figures.put(service + "_machine_busy_pct_" + n, Math.round(100 * machineBusy));
        }
        // the capacity model's figure: work per CPU second an instance spends (a pod of c cores: c times it, where nothing else binds)
        figures.put(service + "_" + unit + "_per_cpu_s", Math.round(Percentiles.median(java.util.stream.Stream.of(1, 2)
                .flatMap(n -> results.get(n).stream()).map(Round::perCpuSecond).toList())));
        // the coordination cost: the work a CPU second of the service does with two instances, against one
        // (1.0: none; the chart's scale-out is worth its pods where it stays near 1 and the nodes have cores to give)
        figures.put(service + "_efficiency_two_vs_one", efficiency(results.get(2), results.get(1), Round::perCpuSecond));
        // the same with the JIT compilers' CPU left out: what is coordination, once warming is over
        figures.put(service + "_efficiency_two_vs_one_without_jit", efficiency(results.get(2), results.get(1), Round::perCpuSecondWithoutJit));
        for (int n : new int[] {1, 2}) {
            figures.put(service + "_jit_cpu_pct_" + n, Math.round(100 * Percentiles.median(results.get(n).stream()
                    .map(r -> r.jitSeconds() / r.cpuSeconds()).toList())));
        }
        // how evenly two instances shared the work (partitions for the zoo, round_robin's calls for codegen)
        Map<String, Double> work = summed(results.get(2), Round::workByInstance);
        double allWork = total(work);
        Map<String, Long> workShares = new LinkedHashMap<>();
        work.forEach((k, v) -> workShares.put(k, Math.round(100 * v / allWork)));
        figures.put(service + "_work_share_pct_2", workShares);
        // where the machine's CPU went in the counted rounds, every process of the stack, the instances and the load
        double serviceShare = 0;
        for (int n : new int[] {1, 2}) {
            Map<String, Double> cpu = summed(results.get(n), Round::cpuByProcess);
            double all = total(cpu);
            Map<String, Long> shares = new LinkedHashMap<>();
            cpu.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                    .filter(e -> e.getValue() / all >= 0.01).forEach(e -> shares.put(e.getKey(), Math.round(100 * e.getValue() / all)));
            figures.put(service + "_cpu_share_pct_" + n, shares);
            if (n == 1) {
                serviceShare = results.get(1).stream().mapToDouble(Round::cpuSeconds).sum() / all;
            }
        }
        // what a second instance can give on this machine at most: the idle CPU left beside one
        // instance (1 / busy), and no more than the whole machine without the service's work (1 / (1 - share))
        double busy = Percentiles.median(results.get(1).stream().map(Round::machineBusy).toList());
        figures.put(service + "_speedup_ceiling_here", round(Math.min(1 / busy, 1 / (1 - serviceShare)), 2));
    }

    // ---- instances ----

    /** A service's fast-jar in a JVM of its own, as ./jitzoo up starts one, on {@code host}; ready when its readiness check is. */
    private Instance start(String name, String service, String host, int port, Map<String, String> env, List<String> jvm) {
        if (ServiceLauncher.listening(host, port)) {
            throw new IllegalStateException(host + ":" + port + " (for " + name + ") is taken: an instance of an earlier run?");
        }
        List<String> options = new ArrayList<>(jvm);
        options.add("-XX:-UseDynamicNumberOfCompilerThreads"); // compiler threads that stay, so their CPU can be read
        Instance instance = stack.start(new Launch(service, name, host, port, env, options,
                stack.logs().resolve("scale-" + name + ".log"), false));
        started.add(instance);
        instance.awaitReady(ServiceLauncher.READY_TIMEOUT);
        say("  " + name + " ready on " + host + ":" + port);
        return instance;
    }

    private void stopAll() {
        ServiceLauncher.stop(started, Duration.ofSeconds(20));
    }

    /** CPU seconds so far of each instance's JIT compiler threads. */
    private static Map<String, Double> jitByInstance(List<Instance> instances) {
        Map<String, Double> seconds = new LinkedHashMap<>();
        instances.forEach(i -> i.process().ifPresent(h -> seconds.put(i.name(), CpuSampler.threadSeconds(h, CpuSampler.JIT_THREADS))));
        return seconds;
    }

    /** A counter of each instance, from its Prometheus page. */
    private Map<String, Double> counters(List<Instance> instances, String series) throws Exception {
        Map<String, Double> values = new LinkedHashMap<>();
        for (Instance i : instances) {
            values.put(i.name(), Metrics.read(http, "http://" + i.host() + ":" + i.port()).total(series));
        }
        return values;
    }

    private static double total(Map<String, Double> values) {
        return values.values().stream().mapToDouble(Double::doubleValue).sum();
    }

    /** Each name's figure summed over the rounds (CPU seconds by process, work by instance). */
    private static Map<String, Double> summed(List<Round> rounds, java.util.function.Function<Round, Map<String, Double>> of) {
        Map<String, Double> sums = new java.util.TreeMap<>();
        rounds.forEach(r -> of.apply(r).forEach((k, v) -> sums.merge(k, v, Double::sum)));
        return sums;
    }

    /** CPU seconds so far of every process here: the stack's parts (their pid files), the instances, this load. */
    private Map<String, Double> cpuByProcess() {
        Map<String, ProcessHandle> processes = new LinkedHashMap<>();
        stack.running().forEach((part, h) -> processes.put("stack " + part, h));
        started.forEach(i -> i.process().ifPresent(h -> processes.put(i.name(), h)));
        processes.put("load", ProcessHandle.current());
        return CpuSampler.seconds(processes);
    }

    // ---- small things ----

    private static OpSpec matmul(int m, int k, int n) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(k).addShape(n).build();
    }

    private static void table(Map<String, Object> f) {
        System.out.println();
        System.out.printf(java.util.Locale.ROOT, "%-44s %14s %14s %8s %14s %11s %12s %12s %10s%n", "", "1 instance", "2 instances",
                "ratio", "per CPU s", "per CPU s 2÷1", "without JIT", "machine busy", "ceiling");
        for (String[] row : new String[][] {{"zoo consumers (reports/s, 2 partitions)", "zoo", "reports"},
                {"codegen behind a gateway (kernels/s)", "codegen", "kernels"}}) {
            String p = row[1] + "_" + row[2];
            System.out.printf(java.util.Locale.ROOT, "%-44s %14s %14s %7s× %14s %12s× %11s× %5s%%, %3s%% %9s×%n", row[0],
                    f.get(p + "_per_s_1"), f.get(p + "_per_s_2"), f.get(row[1] + "_speedup_2_vs_1"), f.get(p + "_per_cpu_s"),
                    f.get(row[1] + "_efficiency_two_vs_one"), f.get(row[1] + "_efficiency_two_vs_one_without_jit"),
                    f.get(row[1] + "_machine_busy_pct_1"), f.get(row[1] + "_machine_busy_pct_2"), f.get(row[1] + "_speedup_ceiling_here"));
        }
        System.out.println("(medians of the rounds; machine: " + f.get("cores") + " cores shared by every process of the stack and the load;"
                + " ceiling: the most a second instance can give here, min(1 / machine busy, 1 / (1 - the service's CPU share)))");
        for (String service : List.of("zoo", "codegen")) {
            System.out.println("JIT compilers' share of the " + service + " instances' CPU (%): " + f.get(service + "_jit_cpu_pct_1")
                    + " with one, " + f.get(service + "_jit_cpu_pct_2") + " with two");
            System.out.println("work, " + service + " rounds of 2 (%): " + f.get(service + "_work_share_pct_2"));
            for (int n : new int[] {1, 2}) {
                System.out.println("CPU, " + service + " rounds of " + n + ": " + f.get(service + "_cpu_share_pct_" + n));
            }
        }
        System.out.printf(java.util.Locale.ROOT, "codegen, one instance at half the sessions in flight (what each of two is asked): "
                + "%s× the work per CPU s of one at full load (%s× without JIT)%n", f.get("codegen_efficiency_one_at_half_load_vs_one"),
                f.get("codegen_efficiency_one_at_half_load_vs_one_without_jit"));
        System.out.println("spread: zoo partitions by consumer " + f.get("zoo_partitions_per_instance")
                + "; the two-codegen gateway's connections by instance " + f.get("connections_per_instance"));
        for (String service : List.of("space", "codegen", "zoo")) {
            System.out.printf(java.util.Locale.ROOT, "memory, %s (most of an instance after its rounds): %.0f MB resident, %.0f MB "
                    + "outside the heap by the JVM's count%n", service, megabytes(f, service + "_rss_bytes_max"), megabytes(f, service + "_nonheap_bytes_max"));
        }
        System.out.printf(java.util.Locale.ROOT, "gateway pod (%s): %s sessions held, %.0f MB resident, %.0f MB outside the heap by the "
                + "JVM's count, %.0f MB of heap in use%n", CHART_GATEWAY_JVM, f.get("gateway_sessions_held"), megabytes(f, "gateway_rss_bytes_held"),
                megabytes(f, "gateway_nonheap_bytes_held"), megabytes(f, "gateway_heap_used_bytes_held"));
    }

    private static double megabytes(Map<String, Object> f, String key) {
        return ((Number) f.getOrDefault(key, -1)).doubleValue() / 1e6;
    }
}
