package dev.jitzoo.cli.bench;

import static dev.jitzoo.cli.bench.BenchReport.roundKeepingNaN;
import static dev.jitzoo.cli.bench.BenchReport.say;

import dev.jitzoo.cli.suite.ServiceLauncher;
import dev.jitzoo.cli.suite.Suite;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.ProtocolVersion;
import dev.jitzoo.proto.gateway.v1.RankedKernel;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * {@code ./jitzoo bench gateway}, run against a stack whose gateway has a 1 GB heap and reads
 * client addresses from X-Forwarded-For (BenchCli starts that private stack): every client is a
 * real WebSocket speaking the browser protocol (Hello, Credit, Report as the SDK sends them), from
 * an address of its own, on loopback, each phase bounded in count and time. Phases:
 * <ol>
 *   <li>warm-up: a few sessions tune and report, so the zoo has elected the device kind's kernel,
 *       then a thousand more open and close (a gateway in service runs warm);</li>
 *   <li>burst: sessions opened evenly within a few seconds; Hello to Welcome per session, and the
 *       gateway's own generation-to-offer latency (its {@code jitzoo_gateway_offer_seconds});</li>
 *   <li>reports: sessions of 16 ops each send all 16 reports at once; reports acknowledged a
 *       second (an acknowledgement means the broker has the record), the median of three rounds
 *       ({@code --report-rounds}) after four untimed ones ({@code --report-warm-up-rounds}: the
 *       report path's code is compiled over its first minute of load, as in service it runs warm);
 *       the first round, with the broker and the path cold, printed too; and the share of the
 *       gateway's CPU its JIT compiler took in the timed rounds;</li>
 *   <li>echo: the same connections and frames against a bare Vert.x echo server in its own JVM;</li>
 *   <li>held: sessions opened and kept, then the gateway's heap after a full GC.</li>
 * </ol>
 * Prints a table, or one JSON line with {@code --json}.
 */
public final class GatewayBench {

    /** Ops of one report session: 16, the most a Hello may carry. */
    private static final int OPS_PER_SESSION = 16;
    /** Opens in flight at once while sessions are opened as fast as they come (reports, held). */
    private static final int OPENING = 128;

    private final URI gateway;
    private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
    private final WebSocketClient client;
    private final HttpClient http = HttpClient.newHttpClient();
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger addresses = new AtomicInteger();
    private final long phaseTimeoutMs;
    /** The gateway's process (its CPU, its resident memory, a full GC before a heap reading); empty when not known. */
    private final Supplier<Optional<ProcessHandle>> process;
    /** The processes a timed report round holds (the zoo and its store); none to leave them running. */
    private final Supplier<List<ProcessHandle>> offTheAckPath;

    private GatewayBench(URI gateway, Supplier<Optional<ProcessHandle>> process, Supplier<List<ProcessHandle>> offTheAckPath,
                         long phaseTimeoutMs) {
        this.gateway = gateway;
        this.process = process;
        this.offTheAckPath = offTheAckPath;
        this.phaseTimeoutMs = phaseTimeoutMs;
        this.client = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxConnections(100_000)
                .setConnectTimeout(30_000).setMaxFrameSize(1 << 20).setMaxMessageSize(1 << 20));
    }

    public static void main(String[] args) throws Exception {
        BenchArgs argv = BenchArgs.of(args);
        boolean json = argv.json();
        int held = withinDescriptors(argv.count("--sessions", 10_000));
        int burst = argv.count("--burst", 1000);
        int burstSeconds = argv.count("--burst-seconds", 10);
        int reportSessions = argv.count("--report-sessions", 1000);
        int reportRounds = argv.count("--report-rounds", 3);
        int reportWarmUpRounds = argv.countOrZero("--report-warm-up-rounds", 4);
        boolean zooIngesting = argv.flag("--zoo-ingesting");
        long phaseTimeoutMs = argv.count("--phase-timeout", 300) * 1000L;
        List<String> phases = argv.only(List.of("burst", "reports", "held"));
        URI gateway = URI.create(System.getenv().getOrDefault("JITZOO_GATEWAY_URL", "ws://127.0.0.1:8080/v1/session"));
        ServiceLauncher here = ServiceLauncher.here();
        GatewayBench bench = new GatewayBench(gateway, () -> here.running("gateway"), () -> zooIngesting ? List.of()
                : OFF_THE_ACK_PATH.stream().map(here::running).flatMap(Optional::stream).toList(), phaseTimeoutMs);
        Map<String, Object> figures = new LinkedHashMap<>();
        try {
            bench.warmUp();
            if (phases.contains("burst")) {
                figures.putAll(bench.burst(burst, burstSeconds));
            }
            if (phases.contains("reports")) {
                figures.putAll(bench.reports(reportSessions, reportWarmUpRounds, reportRounds));
            }
            if (phases.contains("held")) {
                figures.putAll(bench.held(held));
            }
        } finally {
            bench.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        print(figures, json);
    }

    /**
     * The held phase alone, against another gateway ({@code ./jitzoo bench scale}'s, sized as the
     * chart's pod): its sessions held, heap and resident memory.
     */
    static Map<String, Object> held(URI gateway, ProcessHandle process, int sessions, long phaseTimeoutMs) throws Exception {
        GatewayBench bench = new GatewayBench(gateway, () -> Optional.of(process), List::of, phaseTimeoutMs);
        try {
            return bench.held(withinDescriptors(sessions));
        } finally {
            bench.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Each session is a descriptor here and one in the gateway (this process's limit is theirs, both started from one shell). */
    private static int withinDescriptors(int sessions) {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os) {
            long room = os.getMaxFileDescriptorCount() - 2048;
            if (room < sessions) {
                say("only " + os.getMaxFileDescriptorCount() + " file descriptors a process here (ulimit -n): holding " + Math.max(room, 100)
                        + " sessions, not " + sessions + "; raise it (ulimit -n 20000) for the full count");
                return (int) Math.max(room, 100);
            }
        }
        return sessions;
    }

    // ---- phases ----

    /**
     * Sessions that tune one op to the end and report it: the zoo elects the device kind's kernel.
     * Two, from two addresses: below the {@code SETTLEMENT_ORIGINS} (3) that settle a kind, so the
     * sessions after them start from the zoo's kernel and are still offered the space's others.
     */
    private static final int WARM_UP_REPORTERS = 2;

    private void warmUp() throws Exception {
        say("warm-up: " + WARM_UP_REPORTERS + " sessions tune and report, so the zoo has an election for the device kind "
                + "(not settled: later sessions are still offered kernels)");
        for (int i = 0; i < WARM_UP_REPORTERS; i++) {
            Client c = open(gateway, hello(List.of(burstOp()), 1000)).get(60, TimeUnit.SECONDS);
            c.done.get(60, TimeUnit.SECONDS);
            c.sendReports(List.of(burstOp()));
            c.acked.get(60, TimeUnit.SECONDS);
            c.close();
        }
        Thread.sleep(2000); // the zoo consumes the reports and elects
        say("warm-up: 1000 sessions opened as fast as they come, and closed: every service's hot path compiled");
        openAll(1000, () -> hello(List.of(burstOp()), 1000), "warm-up sessions").forEach(Client::close);
        awaitNoConnections();
    }

    /** Sessions opened evenly over {@code seconds}, as page loads come: Welcome latency, and the gateway's offer latency. */
    private Map<String, Object> burst(int sessions, int seconds) throws Exception {
        say("burst: " + sessions + " sessions opened within " + seconds + " s; Hello to Welcome each");
        List<Client> clients = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<?>> finished = new ArrayList<>();
        Metrics before = metrics();
        long start = System.nanoTime();
        long intervalNs = TimeUnit.SECONDS.toNanos(seconds) / sessions;
        for (int i = 0; i < sessions; i++) {
            long due = start + i * intervalNs;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            CompletableFuture<Client> opened = open(gateway, hello(List.of(burstOp()), 1000));
            finished.add(opened.thenCompose(c -> {
                clients.add(c);
                return c.done;
            }).handle((v, e) -> null));
        }
        awaitAll(finished, "burst sessions");
        double openedInS = (System.nanoTime() - start) / 1e9;
        List<Double> welcome = new ArrayList<>();
        int refused = sessions - clients.size();
        for (Client c : clients) {
            if (c.welcomeMs > 0) {
                welcome.add(c.welcomeMs);
            } else {
                refused++;
            }
        }
        int offers = clients.stream().mapToInt(c -> c.offers.get()).sum();
        clients.forEach(Client::close);
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("burst_sessions", sessions);
        f.put("burst_seconds", seconds);
        f.put("burst_welcomed", welcome.size());
        f.put("burst_refused", refused);
        f.put("burst_done_s", roundKeepingNaN(openedInS, 1));
        f.put("welcome_p50_ms", roundKeepingNaN(Percentiles.nearestRank(welcome, 0.5), 1));
        f.put("welcome_p99_ms", roundKeepingNaN(Percentiles.nearestRank(welcome, 0.99), 1));
        f.put("welcome_max_ms", roundKeepingNaN(Percentiles.max(welcome), 1));
        f.put("burst_offers", offers);
        // the gateway's own offer latency, from its histogram's counts during the burst alone
        Metrics after = metrics();
        double p50 = Metrics.quantileBetween(before, after, "jitzoo_gateway_offer_seconds", 0.5);
        double p99 = Metrics.quantileBetween(before, after, "jitzoo_gateway_offer_seconds", 0.99);
        f.put("offer_p50_ms", roundKeepingNaN(p50 * 1e3, 2));
        f.put("offer_p99_ms", roundKeepingNaN(p99 * 1e3, 2));
        return f;
    }

    /**
     * Sessions of 16 ops each; once all are welcomed (and their offers queued up for credit they
     * never grant), each sends its 16 reports at once. Then the same connections and frames echoed
     * by a bare Vert.x server.
     */
    private Map<String, Object> reports(int sessions, int warmUpRounds, int rounds) throws Exception {
        List<ProcessHandle> held = offTheAckPath.get();
        say("reports: " + sessions + " sessions of " + OPS_PER_SESSION + " ops each send all their reports at once; "
                + warmUpRounds + " warm-up rounds, then " + rounds + " timed, each of new sessions (a session reports an op once), as the echo's"
                + (held.isEmpty() ? "" : "; the zoo and its store held while a round is timed (--zoo-ingesting: not)"));
        List<OpSpec> ops = new ArrayList<>();
        for (int i = 0; i < OPS_PER_SESSION; i++) {
            ops.add(matmul(8 + i, 16, 16));
        }
        List<Double> rates = new ArrayList<>();
        double firstRound = Double.NaN;
        int ackCount = 0;
        int errors = 0;
        int opened = 0;
        List<byte[]> frames = List.of();
        Optional<ProcessHandle> gatewayProcess = process.get();
        List<Double> perCpuSecond = new ArrayList<>();
        List<Double> perCpuSecondWithoutJit = new ArrayList<>();
        List<Double> jitShares = new ArrayList<>();
        for (int round = 0; round < warmUpRounds + rounds; round++) {
            boolean timed = round >= warmUpRounds;
            String name = timed ? "round " + (round - warmUpRounds + 1) : "warm-up round " + (round + 1);
            List<Client> clients = openAll(sessions, () -> hello(ops, 0), "report sessions, " + name);
            awaitQuiet();
            long start;
            double cpuBefore;
            double jitBefore;
            double seconds;
            try {
                signal(held, "STOP");
                start = System.nanoTime();
                cpuBefore = cpuSeconds(gatewayProcess);
                jitBefore = jitSeconds(gatewayProcess);
                List<CompletableFuture<?>> acked = new ArrayList<>();
                for (Client c : clients) {
                    c.sendReports(ops);
                    acked.add(c.acked.handle((v, e) -> null));
                }
                awaitAll(acked, "report acknowledgements");
                seconds = (System.nanoTime() - start) / 1e9;
            } finally {
                signal(held, "CONT");
            }
            int roundAcks = clients.stream().mapToInt(c -> c.acks.get()).sum();
            double cpu = cpuSeconds(gatewayProcess) - cpuBefore;
            double jit = jitSeconds(gatewayProcess) - jitBefore;
            if (timed) {
                rates.add(roundAcks / seconds);
                perCpuSecond.add(roundAcks / cpu);
                perCpuSecondWithoutJit.add(roundAcks / (cpu - jit));
                jitShares.add(jit / cpu);
            }
            say("  " + name + ": " + Math.round(roundAcks / seconds) + " reports acknowledged a second, "
                    + Math.round(roundAcks / cpu) + " a second of the gateway's CPU, "
                    + Math.round(100 * jit / cpu) + "% of that CPU its JIT compiler's");
            // outside the round's time: the sessions that did not get all their acknowledgements, and why
            List<String> lost = clients.stream().filter(c -> c.acks.get() < OPS_PER_SESSION)
                    .map(c -> c.acks.get() + " acks, " + c.errors.get() + " errors, " + (c.closed ? "closed with " + c.closeCode : "open")).toList();
            if (!lost.isEmpty()) {
                say("  " + name + ": " + lost.size() + " sessions without all their acknowledgements: " + lost.subList(0, Math.min(5, lost.size())));
            }
            sayTransportErrors("  " + name, clients);
            firstRound = round == 0 ? roundAcks / seconds : firstRound;
            ackCount += roundAcks;
            errors += clients.stream().mapToInt(c -> c.errors.get()).sum();
            opened = clients.size();
            if (!clients.isEmpty()) {
                frames = clients.get(0).reportFrames(ops);
            }
            clients.forEach(Client::close);
            awaitNoConnections();
        }
        double reportsPerS = Percentiles.median(rates);
        double[] echoed = echo(opened, frames);
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("report_warm_up_rounds", warmUpRounds);
        f.put("report_rounds", rounds);
        f.put("zoo_held_in_rounds", !held.isEmpty());
        f.put("report_sessions", opened);
        f.put("reports_acked", ackCount);
        f.put("report_errors", errors);
        f.put("reports_per_s", roundKeepingNaN(reportsPerS, 0));
        f.put("reports_first_round_per_s", roundKeepingNaN(firstRound, 0));
        f.put("reports_per_gateway_cpu_s", roundKeepingNaN(Percentiles.median(perCpuSecond), 0));
        f.put("reports_per_gateway_cpu_s_without_jit", roundKeepingNaN(Percentiles.median(perCpuSecondWithoutJit), 0));
        f.put("gateway_jit_cpu_share", roundKeepingNaN(Percentiles.median(jitShares), 3));
        f.put("echo_frames_per_s", roundKeepingNaN(echoed[0], 0));
        f.put("echo_frames_per_cpu_s", roundKeepingNaN(echoed[1], 0));
        f.put("speedup_vs_echo", roundKeepingNaN(reportsPerS / echoed[0], 3));
        f.put("cpu_speedup_vs_echo", roundKeepingNaN(Percentiles.median(perCpuSecond) / echoed[1], 3));
        return f;
    }

    /**
     * Frames a second a bare Vert.x echo server sends back (as many connections, the same frames,
     * all sent at once), and frames per second of its CPU time: the median of three rounds each.
     */
    private double[] echo(int connections, List<byte[]> frames) throws Exception {
        if (connections == 0 || frames.isEmpty()) {
            return new double[] {Double.NaN, Double.NaN};
        }
        say("echo: the same " + connections + " connections and frames against a bare Vert.x WebSocket echo server");
        Process server = new ProcessBuilder(Suite.javaMain(EchoServer.class, List.of("-Xmx1g")))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String port = new BufferedReader(new InputStreamReader(server.getInputStream())).readLine();
            if (port == null) {
                throw new IllegalStateException("the echo server did not start");
            }
            URI echo = URI.create("ws://127.0.0.1:" + port.trim() + "/");
            List<Double> rates = new ArrayList<>();
            List<Double> perCpuSecond = new ArrayList<>();
            for (int round = 0; round < 3; round++) { // the median of three: one round is short
                List<Client> clients = new ArrayList<>();
                for (int i = 0; i < connections; i++) {
                    clients.add(open(echo, null).get(30, TimeUnit.SECONDS));
                }
                long start = System.nanoTime();
                double cpuBefore = CpuSampler.seconds(server.toHandle());
                List<CompletableFuture<?>> answered = new ArrayList<>();
                for (Client c : clients) {
                    c.expectEchoes(frames.size());
                    frames.forEach(c::sendRaw);
                    answered.add(c.acked);
                }
                awaitAll(answered, "echoes");
                rates.add(connections * (double) frames.size() / ((System.nanoTime() - start) / 1e9));
                perCpuSecond.add(connections * (double) frames.size() / (CpuSampler.seconds(server.toHandle()) - cpuBefore));
                // closed before the server goes: one killed under open connections logs a reset for each
                Future.join(clients.stream().map(Client::close).toList()).toCompletionStage().toCompletableFuture()
                        .handle((v, e) -> null).get(30, TimeUnit.SECONDS);
                sayTransportErrors("  echo round " + (round + 1), clients);
            }
            return new double[] {Percentiles.median(rates), Percentiles.median(perCpuSecond)};
        } finally {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Sessions opened as fast as the gateway takes them, tuned to the end, and kept open; then the gateway's heap. */
    private Map<String, Object> held(int sessions) throws Exception {
        awaitNoConnections();
        double baseline = heapAfterGc();
        say("held: " + sessions + " sessions opened, tuned to the end and kept open");
        long start = System.nanoTime();
        List<Client> clients = openAll(sessions, () -> hello(List.of(burstOp()), 1000), "held sessions");
        List<CompletableFuture<?>> done = clients.stream().<CompletableFuture<?>>map(c -> c.done.handle((v, e) -> null)).toList();
        awaitAll(done, "held sessions' offers");
        double openS = (System.nanoTime() - start) / 1e9;
        Thread.sleep(1000);
        long open = clients.stream().filter(Client::isOpen).count();
        Metrics metrics = metrics();
        double heap = heapAfterGc();
        clients.forEach(Client::close);
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("sessions_target", sessions);
        f.put("sessions_held", open);
        f.put("gateway_sessions", (int) metrics.get("jitzoo_gateway_sessions", Double.NaN));
        f.put("held_open_s", roundKeepingNaN(openS, 1));
        f.put("heap_used_bytes", (long) heap);
        f.put("heap_baseline_bytes", (long) baseline);
        f.put("heap_max_bytes", metrics.values("jvm_memory_max_bytes", "area=\"heap\"").filter(v -> v > 0).sum());
        f.put("heap_per_session_bytes", open == 0 ? 0 : (long) ((heap - baseline) / open));
        f.put("gateway_rss_bytes", process.get().map(CpuSampler::residentBytes).orElse(-1L));
        return f;
    }

    // ---- clients ----

    /** Opens sessions with at most {@link #OPENING} opening at once; those refused or failed are left out. */
    private List<Client> openAll(int sessions, java.util.function.Supplier<byte[]> hello, String what) throws Exception {
        Semaphore opening = new Semaphore(OPENING);
        ConcurrentLinkedQueue<Client> clients = new ConcurrentLinkedQueue<>();
        AtomicInteger failed = new AtomicInteger();
        long deadline = System.currentTimeMillis() + phaseTimeoutMs;
        long lastSaid = System.currentTimeMillis();
        for (int i = 0; i < sessions && System.currentTimeMillis() < deadline; i++) {
            if (!opening.tryAcquire(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS)) {
                break;
            }
            open(gateway, hello.get()).whenComplete((c, e) -> {
                if (e == null) {
                    clients.add(c);
                } else {
                    failed.incrementAndGet();
                }
                opening.release(); // after the count: the last permit back means every open is counted
            });
            if (System.currentTimeMillis() - lastSaid > 5000) {
                lastSaid = System.currentTimeMillis();
                say("  " + what + ": " + clients.size() + " welcomed of " + sessions + (failed.get() > 0 ? ", " + failed + " refused" : ""));
            }
        }
        opening.tryAcquire(OPENING, Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
        if (failed.get() > 0) {
            say("  " + what + ": " + failed + " not welcomed (refused, failed or timed out)");
        }
        return new ArrayList<>(clients);
    }

    /**
     * A connection from an address of its own (X-Forwarded-For, which the bench's gateway trusts)
     * that sends {@code hello} once open; completes when the Welcome comes (at once for an echo
     * connection, {@code hello} null), fails on an Error frame or a close before it.
     */
    private CompletableFuture<Client> open(URI target, byte[] hello) {
        Client c = new Client();
        int n = addresses.incrementAndGet();
        WebSocketConnectOptions options = new WebSocketConnectOptions().setHost(target.getHost()).setPort(target.getPort())
                .setURI(target.getRawPath() + (target.getRawQuery() == null ? "" : "?" + target.getRawQuery()))
                .addHeader("X-Forwarded-For", "10." + (n >> 16 & 255) + "." + (n >> 8 & 255) + "." + (n & 255));
        Future<WebSocket> connected = client.connect(options);
        connected.onSuccess(ws -> {
            c.ws = ws;
            ws.binaryMessageHandler(c::onFrame);
            ws.closeHandler(v -> c.onClose(ws.closeStatusCode() == null ? 1006 : ws.closeStatusCode()));
            // kept with the client (and told once a phase), not logged by Vert.x once a connection
            ws.exceptionHandler(e -> c.transportError = e.toString());
            if (hello == null) {
                c.welcome.complete(c);
            } else {
                c.helloNs = System.nanoTime();
                ws.writeBinaryMessage(Buffer.buffer(hello));
            }
        }).onFailure(c.welcome::completeExceptionally);
        return c.welcome.orTimeout(phaseTimeoutMs, TimeUnit.MILLISECONDS);
    }

    /** How many of the clients' connections failed in transport (after the frames counted), and the first reason. */
    private static void sayTransportErrors(String phase, List<Client> clients) {
        List<String> failed = clients.stream().map(c -> c.transportError).filter(java.util.Objects::nonNull).toList();
        if (!failed.isEmpty()) {
            say(phase + ": " + failed.size() + " connections ended with a transport error (" + failed.get(0) + ")");
        }
    }

    /** One session's connection and what came back on it. */
    private static final class Client {
        final CompletableFuture<Client> welcome = new CompletableFuture<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final CompletableFuture<Void> acked = new CompletableFuture<>();
        final AtomicInteger acks = new AtomicInteger();
        final AtomicInteger offers = new AtomicInteger();
        final AtomicInteger errors = new AtomicInteger();
        /** The connection's last transport failure (a reset by the peer), null when none. */
        volatile String transportError;
        volatile WebSocket ws;
        volatile long helloNs;
        volatile double welcomeMs;
        volatile int expected;
        volatile boolean closed;
        volatile int closeCode;
        volatile List<String> initial = List.of();
        volatile boolean echo;

        void onFrame(Buffer data) {
            if (echo) {
                if (acks.incrementAndGet() == expected) {
                    acked.complete(null);
                }
                return;
            }
            ServerFrame frame;
            try {
                frame = ServerFrame.parseFrom(data.getBytes());
            } catch (Exception e) {
                errors.incrementAndGet();
                return;
            }
            switch (frame.getFrameCase()) {
                case WELCOME -> {
                    welcomeMs = (System.nanoTime() - helloNs) / 1e6;
                    initial = frame.getWelcome().getInitialList().stream().map(k -> k.getArtifact().getRef().getKernelId()).toList();
                    welcome.complete(this);
                }
                case OFFER -> offers.incrementAndGet();
                case OFFERS_DONE -> done.complete(null);
                case REPORT_ACK -> {
                    if (acks.incrementAndGet() == expected) {
                        acked.complete(null);
                    }
                }
                case ERROR -> {
                    errors.incrementAndGet();
                    RuntimeException refused = new IllegalStateException(frame.getError().getCode() + ": " + frame.getError().getMessage());
                    welcome.completeExceptionally(refused);
                    if (expected > 0 && acks.get() + errors.get() >= expected) {
                        acked.complete(null);
                    }
                }
                default -> { }
            }
        }

        void onClose(int code) {
            closeCode = code;
            closed = true;
            IllegalStateException gone = new IllegalStateException("closed with " + code);
            welcome.completeExceptionally(gone);
            done.completeExceptionally(gone);
            acked.completeExceptionally(gone);
        }

        boolean isOpen() {
            return !closed && ws != null && !ws.isClosed();
        }

        /** One report per op, ranking the op's Welcome kernel, all sent at once. */
        void sendReports(List<OpSpec> ops) {
            expected = ops.size();
            reportFrames(ops).forEach(this::sendRaw);
        }

        List<byte[]> reportFrames(List<OpSpec> ops) {
            List<byte[]> frames = new ArrayList<>();
            for (int i = 0; i < ops.size(); i++) {
                frames.add(ClientFrame.newBuilder().setReport(Report.newBuilder().setOp(ops.get(i)).addRanked(RankedKernel.newBuilder()
                        .setKernelId(initial.get(i)).setMedianMs(0.05 + 0.001 * i).setSamples(7))).build().toByteArray());
            }
            return frames;
        }

        void expectEchoes(int count) {
            echo = true;
            expected = count;
        }

        void sendRaw(byte[] frame) {
            ws.writeBinaryMessage(Buffer.buffer(frame));
        }

        Future<Void> close() {
            return ws != null && !ws.isClosed() ? ws.close() : Future.succeededFuture();
        }
    }

    // ---- frames ----

    private OpSpec burstOp() {
        return matmul(128, 256, 96);
    }

    private static OpSpec matmul(int m, int k, int n) {
        return OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(k).addShape(n).build();
    }

    private byte[] hello(List<OpSpec> ops, int credits) {
        return ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(ProtocolVersion.PROTOCOL_VERSION_CURRENT_VALUE).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("bench-gateway-" + run).setUserAgent("jitzoo-bench")
                        .setLogicalCores(4).setWasm(WasmFeatures.newBuilder().setSimd(true))).addAllOps(ops).setCredits(credits))
                .build().toByteArray();
    }

    // ---- the gateway's side ----

    private Metrics metrics() throws Exception {
        return Metrics.read(http, "http://" + gateway.getHost() + ":" + gateway.getPort());
    }

    /** Waits until the gateway's offer queues stop growing: generation for sessions without credit has parked. */
    private void awaitQuiet() throws Exception {
        double last = -1;
        for (long deadline = System.currentTimeMillis() + phaseTimeoutMs; System.currentTimeMillis() < deadline; ) {
            double queued = metrics().get("jitzoo_gateway_offers_queued", 0.0);
            if (queued == last) {
                say("  " + (long) queued + " offers queued for credit; generation has parked");
                return;
            }
            last = queued;
            Thread.sleep(1000);
        }
    }

    /**
     * The zoo and its store: off a report's acknowledgement path (the gateway acknowledges once the
     * broker has the record), yet on this machine's two cores their ingest of the rounds' reports
     * took more CPU than the gateway itself. A timed round holds them (SIGSTOP), as if they ran on
     * machines of their own, and lets them go on (SIGCONT) after it: they catch up while the next
     * round's sessions open. {@code --zoo-ingesting} leaves them running.
     */
    private static final List<String> OFF_THE_ACK_PATH = List.of("zoo", "mongo");

    private static void signal(List<ProcessHandle> processes, String signal) throws Exception {
        if (processes.isEmpty()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        processes.forEach(p -> command.add(String.valueOf(p.pid())));
        Process kill = new ProcessBuilder(command).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed");
        }
    }

    private void awaitNoConnections() throws Exception {
        for (long deadline = System.currentTimeMillis() + 30_000; System.currentTimeMillis() < deadline; Thread.sleep(200)) {
            if (metrics().get("jitzoo_gateway_connections", 0.0) == 0) {
                return;
            }
        }
    }

    /** CPU seconds the gateway has used so far; NaN where its process or the system does not say. */
    private static double cpuSeconds(Optional<ProcessHandle> gateway) {
        return gateway.map(CpuSampler::seconds).orElse(Double.NaN);
    }

    /** CPU seconds of the gateway's JIT compiler threads (BenchCli keeps them alive: -XX:-UseDynamicNumberOfCompilerThreads). */
    private static double jitSeconds(Optional<ProcessHandle> gateway) {
        return gateway.map(g -> CpuSampler.threadSeconds(g, CpuSampler.JIT_THREADS)).orElse(Double.NaN);
    }

    /** The gateway's heap in use right after a full GC (jcmd on its pid). */
    private double heapAfterGc() throws Exception {
        Optional<ProcessHandle> gateway = process.get();
        if (gateway.isPresent()) {
            Process gc = new ProcessBuilder("jcmd", String.valueOf(gateway.get().pid()), "GC.run").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            gc.waitFor(60, TimeUnit.SECONDS);
        }
        return metrics().values("jvm_memory_used_bytes", "area=\"heap\"").sum();
    }

    // ---- figures ----

    private void awaitAll(List<CompletableFuture<?>> futures, String what) throws Exception {
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(phaseTimeoutMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            say("  " + what + ": not all finished within " + phaseTimeoutMs / 1000 + " s; counting those that did");
        }
    }

    /** The table of the phases run, always; with {@code --json}, the JSON line after it. */
    private static void print(Map<String, Object> f, boolean json) {
        System.out.println("gateway bench (one gateway, 1 GB heap; clients on loopback, each from an address of its own)");
        if (f.containsKey("sessions_held")) {
            System.out.printf("""
                      sessions held        %s of %s (the gateway counted %s), opened and tuned in %s s
                      heap after full GC   %.0f MB with them, %.0f MB before (%s bytes a session); max %.0f MB
                      process memory       %.0f MB resident (heap, metaspace, code, thread stacks, direct buffers)
                    """,
                    f.get("sessions_held"), f.get("sessions_target"), f.get("gateway_sessions"), f.get("held_open_s"),
                    megabytes(f.get("heap_used_bytes")), megabytes(f.get("heap_baseline_bytes")), f.get("heap_per_session_bytes"),
                    megabytes(f.get("heap_max_bytes")), megabytes(f.get("gateway_rss_bytes")));
        }
        if (f.containsKey("burst_sessions")) {
            System.out.printf("""
                      Welcome, burst       %s sessions in %s s: p50 %s ms, p99 %s ms, max %s ms (%s not welcomed)
                      offer latency        from codegen's kernel to its frame written: p50 %s ms, p99 %s ms (%s offers in the burst)
                    """,
                    f.get("burst_sessions"), f.get("burst_seconds"), f.get("welcome_p50_ms"), f.get("welcome_p99_ms"), f.get("welcome_max_ms"),
                    f.get("burst_refused"), f.get("offer_p50_ms"), f.get("offer_p99_ms"), f.get("burst_offers"));
        }
        if (f.containsKey("report_sessions")) {
            System.out.printf("""
                      reports              %s acknowledged a second, median of %s rounds after %s untimed (first %s; %s from %s sessions a round, %s errors; zoo held: %s)
                      echo baseline        %s frames a second, bare Vert.x, same connections and frames: gateway at %s of it
                      per CPU second       the gateway acknowledges %s reports a second of its own CPU; the echo server echoes %s frames: %s of it
                      JIT                  %s of the gateway's CPU in the rounds went to its JIT compiler (median); without it, %s reports a CPU second
                    """,
                    f.get("reports_per_s"), f.get("report_rounds"), f.get("report_warm_up_rounds"), f.get("reports_first_round_per_s"), f.get("reports_acked"),
                    f.get("report_sessions"), f.get("report_errors"), f.get("zoo_held_in_rounds"),
                    f.get("echo_frames_per_s"), f.get("speedup_vs_echo"), f.get("reports_per_gateway_cpu_s"), f.get("echo_frames_per_cpu_s"),
                    f.get("cpu_speedup_vs_echo"),
                    f.get("gateway_jit_cpu_share"), f.get("reports_per_gateway_cpu_s_without_jit"));
        }
        if (json) {
            System.out.println(BenchReport.json(f));
        }
    }

    private static double megabytes(Object bytes) {
        return ((Number) bytes).doubleValue() / 1e6;
    }
}
