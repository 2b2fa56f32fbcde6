package dev.jitzoo.zoo.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.zoo.v1.Settlement;
import dev.jitzoo.zoo.domain.Analytics;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.ZooKey;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The zoo for its analysts: device kinds, each kind's elections, fleet coverage, report volume over
 * time, kernels' win rates, and every measurement as CSV or JSON Lines. The dashboard
 * ({@code /dashboard}) draws these.
 */
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class AnalyticsResource {

    private static final Map<String, Duration> BUCKETS = Map.of(
            "minute", Duration.ofMinutes(1), "hour", Duration.ofHours(1), "day", Duration.ofDays(1));

    private final Analytics analytics;
    private final ObjectMapper json;

    public AnalyticsResource(Analytics analytics, ObjectMapper json) {
        this.analytics = analytics;
        this.json = json;
    }

    /** Device kinds, the most sessions first. */
    @GET
    @Path("/kinds")
    public List<Analytics.Kind> kinds(@QueryParam("limit") @DefaultValue("100") int limit) {
        return analytics.kinds(within("limit", limit, 1, 10_000));
    }

    /** One device kind's elections: per key, the elected kernel, its latency, and the sessions and origins behind it. */
    @GET
    @Path("/kinds/{fingerprint}/elections")
    public List<Analytics.Election> elections(@PathParam("fingerprint") String fingerprint) {
        return analytics.elections(fingerprint);
    }

    /** Per op, the device kinds with an elected kernel and those settled (ranked by at least {@code settledOrigins} origins). */
    @GET
    @Path("/coverage")
    public List<Analytics.Coverage> coverage(@QueryParam("settledOrigins") @DefaultValue("" + Settlement.SETTLEMENT_ORIGINS_VALUE) int settledOrigins) {
        return analytics.coverage(within("settledOrigins", settledOrigins, 1, 1_000_000));
    }

    /** Sessions and measurements per time bucket ({@code minute}, {@code hour}, {@code day}) over the last {@code hours}. */
    @GET
    @Path("/volume")
    public List<Analytics.Volume> volume(@QueryParam("bucket") @DefaultValue("hour") String bucket,
                                         @QueryParam("hours") @DefaultValue("24") int hours) {
        Duration size = BUCKETS.get(bucket);
        if (size == null) {
            throw new InvalidReportException("bucket must be minute, hour or day, got " + bucket);
        }
        long from = System.currentTimeMillis() - Duration.ofHours(within("hours", hours, 1, 24 * 366)).toMillis();
        return analytics.volume(from, size.toMillis());
    }

    /** Each kernel's win rate on an op (by op and shape, or by the op key /coverage gives): how often the sessions that ranked it ranked it first. */
    @GET
    @Path("/win-rates")
    public List<Analytics.WinRate> winRates(@QueryParam("op") @DefaultValue("matmul") String op, @QueryParam("shape") String shape,
                                            @QueryParam("backend") @DefaultValue("wasm") String backend,
                                            @QueryParam("opKey") String opKey) {
        if (opKey != null && !opKey.isBlank()) {
            return analytics.winRates(opKey); // as /coverage names it, epilogue and flags included
        }
        ZooKey key = ZooKey.of(ZooResource.parseOp(op, shape), ZooResource.parseBackend(backend),
                DeviceProfile.newBuilder().setFingerprint("any").build());
        return analytics.winRates(key.opKey());
    }

    /** Every measurement (of one device kind, if given), oldest first: {@code format=csv} or {@code jsonl}. */
    @GET
    @Path("/export/measurements")
    @Produces({"text/csv", "application/x-ndjson"})
    public Response export(@QueryParam("format") @DefaultValue("csv") String format, @QueryParam("fingerprint") String fingerprint) {
        boolean csv = switch (format) {
            case "csv" -> true;
            case "jsonl" -> false;
            default -> throw new InvalidReportException("format must be csv or jsonl, got " + format);
        };
        StreamingOutput body = out -> {
            BufferedWriter writer = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8));
            if (csv) {
                writer.write("fingerprint,key,session_id,origin,rank,kernel_id,median_ms,samples,received_at_ms\n");
            }
            try {
                analytics.export(fingerprint, row -> {
                    try {
                        writer.write(csv ? csvLine(row) : json.writeValueAsString(row) + "\n");
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
            writer.flush();
        };
        return Response.ok(body, csv ? "text/csv; charset=utf-8" : "application/x-ndjson")
                .header("Content-Disposition", "attachment; filename=\"measurements." + format + "\"").build();
    }

    private static int within(String name, int value, int least, int most) {
        if (value < least || value > most) {
            throw new InvalidReportException(name + " must be " + least + " to " + most + ", got " + value);
        }
        return value;
    }

    private static String csvLine(Analytics.Row r) {
        return String.join(",", csv(r.fingerprint()), csv(r.key()), csv(r.sessionId()), csv(r.origin()), String.valueOf(r.rank()),
                csv(r.kernelId()), String.valueOf(r.medianMs()), String.valueOf(r.samples()), String.valueOf(r.receivedAtMs())) + "\n";
    }

    /** A CSV field, quoted when it holds a comma, quote or line break. */
    private static String csv(String field) {
        String s = field == null ? "" : field;
        return s.matches(".*[,\"\\r\\n].*") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}
