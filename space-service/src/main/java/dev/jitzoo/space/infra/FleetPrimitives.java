package dev.jitzoo.space.infra;

import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.zoo.v1.DevicePrimitives;
import dev.jitzoo.proto.zoo.v1.PrimitivesRequest;
import dev.jitzoo.proto.zoo.v1.PrimitivesResponse;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.proto.zoo.v1.ZooService;
import dev.jitzoo.space.SpaceConfig;
import dev.jitzoo.space.primitives.MicrobenchResult;
import dev.jitzoo.space.primitives.PrimitiveTable;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * The primitive table the service composes with: the shipped results and those of
 * {@code jitzoo.space.microbench-results}, pooled with the fleet's, which the zoo collects from
 * browsers and this bean reads again every {@code jitzoo.space.fleet-refresh}. A zoo that does not
 * answer leaves the last table in place.
 */
@ApplicationScoped
public class FleetPrimitives {

    private static final Logger LOG = Logger.getLogger(FleetPrimitives.class);

    private final ZooService zoo;
    private final List<MicrobenchResult> local;
    private final double threshold;
    private final Duration refresh;
    private final Duration timeout;
    private final AtomicReference<PrimitiveTable> table = new AtomicReference<>();
    private volatile boolean zooAnswered = true;
    private Cancellable ticks;

    public FleetPrimitives(SpaceConfig config, @GrpcClient("zoo") ZooService zoo) throws IOException {
        this.zoo = zoo;
        this.threshold = config.primitiveThreshold();
        this.refresh = config.fleetRefresh();
        this.timeout = config.zooTimeout();
        PrimitiveTable pooled = PrimitiveTable.pooled(config.microbenchResults().orElse(null), threshold);
        this.local = pooled.results();
        table.set(pooled);
    }

    /** The table as of the last refresh. */
    public PrimitiveTable table() {
        return table.get();
    }

    void start(@Observes StartupEvent event) {
        if (!refresh.isZero()) {
            ticks = Multi.createFrom().ticks().startingAfter(Duration.ofMillis(100)).every(refresh)
                    .onOverflow().drop()
                    .onItem().transformToUniAndConcatenate(tick -> refresh())
                    .subscribe().with(changed -> { });
        }
    }

    void stop(@Observes ShutdownEvent event) {
        if (ticks != null) {
            ticks.cancel();
        }
    }

    /** Reads the fleet's results from the zoo and pools them; completes with the table in use after. */
    public Uni<PrimitiveTable> refresh() {
        return zoo.primitives(PrimitivesRequest.getDefaultInstance())
                .ifNoItem().after(timeout).fail()
                .map(response -> {
                    List<MicrobenchResult> all = new ArrayList<>(local);
                    all.addAll(results(response));
                    PrimitiveTable next = PrimitiveTable.derive(all, threshold);
                    PrimitiveTable previous = table.getAndSet(next);
                    if (!previous.verdicts().equals(next.verdicts())) {
                        LOG.infof("primitive table from %d fleet devices: %s", response.getDevicesCount(), next.verdicts());
                    }
                    zooAnswered = true;
                    return next;
                })
                .onFailure().recoverWithItem(failure -> {
                    if (zooAnswered) {
                        LOG.warnf("fleet microbenchmarks not read, keeping the last primitive table: %s", failure.toString());
                    }
                    zooAnswered = false;
                    return table.get();
                });
    }

    /** The zoo's device kinds as microbenchmark results (runner "fleet", speedups keyed by primitive name). */
    public static List<MicrobenchResult> results(PrimitivesResponse response) {
        List<MicrobenchResult> out = new ArrayList<>();
        for (DevicePrimitives device : response.getDevicesList()) {
            Map<String, Double> speedups = new TreeMap<>();
            for (PrimitiveSpeedup s : device.getSpeedupsList()) {
                speedups.put(MicrobenchRules.key(s.getPrimitive()), s.getSpeedup());
            }
            out.add(new MicrobenchResult("fleet", device.getFingerprint(), device.getEngine(), speedups));
        }
        return out;
    }
}
