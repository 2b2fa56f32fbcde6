package dev.jitzoo.cli.suite;

import dev.jitzoo.tenant.ApiKeys;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * How a service of the suite runs on this machine: its fast-jar in a JVM of its own, told its port
 * and the stack's addresses, its output appended to a log, ready when its readiness check answers.
 * {@code ./jitzoo up} starts the four through {@link LaunchCommand}; {@code bench scale} starts more
 * instances beside them. {@code ./jitzoo} keeps the same default ports for the parts it starts
 * itself (Redis, Kafka, MongoDB) and for {@code status}.
 */
public final class ServiceLauncher {

    /** The services, in the order {@code ./jitzoo up} starts them. */
    public static final List<String> SERVICES = List.of("space", "codegen", "zoo", "gateway");

    /**
     * A service's JVM options unless {@code JITZOO_<NAME>_JAVA_OPTS} replaces them: a small heap, so
     * a laptop runs all four; the serial collector for the services that compute (space, codegen).
     */
    public static final String JAVA_OPTS = "-Xmx384m -XX:+UseSerialGC";
    /**
     * The same heap on G1 with a pause target for the services that answer on a latency target:
     * the zoo's Resolve (the serial collector's full collections as it starts paused it 99–146 ms
     * in {@code bench zoo}, G1's at most 33 ms) and the gateway's sessions (as the chart and
     * {@code bench gateway} run it).
     */
    public static final Map<String, String> LATENCY_JAVA_OPTS = Map.of(
            "zoo", "-Xmx384m -XX:+UseG1GC -XX:MaxGCPauseMillis=10",
            "gateway", "-Xmx384m -XX:+UseG1GC -XX:MaxGCPauseMillis=20");

    /** How long a service may take to become ready. */
    public static final Duration READY_TIMEOUT = Duration.ofMinutes(2);

    /** Where services listen unless told otherwise, and where they are probed. */
    public static final String LOOPBACK = "127.0.0.1";

    private static final Map<String, Integer> DEFAULT_PORTS = Map.of("gateway", 8080, "space", 8081, "codegen", 8082,
            "zoo", 8083, "redis", 6390, "kafka", 9092, "mongo", 27018);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();

    private final Path root;
    private final Path home;
    private final Map<String, String> env;

    /** The services of the checkout {@code root}, with logs and pids under {@code home}, configured by {@code env}. */
    public ServiceLauncher(Path root, Path home, Map<String, String> env) {
        this.root = root;
        this.home = home;
        this.env = Map.copyOf(env);
    }

    /** This checkout's services, as this process's environment configures them. */
    public static ServiceLauncher here() {
        Suite suite = Suite.here();
        return new ServiceLauncher(suite.root(), suite.home(), System.getenv());
    }

    // ---- what a service is told ----

    /** A service's or part's port: {@code JITZOO_<NAME>_PORT}, else its default. */
    public int port(String part) {
        Integer otherwise = DEFAULT_PORTS.get(part);
        if (otherwise == null) {
            throw new IllegalArgumentException("no port for '" + part + "'; known: " + DEFAULT_PORTS.keySet());
        }
        return Integer.parseInt(setting(portVariable(part), String.valueOf(otherwise)));
    }

    /** The variable that moves a service's or part's port. */
    public static String portVariable(String part) {
        return variable(part, "PORT");
    }

    public String mongoUri() {
        return setting("JITZOO_MONGO_URI", "mongodb://" + LOOPBACK + ":" + port("mongo"));
    }

    public String redisUri() {
        return setting("JITZOO_REDIS_URI", "redis://" + LOOPBACK + ":" + port("redis"));
    }

    public String kafkaBootstrap() {
        return setting("JITZOO_KAFKA_BOOTSTRAP", LOOPBACK + ":" + port("kafka"));
    }

    /** The service's fast-jar, as Maven builds it: {@code gateway/} or {@code <name>-service/}. */
    public Path jar(String service) {
        return root.resolve(service.equals("gateway") ? "gateway" : service + "-service").resolve("target/quarkus-app/quarkus-run.jar");
    }

    /** {@code JITZOO_<NAME>_JAVA_OPTS}, else {@link #LATENCY_JAVA_OPTS} or {@link #JAVA_OPTS}; split at white space. */
    public List<String> javaOptions(String service) {
        return List.of(setting(variable(service, "JAVA_OPTS"), LATENCY_JAVA_OPTS.getOrDefault(service, JAVA_OPTS)).trim().split("\\s+"));
    }

    /** What a service listening on {@code port} is told: the port, the parts' addresses, the other services' ports. */
    public Map<String, String> environment(int port) {
        Map<String, String> told = new LinkedHashMap<>();
        told.put("QUARKUS_HTTP_PORT", String.valueOf(port));
        // loopback only unless told otherwise: a laptop's suite is not served to its network
        told.put("QUARKUS_HTTP_HOST", setting("JITZOO_BIND_HOST", LOOPBACK));
        // on one machine every device is one network origin: the zoo serves one device's election
        told.put("JITZOO_ZOO_MIN_ORIGINS", setting("JITZOO_ZOO_MIN_ORIGINS", "1"));
        for (String quota : List.of("SESSIONS", "REPORTS", "PLAN_REQUESTS")) { // per address: here, every device is one
            String name = "JITZOO_GATEWAY_ADDRESS_" + quota + "_PER_MINUTE";
            told.put(name, setting(name, "0"));
        }
        told.put("JITZOO_ZOO_ADMIN_TOKEN", adminToken());
        told.put("JITZOO_GATEWAY_ORIGIN_SALT", secretSetting("JITZOO_GATEWAY_ORIGIN_SALT", "origin-salt"));
        told.put("JITZOO_MONGO_URI", mongoUri());
        told.put("JITZOO_REDIS_URI", redisUri());
        told.put("JITZOO_KAFKA_BOOTSTRAP", kafkaBootstrap());
        for (String peer : List.of("zoo", "space", "codegen")) {
            told.put(portVariable(peer), String.valueOf(port(peer)));
        }
        return told;
    }

    // ---- what runs here ----

    public Path home() {
        return home;
    }

    public Path logs() {
        return home.resolve("logs");
    }

    /** Where {@code ./jitzoo up} records the pid of a part or service it started. */
    public Path pidFile(String part) {
        return home.resolve("run").resolve(part + ".pid");
    }

    /** The live process a pid file names; empty when there is no such file, or its process has ended. */
    public Optional<ProcessHandle> running(String part) {
        try {
            return ProcessHandle.of(Long.parseLong(Files.readString(pidFile(part)).trim())).filter(ProcessHandle::isAlive);
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Every live process with a pid file, by the name of its part or service. */
    public Map<String, ProcessHandle> running() {
        Map<String, ProcessHandle> all = new LinkedHashMap<>();
        try (Stream<Path> pids = Files.list(home.resolve("run"))) {
            pids.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".pid")).map(f -> f.substring(0, f.length() - 4))
                    .forEach(part -> running(part).ifPresent(h -> all.put(part, h)));
        } catch (IOException e) {
            // nothing recorded here
        }
        return all;
    }

    // ---- starting and stopping ----

    /** A service as {@code ./jitzoo up} runs it: on its own port, output to logs/NAME.log, outliving this JVM. */
    public Launch launch(String service) {
        return new Launch(service, service, null, port(service), Map.of(), List.of(), logs().resolve(service + ".log"), true);
    }

    /**
     * Starts an instance; it is not waited for ({@link Instance#awaitReady}). Its environment is this
     * process's, with the service's settings and then {@code launch.env()} over it.
     */
    public Instance start(Launch launch) {
        Path jar = jar(launch.service());
        if (!Files.isRegularFile(jar)) {
            throw new Suite.StepFailed(jar + " is missing; the build did not produce it");
        }
        List<String> command = new ArrayList<>();
        if (launch.detached()) {
            command.add("nohup"); // a hang-up of the terminal that ran ./jitzoo up does not stop it
        }
        command.add("java");
        command.addAll(javaOptions(launch.service()));
        command.addAll(launch.jvm());
        command.addAll(List.of("-jar", jar.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(launch.log().toFile()));
        builder.environment().putAll(environment(launch.port()));
        builder.environment().putAll(launch.env());
        if (launch.host() != null) {
            builder.environment().put("QUARKUS_HTTP_HOST", launch.host());
        }
        try {
            Files.createDirectories(launch.log().getParent());
            Process process = builder.start();
            return new Instance(launch.name(), launch.host() == null ? LOOPBACK : launch.host(), launch.port(),
                    Optional.of(process.toHandle()), launch.log());
        } catch (IOException e) {
            throw new Suite.StepFailed("could not start " + launch.name() + ": " + e.getMessage());
        }
    }

    /** Asks every instance to stop, then gives each {@code grace} to end before it is killed. */
    public static void stop(Collection<Instance> instances, Duration grace) {
        instances.forEach(i -> i.process().ifPresent(ProcessHandle::destroy));
        for (Instance i : instances) {
            i.process().ifPresent(p -> {
                try {
                    p.onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException | ExecutionException e) {
                    p.destroyForcibly();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
    }

    // ---- probes ----

    /** Whether a service's readiness check answers 200. */
    public static boolean ready(String host, int port) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/q/health/ready")).timeout(PROBE_TIMEOUT)
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether anything accepts connections there. */
    public static boolean listening(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) PROBE_TIMEOUT.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The zoo's admin token: {@code JITZOO_ZOO_ADMIN_TOKEN}, else the one kept in {@code admin-token}
     * under the home, written at random (readable by its owner only) the first time it is asked for.
     */
    public String adminToken() {
        return secretSetting("JITZOO_ZOO_ADMIN_TOKEN", "admin-token");
    }

    /** A secret's setting: the variable when set, else the one kept in a file of the home (made on first use only then). */
    private String secretSetting(String variable, String file) {
        String given = env.get(variable);
        return given == null || given.isBlank() ? secret(file) : given;
    }

    /** A random secret kept in a file of the home: read back, or made and written (owner-only) on first use. */
    private String secret(String name) {
        Path file = home.resolve(name);
        try {
            if (Files.exists(file)) {
                return Files.readString(file, StandardCharsets.UTF_8).trim();
            }
            String value = ApiKeys.secret();
            Files.createDirectories(home);
            Files.writeString(file, value + "\n", StandardCharsets.UTF_8);
            try {
                Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: the home's own permissions guard it
            }
            return value;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot keep " + file, e);
        }
    }

    private String setting(String name, String otherwise) {
        String value = env.get(name);
        return value == null || value.isBlank() ? otherwise : value;
    }

    private static String variable(String part, String what) {
        return "JITZOO_" + part.toUpperCase(Locale.ROOT) + "_" + what;
    }

    /**
     * One instance to start: {@code service}'s jar as {@code name}, its HTTP server on {@code host}
     * (null: the service's own default, probed on {@link #LOOPBACK}) and {@code port}, with
     * {@code env} over its environment and {@code jvm} after its JVM options, its output appended to
     * {@code log}. A {@code detached} one outlives this JVM.
     */
    public record Launch(String service, String name, String host, int port, Map<String, String> env, List<String> jvm, Path log,
                         boolean detached) {
    }

    /** A started or found instance: where it answers, its process where known, its log. */
    public record Instance(String name, String host, int port, Optional<ProcessHandle> process, Path log) {

        /** Waits until its readiness check answers; fails when its process ends first, or after {@code timeout}. */
        public Instance awaitReady(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!ready(host, port)) {
                if (process.map(p -> !p.isAlive()).orElse(false) || System.nanoTime() > deadline) {
                    throw new NotReady(this);
                }
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new NotReady(this);
                }
            }
            return this;
        }

        /** The last {@code n} lines of its log; none when it cannot be read. */
        public List<String> lastLines(int n) {
            try {
                List<String> lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
                return lines.subList(Math.max(0, lines.size() - n), lines.size());
            } catch (IOException e) {
                return List.of();
            }
        }
    }

    /** An instance that did not become ready; its log says why. */
    public static final class NotReady extends Suite.StepFailed {
        private final transient Instance instance;

        NotReady(Instance instance) {
            super(instance.name() + " did not become ready; see " + instance.log());
            this.instance = instance;
        }

        public Instance instance() {
            return instance;
        }
    }
}
