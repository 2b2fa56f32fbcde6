package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code jitzoo microbench}: the primitive microbenchmark on this machine. The suite is compiled,
 * run by the SDK in Node or headless Chromium, and its result stored where
 * {@code space primitives --results} pools it; the primitive table is printed with it.
 */
@Command(name = "microbench", mixinStandardHelpOptions = true,
        description = "Times the primitive microbenchmark here, stores the result (.jitzoo/microbench/) and shows the "
                + "primitive table with it.")
public final class MicrobenchCommand implements Callable<Integer> {

    @Option(names = "--runner", defaultValue = "node", description = "node or chromium (default: ${DEFAULT-VALUE})")
    String runner;

    @Option(names = "--out", description = "where to store the result (default: .jitzoo/microbench/RUNNER-TIME.json)")
    Path out;

    @Option(names = "--quick", description = "fewer rounds")
    boolean quick;

    @Option(names = "--json", description = "print the stored result too")
    boolean json;

    @Override
    public Integer call() {
        Suite suite = Suite.here();
        Prereqs prereqs = new Prereqs(suite);
        Map<String, String> env = switch (runner) {
            case "node" -> Map.of();
            case "chromium" -> prereqs.webgpu();
            default -> throw new IllegalArgumentException("--runner must be node or chromium, got '" + runner + "'");
        };
        prereqs.harness();
        Suite.inTempDir("jitzoo-microbench.", dir -> {
            suite.jitzoo("codegen", "microbench", "--out", dir + "/suite");
            List<String> args = new ArrayList<>(List.of("microbench", dir + "/suite", "--runner", runner, "--json"));
            if (quick) {
                args.add("--quick");
            }
            String[] lines = suite.harnessOutput("the microbenchmark", env, args.toArray(String[]::new)).strip().split("\n");
            Path stored = out != null ? out : suite.home().resolve("microbench").resolve(runner + "-"
                    + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".json");
            write(stored, lines[lines.length - 1] + "\n");
            for (int i = 0; i < lines.length - 1; i++) {
                System.out.println(lines[i]);
            }
            Suite.say("stored in " + stored + "; the primitive table with it pooled:");
            suite.jitzoo("space", "primitives", "--results", stored.toString());
            if (json) {
                System.out.print(lines[lines.length - 1] + "\n");
            }
        });
        return 0;
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
