package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.ElectionWindows;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.Zoo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who elects a kind's kernel, on the real MongoDB store: network origins, each once. A flood of
 * sessions from one origin is one ballot however long it lasts; nothing is served until the
 * minimum of origins reported (and origins counted before a restart still count after it); an
 * origin behind many tenants' keys is one ballot.
 */
class ElectionOriginsTest {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(32).addShape(32).addShape(32).build();
    private static final DeviceProfile KIND = DeviceProfile.newBuilder().setFingerprint("origins-test").build();

    @RegisterExtension
    static final StoreZoos ZOOS = new StoreZoos();

    private static String database() {
        return ZOOS.database("origins");
    }

    private static Zoo zoo(String database, TenantData tenants) {
        return ZOOS.zoo(database, tenants);
    }

    private static KernelReport report(String tenant, String origin, Map<String, Double> timings) {
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId("s-" + UUID.randomUUID()).setOrigin(origin)
                .setTenant(tenant).setDevice(KIND).setOp(OP).setBackend(Backend.BACKEND_WASM).setReceivedAtMs(System.currentTimeMillis());
        timings.entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> report.addRanked(Measurement.newBuilder()
                .setMedianMs(e.getValue()).setSamples(5).setKernel(KernelRef.newBuilder().setKernelId(e.getKey())
                        .setBackend(Backend.BACKEND_WASM).setOp(OP).setAbiVersion(1))));
        return report.build();
    }

    private static Optional<BestKernel> best(Zoo zoo, String tenant) {
        return zoo.resolve(tenant, OP, Backend.BACKEND_WASM, KIND);
    }

    @Test
    void aFloodOfSessionsFromOneOriginCannotElectItsKernel() {
        String db = database();
        Zoo zoo = zoo(db, TenantData.shared());
        for (int h = 0; h < 5; h++) {
            zoo.ingest(List.of(report("", "honest-" + h, Map.of("k-fast", 1.0 + 0.01 * h, "k-mid", 1.4))));
        }
        assertEquals("k-fast", best(zoo, "").orElseThrow().kernel().getKernelId());
        // one address, 1,000 sessions in batches, each ranking its own kernel first at 0.9x the honest best
        for (int batch = 0; batch < 10; batch++) {
            List<KernelReport> flood = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                flood.add(report("", "attacker", Map.of("k-bad", 0.9, "k-mid", 1.0)));
            }
            zoo.ingest(flood);
        }
        BestKernel after = best(zoo, "").orElseThrow();
        assertEquals("k-fast", after.kernel().getKernelId(), "the flood is one ballot");
        assertEquals(5, after.origins());

        Zoo restarted = zoo(db, TenantData.shared());
        restarted.ingest(List.of(report("", "attacker", Map.of("k-bad", 0.9))));
        assertEquals("k-fast", best(restarted, "").orElseThrow().kernel().getKernelId(),
                "read back from the store, the honest origins are still in the window");
    }

    @Test
    void nothingIsServedBelowTheMinimumOfOriginsAndOriginsCountAcrossRestarts() {
        String db = database();
        Zoo zoo = zoo(db, TenantData.shared());
        assertEquals(Zoo.MIN_ORIGINS, zoo.minOrigins());
        zoo.ingest(List.of(report("", "only", Map.of("k-own", 0.5))));
        for (int i = 0; i < 20; i++) {
            zoo.ingest(List.of(report("", "only", Map.of("k-own", 0.5))));
        }
        assertTrue(best(zoo, "").isEmpty(), "one origin, however many sessions, elects nothing");
        zoo.ingest(List.of(report("", "second", Map.of("k-fast", 1.0, "k-own", 2.0))));
        assertTrue(best(zoo, "").isEmpty(), "two origins elect nothing");

        Zoo restarted = zoo(db, TenantData.shared());
        restarted.ingest(List.of(report("", "third", Map.of("k-fast", 1.1, "k-own", 2.1))));
        BestKernel elected = best(restarted, "").orElseThrow(() -> new AssertionError("the third origin, after a restart, completes the quorum"));
        assertEquals("k-fast", elected.kernel().getKernelId());
        assertEquals(2, elected.origins(), "the two origins that timed it (the first timed only its own)");

        assertThrows(IllegalArgumentException.class, () -> new Zoo(null, null, new ElectionWindows(1), TenantData.shared(), 0));
    }

    /**
     * A kind's peak counts once the minimum of origins measured it, never below the floor; a
     * report keeps the ceiling the gateway acknowledged it under, whatever the kind's peak became.
     */
    @Test
    void oneOriginCannotSetAKindsPeakAndAcknowledgedReportsKeepTheirCeiling() {
        Zoo zoo = zoo(database(), TenantData.shared());
        zoo.ingestMicrobench(peak("forger", 1e-6));
        assertTrue(Double.isNaN(zoo.peakGflops(KIND.getFingerprint())), "one origin's peak is no kind's peak");
        // a report the gateway acknowledged under the Wasm ceiling (no peak measured then) is stored
        KernelReport fast = report("", "honest-0", Map.of("k-fast", 0.002)).toBuilder()
                .setCeilingGflops(LatencyRules.WASM_FLOPS_CEILING / 1e9).build();
        assertTrue(zoo.ingest(List.of(fast)).refused().isEmpty());

        zoo.ingestMicrobench(peak("forger-2", 1e-6));
        zoo.ingestMicrobench(peak("forger-3", 2e-6));
        assertEquals(LatencyRules.PEAK_FLOOR_GFLOPS, zoo.peakGflops(KIND.getFingerprint()),
                "three forged peaks: the floor still holds");
        KernelReport stamped = report("", "honest-1", Map.of("k-fast", 0.002)).toBuilder()
                .setCeilingGflops(LatencyRules.WASM_FLOPS_CEILING / 1e9).build();
        assertTrue(zoo.ingest(List.of(stamped)).refused().isEmpty(), "acknowledged under its ceiling: never refused later");
        Zoo.Ingested unstamped = zoo.ingest(List.of(report("", "honest-2", Map.of("k-fast", 0.002))));
        assertEquals("impossible_latency", unstamped.refused().get(0).reason().kind(),
                "a record with no ceiling is held to the kind's: 32^3 multiply-adds in 2 us is 33 GFLOP/s");
    }

    private static MicrobenchReport peak(String origin, double gflops) {
        return MicrobenchReport.newBuilder().setSessionId("m-" + UUID.randomUUID()).setOrigin(origin).setDevice(KIND)
                .addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitive(Primitive.PRIMITIVE_VECTORIZE).setSpeedup(2))
                .setPeakGflops(gflops).setReceivedAtMs(System.currentTimeMillis()).build();
    }

    @Test
    void anOriginBehindManyTenantsKeysIsOneBallot() {
        Zoo zoo = zoo(database(), TenantData.shared());
        List<KernelReport> batch = new ArrayList<>();
        for (int h = 0; h < 3; h++) {
            batch.add(report("", "honest-" + h, Map.of("k-fast", 1.0, "k-mid", 1.5)));
        }
        for (int t = 0; t < 6; t++) { // six scraped keys, one address
            batch.add(report("tenant-" + t, "scraper", Map.of("k-bad", 0.8)));
        }
        zoo.ingest(batch);
        BestKernel elected = best(zoo, "").orElseThrow();
        assertEquals("k-fast", elected.kernel().getKernelId(), "four ballots, three honest: the scraper's kernel cannot contend");
    }
}
