package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Models;
import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/** {@code jitzoo drill}: devices tune a model on a private stack while its parts fail (client-sdk-js/tools/src/drill.ts). */
@Command(name = "drill", description = {"On a private stack: devices tune the BERT-base layer while the gateway restarts "
        + "(drain and resume), Kafka stops for 30 s and codegen is killed with kill -9; then checks that every report "
        + "sent was acknowledged and stored, and every device finished, and lists what each device saw (a few minutes):",
        "  drill [--devices 3] [--kafka-down 30] [--json]",
        "Exits 1 when a report was lost or a device did not finish."})
public final class DrillCommand implements Callable<Integer> {

    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() {
        Suite suite = Suite.here();
        Path models = new Models(suite).ensure();
        new Prereqs(suite).sdk();
        Suite.say("a private stack; then devices tune while its parts fail one after another (a few minutes)");
        List<String> command = new ArrayList<>(List.of("node", "--experimental-wasm-relaxed-simd",
                suite.path("client-sdk-js/tools/dist/drill.js").toString()));
        command.addAll(args);
        suite.withPrivateStack("drill", Map.of("JITZOO_MODELS", models.toString()), suite.root(), command);
        return 0;
    }
}
