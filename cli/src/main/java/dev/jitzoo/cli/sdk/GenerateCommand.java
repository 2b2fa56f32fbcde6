package dev.jitzoo.cli.sdk;

import picocli.CommandLine.Command;

/** {@code jitzoo generate}: the SDK's generate CLI (client-sdk-js/src/cli/generate.ts) against the running suite. */
@Command(name = "generate", description = {"Generates token ids with a decoder file on the running suite's kernels (./jitzoo up):",
        "  generate --model FILE.onnx --prompt-ids 1,2,3 [--max-new 64] [--temperature T --top-k K --top-p P --seed S] [--json]",
        "  generate ... --offline   (no suite: the reference kernels)",
        "Every option goes to the SDK's generate CLI (generate --help there)."})
public final class GenerateCommand extends SdkScript {

    @Override
    String script() {
        return "generate.js";
    }
}
