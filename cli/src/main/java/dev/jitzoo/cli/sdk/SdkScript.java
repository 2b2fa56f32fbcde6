package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Prereqs;
import dev.jitzoo.cli.suite.Suite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Unmatched;

/** A command that is one of the SDK's CLIs (client-sdk-js/src/cli) run against the running suite: every option goes to it. */
abstract class SdkScript implements Callable<Integer> {

    @Unmatched
    List<String> args = new ArrayList<>();

    /** The CLI's built script, under client-sdk-js/dist/cli. */
    abstract String script();

    @Override
    public Integer call() {
        Suite suite = Suite.here();
        new Prereqs(suite).sdk();
        List<String> command = new ArrayList<>(List.of("node", suite.path("client-sdk-js/dist/cli/" + script()).toString()));
        command.addAll(args);
        return suite.exitOf(suite.root(), Map.of("JITZOO_GATEWAY_URL", TuneCommand.gatewayUrl()), command);
    }
}
