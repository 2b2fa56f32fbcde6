package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/** {@code jitzoo generate}: the SDK's generate CLI (client-sdk-js/src/cli/generate.ts) against the running suite. */
@Command(name = "generate", description = {"Generates token ids with a decoder file on the running suite's kernels (./jitzoo up):",
        "  generate --model FILE.onnx --prompt-ids 1,2,3 [--max-new 64] [--temperature T --top-k K --top-p P --seed S] [--json]",
        "  generate ... --offline   (no suite: the reference kernels)",
        "Every option goes to the SDK's generate CLI (generate --help there)."})
public final class GenerateCommand implements Callable<Integer> {

    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() {
        Suite suite = Suite.here();
        new Prereqs(suite).sdk();
        List<String> command = new ArrayList<>(List.of("node", suite.path("client-sdk-js/dist/cli/generate.js").toString()));
        command.addAll(args);
        return suite.exitOf(suite.root(), Map.of("JITZOO_GATEWAY_URL", TuneCommand.gatewayUrl()), command);
    }
}
