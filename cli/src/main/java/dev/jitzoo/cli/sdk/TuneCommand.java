package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code jitzoo tune}: the SDK's headless client (client-sdk-js/src/cli/tune.ts) against the running suite. */
@Command(name = "tune", description = {"Runs the headless client's JIT loop against the running suite (./jitzoo up):",
        "  tune --workload skeleton [--json] [--fingerprint F]",
        "  tune --model FILE.onnx [--seq N] [--budget F] [--json] [--fingerprint F]",
        "Every option goes to the SDK's tune CLI (tune --help there)."})
public final class TuneCommand extends SdkScript {

    @Override
    String script() {
        return "tune.js";
    }

    /** The running suite's gateway: $JITZOO_GATEWAY_URL, else the local one on $JITZOO_GATEWAY_PORT (8080). */
    static String gatewayUrl() {
        String gateway = System.getenv("JITZOO_GATEWAY_URL");
        if (gateway == null || gateway.isBlank()) {
            gateway = "ws://127.0.0.1:" + System.getenv().getOrDefault("JITZOO_GATEWAY_PORT", "8080") + "/v1/session";
        }
        return gateway;
    }

    /** This machine's device fingerprint, as the SDK computes it. */
    static String fingerprint(Suite suite) {
        new Prereqs(suite).sdk();
        return suite.output("the SDK's fingerprint", List.of("node", suite.path("client-sdk-js/dist/cli/tune.js").toString(),
                "--print-fingerprint")).trim();
    }
}
