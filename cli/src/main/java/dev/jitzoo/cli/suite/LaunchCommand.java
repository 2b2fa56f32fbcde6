package dev.jitzoo.cli.suite;

import dev.jitzoo.cli.suite.ServiceLauncher.Instance;
import java.io.IOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code jitzoo launch SERVICE...}, what {@code ./jitzoo up} runs once Redis, Kafka and MongoDB are
 * up: starts each service in the background (its output appended to logs/NAME.log, its pid in
 * run/NAME.pid), then waits until every one is ready. A service already ready is left alone, one of
 * ours still starting is waited for, and a port held by another program is an error.
 */
@Command(name = "launch", hidden = true, mixinStandardHelpOptions = true,
        description = "Starts services as ./jitzoo up does, and waits until they are ready.")
public final class LaunchCommand implements Callable<Integer> {

    @Parameters(arity = "1..*", paramLabel = "SERVICE", description = "space, codegen, zoo or gateway")
    List<String> services;

    @Override
    public Integer call() {
        for (String service : services) {
            if (!ServiceLauncher.SERVICES.contains(service)) {
                throw new IllegalArgumentException("unknown service '" + service + "'; services: "
                        + String.join(", ", ServiceLauncher.SERVICES));
            }
        }
        return launch(ServiceLauncher.here(), services);
    }

    /** Starts the services and waits for them, saying what it does on stderr; the exit status. */
    static int launch(ServiceLauncher launcher, List<String> services) {
        try {
            Map<String, Instance> instances = new LinkedHashMap<>();
            for (String service : services) {
                instances.put(service, start(launcher, service));
            }
            for (Instance instance : instances.values()) {
                instance.awaitReady(ServiceLauncher.READY_TIMEOUT);
                Suite.say(instance.name() + ": ready");
            }
            return 0;
        } catch (ServiceLauncher.NotReady e) {
            Suite.say(e.instance().name() + " did not become ready; last lines of " + e.instance().log() + ":");
            e.instance().lastLines(30).forEach(System.err::println);
            return 1;
        } catch (Suite.StepFailed e) {
            System.err.println("jitzoo: error: " + e.getMessage());
            return 1;
        }
    }

    /** The service started, or the one already there. */
    private static Instance start(ServiceLauncher launcher, String service) {
        int port = launcher.port(service);
        Instance there = new Instance(service, ServiceLauncher.LOOPBACK, port, launcher.running(service),
                launcher.logs().resolve(service + ".log"));
        if (ServiceLauncher.ready(ServiceLauncher.LOOPBACK, port)) {
            Suite.say(service + ": already ready on port " + port);
            return there;
        }
        boolean taken = ServiceLauncher.listening(ServiceLauncher.LOOPBACK, port);
        if (taken && there.process().isPresent()) { // ours, not ready yet (starting, or waiting on a part just started again)
            Suite.say(service + ": running on port " + port + ", waiting until ready");
            return there.awaitReady(ServiceLauncher.READY_TIMEOUT);
        }
        if (taken) {
            throw new Suite.StepFailed("port " + port + " (for " + service + ") is taken by something else; set "
                    + ServiceLauncher.portVariable(service));
        }
        Instance started = launcher.start(launcher.launch(service));
        try {
            Files.createDirectories(launcher.pidFile(service).getParent());
            Files.writeString(launcher.pidFile(service), started.process().orElseThrow().pid() + "\n");
        } catch (IOException e) {
            throw new Suite.StepFailed("could not record " + service + "'s pid: " + e.getMessage());
        }
        Suite.say(service + ": starting on port " + port);
        return started;
    }
}
