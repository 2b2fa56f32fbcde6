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

/** {@code jitzoo demo}: the live demo page (client-sdk-js/tools/src/demo/) against the running suite. */
@Command(name = "demo", description = {"Serves a page that infers a model on jitzoo kernels while it tunes, beside "
        + "onnxruntime-web, with live charts, against the running suite (./jitzoo up):",
        "  demo [--port 8090] [--model FILE.onnx] [--seq N]",
        "  demo --screenshot FILE.png [--seconds N]   (headless Chromium, then exit)",
        "Every option goes to the SDK's demo CLI."})
public final class DemoCommand implements Callable<Integer> {

    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() {
        Suite suite = Suite.here();
        Path models = new Models(suite).ensure();
        Prereqs prereqs = new Prereqs(suite);
        prereqs.sdk();
        if (args.contains("--screenshot")) {
            prereqs.webgpu(); // Chromium
        }
        List<String> command = new ArrayList<>(List.of("node", suite.path("client-sdk-js/tools/dist/demo.js").toString()));
        command.addAll(args);
        return suite.exitOf(suite.root(), Map.of("JITZOO_MODELS", models.toString(), "JITZOO_GATEWAY_URL", TuneCommand.gatewayUrl()),
                command);
    }
}
