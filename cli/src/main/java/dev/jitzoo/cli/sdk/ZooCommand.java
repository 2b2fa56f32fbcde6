package dev.jitzoo.cli.sdk;

import dev.jitzoo.cli.suite.ServiceLauncher;
import dev.jitzoo.cli.suite.Suite;
import dev.jitzoo.proto.zoo.v1.Settlement;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code jitzoo zoo ...}: what the running zoo elected and stored, its analytics and its dead letters, over its HTTP API. */
@Command(name = "zoo", mixinStandardHelpOptions = true,
        description = {"Queries the running zoo's HTTP API (./jitzoo up):",
                "  zoo best --shape M,K,N [--op OP] [--fingerprint F]   the elected kernel of an op on a device kind",
                "  zoo count [--fingerprint F]                          the reports stored for a device kind",
                "  zoo kinds                                            device kinds: sessions, origins, ops, first and last report",
                "  zoo elections [--fingerprint F]                      a device kind's elected kernel per op, with its evidence",
                "  zoo peak [--fingerprint F]                           a device kind's measured Wasm peak, and the fastest it may report",
                "  zoo coverage [--settled-origins 3]                   per op, the kinds with an elected kernel and the settled ones",
                "  zoo volume [--bucket minute|hour|day] [--hours 24]   sessions and measurements per time bucket",
                "  zoo win-rates --shape M,K,N [--op OP]                how often each kernel of an op was ranked first",
                "  zoo export [--format csv|jsonl] [--fingerprint F]    every measurement (of one kind, if given)",
                "  zoo dlq [--channel reports|microbench] [--replay]    the records refused into the dead-letter topic, and why;",
                "                                                       --replay sends those not yet replayed back (stored once)",
                "The zoo's dashboard is at its /dashboard.",
                "The fingerprint defaults to this machine's, as the SDK computes it."})
public final class ZooCommand implements Callable<Integer> {

    private static final List<String> QUERIES = List.of("best", "count", "kinds", "elections", "peak", "coverage", "volume",
            "win-rates", "export", "dlq");

    @Parameters(index = "0", paramLabel = "best|count|kinds|elections|peak|coverage|volume|win-rates|export|dlq")
    String what;

    @Option(names = "--settled-origins", defaultValue = "" + Settlement.SETTLEMENT_ORIGINS_VALUE, description = "coverage: origins that settle a kind (default: ${DEFAULT-VALUE})")
    int settledOrigins;

    @Option(names = "--bucket", defaultValue = "hour", description = "volume: minute, hour or day (default: ${DEFAULT-VALUE})")
    String bucket;

    @Option(names = "--hours", defaultValue = "24", description = "volume: over the last this many hours (default: ${DEFAULT-VALUE})")
    int hours;

    @Option(names = "--format", defaultValue = "csv", description = "export: csv or jsonl (default: ${DEFAULT-VALUE})")
    String format;

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
        if (!QUERIES.contains(what)) { // before the fingerprint, which runs the SDK
            throw new IllegalArgumentException("give " + String.join(", ", QUERIES.subList(0, QUERIES.size() - 1)) + " or dlq, not '"
                    + what + "'");
        }
        String fleet = switch (what) {
            case "kinds" -> "/api/v1/kinds";
            case "coverage" -> "/api/v1/coverage?settledOrigins=" + settledOrigins;
            case "volume" -> "/api/v1/volume?bucket=" + encode(bucket) + "&hours=" + hours;
            case "win-rates" -> "/api/v1/win-rates?op=" + encode(op) + "&shape=" + encode(shape == null ? "" : shape);
            case "export" -> "/api/v1/export/measurements?format=" + encode(format) + (fingerprint == null ? "" : "&fingerprint=" + encode(fingerprint));
            default -> null;
        };
        if (fleet != null) {
            return call(base, admin(URI.create(base + fleet)).timeout(Duration.ofSeconds(120)).build());
        }
        if (what.equals("dlq")) {
            String path = base + "/api/v1/dlq/" + encode(channel) + (replay ? "/replay" : "");
            return call(base, admin(URI.create(path)).timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .method(replay ? "POST" : "GET", HttpRequest.BodyPublishers.noBody()).build());
        }
        String device = encode(fingerprint != null ? fingerprint : TuneCommand.fingerprint(suite));
        String url = switch (what) {
            case "best" -> {
                if (shape == null) {
                    throw new IllegalArgumentException("zoo best needs --shape M,K,N");
                }
                yield base + "/api/v1/best?fingerprint=" + device + "&op=" + encode(op) + "&shape=" + encode(shape);
            }
            case "count" -> base + "/api/v1/reports/count?fingerprint=" + device;
            case "elections" -> base + "/api/v1/kinds/" + device + "/elections";
            case "peak" -> base + "/api/v1/kinds/" + device + "/peak";
            default -> throw new IllegalStateException(what);
        };
        return call(base, admin(URI.create(url)).timeout(Duration.ofSeconds(10)).build());
    }

    /**
     * A request to the zoo's admin surfaces with its token: {@code JITZOO_ADMIN_TOKEN} (a remote
     * zoo's), else the one {@code ./jitzoo up} keeps in {@code .jitzoo/admin-token}.
     */
    private static HttpRequest.Builder admin(URI uri) {
        String token = System.getenv("JITZOO_ADMIN_TOKEN");
        if (token == null || token.isBlank()) {
            token = ServiceLauncher.here().adminToken();
        }
        return HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + token);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
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
