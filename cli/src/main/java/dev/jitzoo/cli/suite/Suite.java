package dev.jitzoo.cli.suite;

import dev.jitzoo.cli.Jitzoo;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Where the suite lives on this machine and how its parts are run from the command line: the
 * checkout, {@code JITZOO_HOME}, child processes with their output passed through, this jar's own
 * commands in process, the harness, and a private stack on other ports ({@code ./jitzoo up}, whose
 * services {@link ServiceLauncher} starts).
 */
public final class Suite {

    /** The ports of a private stack, apart from a user's {@code ./jitzoo up}. */
    private static final Map<String, String> PRIVATE_PORTS = Map.of(
            "JITZOO_GATEWAY_PORT", "18080", "JITZOO_SPACE_PORT", "18081", "JITZOO_CODEGEN_PORT", "18082",
            "JITZOO_ZOO_PORT", "18083", "JITZOO_REDIS_PORT", "16390", "JITZOO_KAFKA_PORT", "19092",
            "JITZOO_KAFKA_CONTROLLER_PORT", "19093", "JITZOO_MONGO_PORT", "27118");

    private final Path root;

    private Suite(Path root) {
        this.root = root;
    }

    /** The checkout: {@code JITZOO_ROOT}, else the folder two above this jar's (cli/target/jitzoo-cli.jar, .jitzoo/cli/jitzoo-cli.jar). */
    public static Suite here() {
        String env = System.getenv("JITZOO_ROOT");
        if (env != null && !env.isBlank()) {
            return new Suite(Path.of(env).toAbsolutePath());
        }
        try {
            Path jar = Path.of(Suite.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return new Suite(jar.getParent().getParent().getParent());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public Path root() {
        return root;
    }

    public Path path(String relative) {
        return root.resolve(relative);
    }

    /** Logs, pids, data, microbenchmark results: {@code JITZOO_HOME}, else {@code .jitzoo} in the checkout. */
    public Path home() {
        String env = System.getenv("JITZOO_HOME");
        return env != null && !env.isBlank() ? Path.of(env) : root.resolve(".jitzoo");
    }

    public static void say(String message) {
        System.err.println("\033[1mjitzoo:\033[0m " + message);
    }

    /** Runs a command with this process's output, in {@code dir}; fails with {@code what} if it does not exit 0. */
    public void run(String what, Path dir, Map<String, String> env, List<String> command) {
        int status = exitOf(dir, env, command);
        if (status != 0) {
            throw new StepFailed(what + " failed (exit " + status + ")");
        }
    }

    public void run(String what, Path dir, List<String> command) {
        run(what, dir, Map.of(), command);
    }

    /** The exit status of a command run with this process's output. */
    public int exitOf(Path dir, Map<String, String> env, List<String> command) {
        return exitOf(dir, env, command, ProcessBuilder.Redirect.INHERIT);
    }

    private int exitOf(Path dir, Map<String, String> env, List<String> command, ProcessBuilder.Redirect stdout) {
        return start(dir, env, command, stdout, process -> null).status();
    }

    /** What a command prints on its standard output (its errors pass through); fails as {@link #run} does. */
    public String output(String what, List<String> command) {
        return output(what, command, Map.of());
    }

    public String output(String what, List<String> command, Map<String, String> env) {
        Finished<String> done = start(root, env, command, ProcessBuilder.Redirect.PIPE,
                process -> new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        if (done.status() != 0) {
            throw new StepFailed(what + " failed (exit " + done.status() + ")");
        }
        return done.output();
    }

    private record Finished<T>(int status, T output) {
    }

    private interface Reader<T> {
        T read(Process process) throws IOException;
    }

    /** Runs a command to its end, stdin and stderr passed through, stdout as asked; {@code read} takes what it printed. */
    private static <T> Finished<T> start(Path dir, Map<String, String> env, List<String> command, ProcessBuilder.Redirect stdout,
                                         Reader<T> read) {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).inheritIO().redirectOutput(stdout);
        builder.environment().putAll(env);
        try {
            Process process = builder.start();
            T output = read.read(process);
            return new Finished<>(process.waitFor(), output);
        } catch (IOException e) {
            throw new StepFailed("could not run " + command.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StepFailed("interrupted");
        }
    }

    /** One of this jar's commands, in this process; its standard output to {@code out} when given. */
    public void jitzoo(Path out, String... args) {
        var cli = Jitzoo.commandLine();
        int status;
        if (out == null) {
            status = cli.execute(args);
        } else {
            try (PrintWriter file = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
                status = cli.setOut(file).execute(args);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (status != 0) {
            throw new StepFailed("jitzoo " + String.join(" ", args) + " failed (exit " + status + ")");
        }
    }

    public void jitzoo(String... args) {
        jitzoo(null, args);
    }

    /** The kernel harness (Node), steady-state V8 flags; extra environment for WebGPU. */
    public void harness(String what, Map<String, String> env, String... args) {
        run(what, root, env, harnessCommand(args));
    }

    /** What the harness prints on its standard output. */
    public String harnessOutput(String what, Map<String, String> env, String... args) {
        return output(what, harnessCommand(args), env);
    }

    /** {@code java OPTIONS -cp <this jar and its lib> MAIN}: a class of this jar in a JVM of its own. */
    public static List<String> javaMain(Class<?> main, List<String> options) {
        Path jar;
        try {
            jar = Path.of(main.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        List<String> command = new ArrayList<>(List.of("java"));
        command.addAll(options);
        command.addAll(List.of("-cp", jar + java.io.File.pathSeparator + jar.resolveSibling("lib") + "/*", main.getName()));
        return command;
    }

    private List<String> harnessCommand(String... args) {
        return concat(List.of("node", "--no-liftoff", "--no-wasm-dynamic-tiering", path("harness/bin/harness.mjs").toString()), args);
    }

    public void harness(String what, String... args) {
        harness(what, Map.of(), args);
    }

    /**
     * Runs {@code body} in a fresh temporary directory, removed after; when the body fails, the
     * directory is kept, and named, for a look at what it held.
     */
    public static void inTempDir(String prefix, java.util.function.Consumer<Path> body) {
        Path dir = tempDir(prefix);
        try {
            body.accept(dir);
        } catch (RuntimeException e) {
            say("kept " + dir);
            throw e;
        }
        remove(dir);
    }

    /** A fresh temporary directory, removed by {@link #remove}. */
    public static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void remove(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            say("could not remove " + dir + ": " + e.getMessage());
        }
    }

    /**
     * Runs a command against a private stack: a fresh home, other ports, torn down after. The
     * command finds the gateway at {@code JITZOO_GATEWAY_URL} and the zoo's HTTP API at
     * {@code JITZOO_ZOO_HTTP}; {@code extra} adds settings for the stack and the command.
     */
    public void withPrivateStack(String what, Map<String, String> extra, Path dir, List<String> command) {
        withPrivate(what, false, extra, dir, command);
    }

    /**
     * Runs a command beside a private stack's stores alone ({@code ./jitzoo up stores}), for services
     * run elsewhere (pods): the command finds them at {@code JITZOO_MONGO_URI}, {@code JITZOO_REDIS_URI}
     * and {@code JITZOO_KAFKA_BOOTSTRAP}.
     */
    public void withPrivateStores(String what, Map<String, String> extra, Path dir, List<String> command) {
        withPrivate(what, true, extra, dir, command);
    }

    private void withPrivate(String what, boolean storesOnly, Map<String, String> extra, Path dir, List<String> command) {
        Path home = tempDir("jitzoo-private.");
        Map<String, String> env = new java.util.HashMap<>(PRIVATE_PORTS);
        env.putAll(extra);
        env.put("JITZOO_HOME", home.toString());
        // a private stack runs its own parts, whatever the user points at
        env.put("JITZOO_MONGO_URI", "");
        env.put("JITZOO_REDIS_URI", "");
        env.put("JITZOO_KAFKA_BOOTSTRAP", "");
        List<String> launcher = List.of(path("jitzoo").toString());
        boolean ok = false;
        try {
            // its progress shows on stderr; the banner would only crowd the command's own output
            List<String> up = storesOnly ? concat(launcher, "up", "stores") : concat(launcher, "up");
            if (exitOf(root, env, up, ProcessBuilder.Redirect.DISCARD) != 0) {
                throw new StepFailed(what + ": the private stack did not start");
            }
            ServiceLauncher stack = new ServiceLauncher(root, home, env);
            if (storesOnly) {
                env.put("JITZOO_MONGO_URI", stack.mongoUri());
                env.put("JITZOO_REDIS_URI", stack.redisUri());
                env.put("JITZOO_KAFKA_BOOTSTRAP", stack.kafkaBootstrap());
            } else {
                env.put("JITZOO_GATEWAY_URL", "ws://" + ServiceLauncher.LOOPBACK + ":" + stack.port("gateway") + "/v1/session");
                env.put("JITZOO_ZOO_HTTP", "http://" + ServiceLauncher.LOOPBACK + ":" + stack.port("zoo"));
                env.put("JITZOO_ADMIN_TOKEN", stack.adminToken()); // the zoo's admin surfaces' token, for tests and benches
            }
            run(what, dir, env, command);
            ok = true;
        } finally {
            exitOf(root, env, concat(launcher, "down"));
            if (ok) {
                remove(home);
            } else {
                say(what + ": logs in " + home.resolve("logs"));
            }
        }
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(Arrays.asList(tail));
        return all;
    }

    /** A step of a pipeline that failed; the command line prints its message and exits 1. */
    public static class StepFailed extends RuntimeException {
        public StepFailed(String message) {
            super(message);
        }
    }
}
