package dev.jitzoo.cli.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.cli.suite.ServiceLauncher.Instance;
import dev.jitzoo.cli.suite.ServiceLauncher.Launch;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How services are started: what they are told, their logs and pid files, readiness, and ./jitzoo up's rules. */
class ServiceLauncherTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private final List<Instance> started = new ArrayList<>();

    @AfterEach
    void stopWhatStarted() {
        ServiceLauncher.stop(started, Duration.ofSeconds(5));
    }

    @Test
    void aServiceIsToldItsPortAndTheStacksAddressesAsJitzooUpTellsThem() throws IOException {
        ServiceLauncher defaults = new ServiceLauncher(root, root.resolve("home"), Map.of("JITZOO_MONGO_URI", " "));
        assertEquals(8080, defaults.port("gateway"));
        assertEquals(root.resolve("gateway/target/quarkus-app/quarkus-run.jar"), defaults.jar("gateway"));
        assertEquals(root.resolve("zoo-service/target/quarkus-app/quarkus-run.jar"), defaults.jar("zoo"));
        assertEquals(List.of("-Xmx384m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=10"), defaults.javaOptions("zoo"));
        assertEquals(List.of("-Xmx384m", "-XX:+UseSerialGC"), defaults.javaOptions("codegen"));
        Map<String, String> told = new java.util.HashMap<>(defaults.environment(8083));
        String token = told.remove("JITZOO_ZOO_ADMIN_TOKEN");
        String salt = told.remove("JITZOO_GATEWAY_ORIGIN_SALT");
        assertEquals(Map.ofEntries(Map.entry("QUARKUS_HTTP_PORT", "8083"), Map.entry("QUARKUS_HTTP_HOST", "127.0.0.1"),
                Map.entry("JITZOO_ZOO_MIN_ORIGINS", "1"), Map.entry("JITZOO_GATEWAY_ADDRESS_SESSIONS_PER_MINUTE", "0"),
                Map.entry("JITZOO_GATEWAY_ADDRESS_REPORTS_PER_MINUTE", "0"), Map.entry("JITZOO_GATEWAY_ADDRESS_PLAN_REQUESTS_PER_MINUTE", "0"),
                Map.entry("JITZOO_MONGO_URI", "mongodb://127.0.0.1:27018"),
                Map.entry("JITZOO_REDIS_URI", "redis://127.0.0.1:6390"), Map.entry("JITZOO_KAFKA_BOOTSTRAP", "127.0.0.1:9092"),
                Map.entry("JITZOO_ZOO_PORT", "8083"), Map.entry("JITZOO_SPACE_PORT", "8081"), Map.entry("JITZOO_CODEGEN_PORT", "8082")), told,
                "a blank setting counts as unset; loopback only; one machine is one origin");
        assertTrue(token.length() >= 32 && salt.length() >= 32 && !token.equals(salt), "random secrets: " + token + ", " + salt);
        assertEquals(token, new ServiceLauncher(root, root.resolve("home"), Map.of()).adminToken(), "kept: the next up reads it back");
        assertEquals(java.util.Set.of(java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE),
                Files.getPosixFilePermissions(root.resolve("home/admin-token")), "readable by its owner only");
        assertEquals("given", new ServiceLauncher(root, root.resolve("home"), Map.of("JITZOO_ZOO_ADMIN_TOKEN", "given")).adminToken());

        ServiceLauncher moved = new ServiceLauncher(root, root.resolve("home"), Map.of("JITZOO_ZOO_PORT", "18083", "JITZOO_KAFKA_PORT",
                "19092", "JITZOO_REDIS_URI", "redis://cache:6379", "JITZOO_GATEWAY_JAVA_OPTS", " -Xmx1g  -XX:+UseG1GC "));
        assertEquals(18083, moved.port("zoo"));
        assertEquals("127.0.0.1:19092", moved.kafkaBootstrap());
        assertEquals("redis://cache:6379", moved.redisUri());
        assertEquals("18083", moved.environment(1).get("JITZOO_ZOO_PORT"));
        ServiceLauncher open = new ServiceLauncher(root, root.resolve("home"), Map.of("JITZOO_BIND_HOST", "0.0.0.0", "JITZOO_ZOO_MIN_ORIGINS", "3"));
        assertEquals("0.0.0.0", open.environment(1).get("QUARKUS_HTTP_HOST"), "told otherwise, every interface");
        assertEquals("3", open.environment(1).get("JITZOO_ZOO_MIN_ORIGINS"));
        assertEquals(List.of("-Xmx1g", "-XX:+UseG1GC"), moved.javaOptions("gateway"));
        assertEquals(List.of("-Xmx384m", "-XX:+UseSerialGC"), moved.javaOptions("space"), "another service's options are its own");
        assertThrows(IllegalArgumentException.class, () -> moved.port("postgres"));
    }

    @Test
    void startsAServiceWithItsSettingsAndOutputInItsLogAndStopsIt() throws Exception {
        fakeJar("zoo");
        int port = freePort();
        ServiceLauncher launcher = new ServiceLauncher(root, root.resolve("home"),
                Map.of("JITZOO_ZOO_JAVA_OPTS", "-Xmx64m -Dfake.option=1"));
        Path log = launcher.logs().resolve("zoo-a.log");
        Files.createDirectories(log.getParent());
        Files.writeString(log, "an earlier run\n");
        Instance zoo = start(launcher, new Launch("zoo", "zoo-a", "127.0.0.1", port, Map.of("FAKE_SETTING", "over"),
                List.of("-Dfake.extra=2"), log, false));

        assertTrue(zoo.awaitReady(WAIT).process().orElseThrow().isAlive());
        assertTrue(ServiceLauncher.ready("127.0.0.1", port));
        List<String> lines = Files.readAllLines(log);
        assertEquals("an earlier run", lines.get(0), "output is appended");
        assertTrue(lines.contains("QUARKUS_HTTP_PORT=" + port), lines.toString());
        assertTrue(lines.contains("QUARKUS_HTTP_HOST=127.0.0.1"), lines.toString());
        assertTrue(lines.contains("JITZOO_MONGO_URI=mongodb://127.0.0.1:27018"), lines.toString());
        assertTrue(lines.contains("FAKE_SETTING=over"), lines.toString());
        assertTrue(lines.contains("jvm=-Xmx64m -Dfake.option=1 -Dfake.extra=2"), lines.toString());

        ServiceLauncher.stop(List.of(zoo), Duration.ofSeconds(10));
        assertFalse(zoo.process().orElseThrow().isAlive());
        assertFalse(ServiceLauncher.listening("127.0.0.1", port));
    }

    @Test
    void aServiceThatEndsBeforeItIsReadyFailsNamingItsLog() throws Exception {
        fakeJar("codegen");
        ServiceLauncher launcher = new ServiceLauncher(root, root.resolve("home"), Map.of());
        Path log = launcher.logs().resolve("codegen.log");
        Instance codegen = start(launcher, new Launch("codegen", "codegen", null, freePort(), Map.of("FAKE_EXIT", "1"), List.of(), log,
                false));
        ServiceLauncher.NotReady e = assertThrows(ServiceLauncher.NotReady.class, () -> codegen.awaitReady(WAIT));
        assertEquals("codegen did not become ready; see " + log, e.getMessage());
        assertTrue(codegen.lastLines(30).contains("QUARKUS_HTTP_HOST=127.0.0.1"), "no host given: loopback: " + codegen.lastLines(30));
    }

    @Test
    void aMissingJarIsSaid() {
        ServiceLauncher launcher = new ServiceLauncher(root, root.resolve("home"), Map.of());
        Suite.StepFailed e = assertThrows(Suite.StepFailed.class, () -> launcher.start(launcher.launch("space")));
        assertEquals(launcher.jar("space") + " is missing; the build did not produce it", e.getMessage());
    }

    @Test
    void launchStartsInTheBackgroundRecordsThePidAndLeavesAReadyServiceAlone() throws Exception {
        fakeJar("space");
        Path home = root.resolve("home");
        int port = freePort();
        ServiceLauncher launcher = new ServiceLauncher(root, home, Map.of("JITZOO_SPACE_PORT", String.valueOf(port)));

        assertEquals(0, LaunchCommand.launch(launcher, List.of("space")));
        ProcessHandle space = launcher.running("space").orElseThrow();
        started.add(new Instance("space", "127.0.0.1", port, launcher.running("space"), launcher.logs().resolve("space.log")));
        assertEquals(space.pid() + "\n", Files.readString(home.resolve("run/space.pid")));
        assertTrue(Files.readString(home.resolve("logs/space.log")).contains("QUARKUS_HTTP_PORT=" + port));
        assertEquals(space.pid(), launcher.running().get("space").pid());

        assertEquals(0, LaunchCommand.launch(launcher, List.of("space")), "already ready: nothing started");
        assertEquals(space.pid(), launcher.running("space").orElseThrow().pid());
    }

    @Test
    void launchRefusesAPortAnotherProgramHolds() throws Exception {
        fakeJar("zoo");
        try (ServerSocket other = new ServerSocket(0)) {
            ServiceLauncher launcher = new ServiceLauncher(root, root.resolve("home"), Map.of("JITZOO_ZOO_PORT",
                    String.valueOf(other.getLocalPort())));
            assertEquals(1, LaunchCommand.launch(launcher, List.of("zoo")));
            assertFalse(Files.exists(launcher.pidFile("zoo")));
        }
    }

    private Instance start(ServiceLauncher launcher, Launch launch) {
        Instance instance = launcher.start(launch);
        started.add(instance);
        return instance;
    }

    /** The service's fast-jar, as a jar of {@link FakeService} alone. */
    private void fakeJar(String service) throws IOException {
        Path jar = new ServiceLauncher(root, root, Map.of()).jar(service);
        Files.createDirectories(jar.getParent());
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, FakeService.class.getName());
        String entry = FakeService.class.getName().replace('.', '/') + ".class";
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file, manifest);
             InputStream in = FakeService.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
