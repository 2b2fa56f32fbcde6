package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.Suite;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code jitzoo zoo best|count|dlq}: what the running zoo elected and stored, and its dead letters, over its HTTP API. */
@Command(name = "zoo", mixinStandardHelpOptions = true,
        description = {"Queries the running zoo's HTTP API (./jitzoo up):",
                "  zoo best --shape M,K,N [--op OP] [--fingerprint F]   the elected kernel of an op on a device kind",
                "  zoo count [--fingerprint F]                          the reports stored for a device kind",
                "  zoo dlq [--channel reports|microbench] [--replay]    the records refused into the dead-letter topic, and why;",
                "                                                       --replay sends those not yet replayed back (stored once)",
                "The fingerprint defaults to this machine's, as the SDK computes it."})
public final class ZooCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "best|count|dlq")
    String what;

    @Option(names = "--channel", defaultValue = "reports", description = "dlq: reports or microbench (default: ${DEFAULT-VALUE})")
    String channel;

    @Option(names = "--replay", description = "dlq: send the dead letters not yet replayed back to their topic")
    boolean replay;

    @Option(names = "--fingerprint", description = "device fingerprint (default: this machine's)")
    String fingerprint;

    @Option(names = "--shape", description = "M,K,N")
    String shape;

    @Option(names = "--op", defaultValue = "matmul", description = "op kind (default: ${DEFAULT-VALUE})")
    String op;

    @Override
    public Integer call() throws IOException, InterruptedException {
        Suite suite = Suite.here();
        String base = System.getenv().getOrDefault("JITZOO_ZOO_HTTP",
                "http://127.0.0.1:" + System.getenv().getOrDefault("JITZOO_ZOO_PORT", "8083"));
        if (what.equals("dlq")) {
            String path = base + "/api/v1/dlq/" + URLEncoder.encode(channel, StandardCharsets.UTF_8) + (replay ? "/replay" : "");
            return call(base, HttpRequest.newBuilder(URI.create(path)).timeout(Duration.ofSeconds(60))
                    .method(replay ? "POST" : "GET", HttpRequest.BodyPublishers.noBody()).build());
        }
        String device = URLEncoder.encode(fingerprint != null ? fingerprint : TuneCommand.fingerprint(suite), StandardCharsets.UTF_8);
        String url = switch (what) {
            case "best" -> {
                if (shape == null) {
                    throw new IllegalArgumentException("zoo best needs --shape M,K,N");
                }
                yield base + "/api/v1/best?fingerprint=" + device + "&op=" + URLEncoder.encode(op, StandardCharsets.UTF_8)
                        + "&shape=" + URLEncoder.encode(shape, StandardCharsets.UTF_8);
            }
            case "count" -> base + "/api/v1/reports/count?fingerprint=" + device;
            default -> throw new IllegalArgumentException("give best, count or dlq, not '" + what + "'");
        };
        return call(base, HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build());
    }

    private static int call(String base, HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> response;
        try {
            response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IOException("the zoo does not answer at " + base + " (./jitzoo up?)", e);
        }
        if (response.statusCode() / 100 != 2) {
            System.err.println("jitzoo zoo: HTTP " + response.statusCode() + (response.statusCode() == 404 ? " (none stored)" : ""));
        }
        System.out.println(response.body());
        return response.statusCode() / 100 == 2 ? 0 : 1;
    }
}
