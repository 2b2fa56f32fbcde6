package dev.jitzoo.zoo.web;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.Zoo;
import dev.jitzoo.zoo.kafka.DeadLetters;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** JSON queries for analysts and for `./jitzoo zoo`, and the dead-letter topics' inspection and replay. */
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class ZooResource {

    private final Zoo zoo;
    private final DeadLetters deadLetters;

    public ZooResource(Zoo zoo, DeadLetters deadLetters) {
        this.zoo = zoo;
        this.deadLetters = deadLetters;
    }

    public record DeadLettersView(String channel, List<DeadLetters.Letter> letters) {
    }

    public record ReplayView(String channel, int replayed) {
    }

    /** The dead letters of a channel (`reports` or `microbench`), oldest first, with why each was refused. */
    @GET
    @Path("/dlq/{channel}")
    public DeadLettersView deadLetters(@PathParam("channel") String channel, @QueryParam("limit") @DefaultValue("100") int limit) {
        if (limit < 1 || limit > 10_000) {
            throw new InvalidReportException("limit must be 1 to 10000, got " + limit);
        }
        return new DeadLettersView(channel, deadLetters.list(channelOf(channel), limit));
    }

    /** Sends a channel's dead letters not yet replayed back to its topic (stored once however often replayed). */
    @POST
    @Path("/dlq/{channel}/replay")
    public ReplayView replay(@PathParam("channel") String channel) {
        return new ReplayView(channel, deadLetters.replay(channelOf(channel)));
    }

    private static DeadLetters.Channel channelOf(String channel) {
        return switch (channel) {
            case "reports" -> DeadLetters.Channel.REPORTS;
            case "microbench" -> DeadLetters.Channel.MICROBENCH;
            default -> throw new InvalidReportException("channel must be reports or microbench, got " + channel);
        };
    }

    public record BestView(String kernelId, double medianMs, int reports, int origins, String schedule) {
    }

    public record CountView(String fingerprint, long count) {
    }

    /**
     * The elected kernel of one op on one device kind (for a tenant's sessions: its own where
     * tenants keep their data apart); 404 when the zoo knows none.
     */
    @GET
    @Path("/best")
    public BestView best(@QueryParam("fingerprint") String fingerprint,
                         @QueryParam("op") @DefaultValue("matmul") String op,
                         @QueryParam("shape") String shape,
                         @QueryParam("backend") @DefaultValue("wasm") String backend,
                         @QueryParam("rho") @DefaultValue("") String primitiveVector,
                         @QueryParam("tenant") @DefaultValue("") String tenant) {
        DeviceProfile device = DeviceProfile.newBuilder()
                .setFingerprint(fingerprint == null ? "" : fingerprint)
                .setPrimitiveVector(primitiveVector).build();
        return zoo.resolve(tenant, parseOp(op, shape), parseBackend(backend), device)
                .map(b -> new BestView(b.kernel().getKernelId(), b.medianMs(), b.reports(), b.origins(),
                        b.kernel().getSchedule().toString().replace('\n', ' ').trim()))
                .orElseThrow(() -> new NotFoundException("no kernel elected for this key yet: an election is served once "
                        + zoo.minOrigins() + " network origins reported on it"));
    }

    /** Bad input the zoo refuses, from any endpoint: 400 with the reason. The one place it is mapped. */

    public record PrimitiveView(String fingerprint, String primitive, double speedup, int reports, String engine) {
    }

    /** The fleet's microbenchmark results: per device kind and primitive, the geometric mean speedup. */
    @GET
    @Path("/primitives")
    public List<PrimitiveView> primitives() {
        return zoo.primitives().stream().map(p -> new PrimitiveView(p.fingerprint(), MicrobenchRules.key(p.primitive()),
                p.speedup(), p.reports(), p.engine())).toList();
    }

    /** How many measurements devices with this fingerprint have contributed. */
    @GET
    @Path("/reports/count")
    public CountView count(@QueryParam("fingerprint") String fingerprint) {
        if (fingerprint == null || fingerprint.isBlank()) {
            throw new InvalidReportException("fingerprint is required");
        }
        return new CountView(fingerprint, zoo.countMeasurements(fingerprint));
    }

    /** A device kind's measured single-thread Wasm peak (null: none measured), and the most a Wasm kernel may be timed at on it. */
    public record PeakView(String fingerprint, Double peakGflops, double ceilingGflops) {
    }

    /** The peak a device kind's microbenchmarks measured (the median of its origins'), which bounds the latencies it may report. */
    @GET
    @Path("/kinds/{fingerprint}/peak")
    public PeakView peak(@PathParam("fingerprint") String fingerprint) {
        double peak = zoo.peakGflops(fingerprint);
        return new PeakView(fingerprint, Double.isNaN(peak) ? null : peak, LatencyRules.ceilingFlops(Backend.BACKEND_WASM, peak) / 1e9);
    }

    static OpSpec parseOp(String op, String shape) {
        if (shape == null || shape.isBlank()) {
            throw new InvalidReportException("shape is required, e.g. shape=128,256,96");
        }
        try {
            OpKind kind = OpKind.valueOf("OP_KIND_" + op.toUpperCase(Locale.ROOT));
            return OpSpec.newBuilder().setKind(kind)
                    .addAllShape(Arrays.stream(shape.split("[,x]")).map(Integer::valueOf).toList())
                    .build();
        } catch (IllegalArgumentException e) {
            throw new InvalidReportException("bad op or shape: " + op + " " + shape);
        }
    }

    static Backend parseBackend(String backend) {
        try {
            return Backend.valueOf("BACKEND_" + backend.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidReportException("unknown backend " + backend);
        }
    }
}
