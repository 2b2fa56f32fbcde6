package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.SimilarKernels;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.Zoo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The zoo's tenant data policy, on the real MongoDB store: tenants' reports kept apart
 * ({@code separate}: each tenant's sessions get the kernels its own devices elected, and similar
 * kinds only from its own reports), or pooled with trust weights ({@code shared}: a distrusted
 * tenant's many origins cannot outvote a trusted tenant's few; a tenant of trust 0 is stored
 * but never votes).
 */
class TenantDataTest {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(64).addShape(64).addShape(64).build();
    private static final DeviceProfile KIND_A = DeviceProfile.newBuilder().setFingerprint("tenant-test-a").build();
    private static final DeviceProfile KIND_B = DeviceProfile.newBuilder().setFingerprint("tenant-test-b").build();

    @RegisterExtension
    static final StoreZoos ZOOS = new StoreZoos();

    /** A zoo of its own database. */
    private static Zoo zoo(TenantData tenants) {
        return ZOOS.zoo(ZOOS.database("tenants"), tenants);
    }

    /** A report of a tenant's session from its own origin: the kernels' latencies, fastest first. */
    private static KernelReport report(String tenant, String origin, DeviceProfile device, Map<String, Double> timings) {
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId("s-" + UUID.randomUUID()).setOrigin(origin)
                .setTenant(tenant).setDevice(device).setOp(OP).setBackend(Backend.BACKEND_WASM)
                .setReceivedAtMs(System.currentTimeMillis());
        timings.entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> report.addRanked(
                Measurement.newBuilder().setMedianMs(e.getValue()).setSamples(5).setKernel(KernelRef.newBuilder()
                        .setKernelId(e.getKey()).setBackend(Backend.BACKEND_WASM).setOp(OP).setAbiVersion(1)
                        .setSchedule(Schedule.newBuilder().setY0(4).setX0(8).setVectorize(true)))));
        return report.build();
    }

    /** {@code origins} origins of a tenant, each one session timing k-fast at 1 ms and k-slow at 3 ms, or the other way. */
    private static List<KernelReport> crowd(String tenant, int origins, DeviceProfile device, String fastest) {
        List<KernelReport> reports = new ArrayList<>();
        for (int i = 0; i < origins; i++) {
            reports.add(report(tenant, tenant + "-origin-" + i, device, fastest.equals("k-fast")
                    ? Map.of("k-fast", 1.0, "k-slow", 3.0) : Map.of("k-fast", 3.0, "k-slow", 1.0)));
        }
        return reports;
    }

    private static String elected(Zoo zoo, String tenant, DeviceProfile device) {
        return zoo.resolve(tenant, OP, Backend.BACKEND_WASM, device).map(b -> b.kernel().getKernelId()).orElse("none");
    }

    @Test
    void separateDataElectsEachTenantsKernelsFromItsOwnReports() {
        Zoo zoo = zoo(new TenantData(true, Map.of(), 1));
        List<KernelReport> batch = new ArrayList<>(crowd("acme", 3, KIND_A, "k-fast"));
        batch.addAll(crowd("", 5, KIND_A, "k-slow")); // sessions with no API key: the public tenant
        zoo.ingest(batch);

        assertEquals("k-fast", elected(zoo, "acme", KIND_A), "acme's sessions get what acme's devices elected");
        assertEquals("k-slow", elected(zoo, "public", KIND_A), "the public tenant's get its own");
        assertEquals("k-slow", elected(zoo, "", KIND_A), "no tenant is the public one");
        assertEquals("none", elected(zoo, "globex", KIND_A), "a tenant with no reports of its own gets nothing of others'");

        List<String> similarForAcme = zoo.similar("acme", OP, Backend.BACKEND_WASM, KIND_B, 8).kernels().stream()
                .map(SimilarKernels.Scored::kernel).map(KernelRef::getKernelId).toList();
        assertEquals("k-fast", similarForAcme.get(0), "a similar kind's best, from acme's reports: " + similarForAcme);
        assertEquals(0, zoo.similar("globex", OP, Backend.BACKEND_WASM, KIND_B, 8).similarKinds(),
                "no similar kind is found in another tenant's reports");
    }

    @Test
    void sharedDataPoolsTenantsAndWeighsEachByItsTrust() {
        // three origins of a trusted partner against ten of the public tenant, who disagree
        List<KernelReport> batch = new ArrayList<>(crowd("partner", 3, KIND_A, "k-fast"));
        batch.addAll(crowd("public", 10, KIND_A, "k-slow"));

        Zoo alike = zoo(TenantData.shared());
        alike.ingest(batch);
        assertEquals("k-slow", elected(alike, "partner", KIND_A), "trusted alike, the ten outvote the three");
        assertEquals("k-slow", elected(alike, "public", KIND_A), "one election for every tenant");

        Zoo weighted = zoo(new TenantData(false, Map.of("partner", 1.0), 0.1));
        weighted.ingest(batch);
        assertEquals("k-fast", elected(weighted, "public", KIND_A), "ten origins at 0.1 weigh less than three at 1");
        BestKernel best = weighted.resolve("partner", OP, Backend.BACKEND_WASM, KIND_A).orElseThrow();
        assertEquals(1.0, best.medianMs(), 1e-9, "the latency is the trusted origins' (a weighted median)");

        Zoo restarted = ZOOS.zoo(ZOOS.latest(), new TenantData(false, Map.of("partner", 1.0), 0.1));
        restarted.ingest(crowd("public", 2, KIND_A, "k-slow"));
        assertEquals("k-fast", elected(restarted, "public", KIND_A), "a replica that reads the window from MongoDB weighs it alike");
    }

    @Test
    void aTenantOfTrustZeroIsStoredButNeverVotes() {
        Zoo zoo = zoo(new TenantData(false, Map.of("spam", 0.0), 1));
        zoo.ingest(crowd("spam", 20, KIND_A, "k-slow"));
        assertEquals("none", elected(zoo, "public", KIND_A), "only votes of no weight: no election");
        assertEquals(40, zoo.countMeasurements(KIND_A.getFingerprint()), "its 20 reports of 2 kernels are stored");

        zoo.ingest(crowd("public", 2, KIND_A, "k-fast"));
        assertEquals("none", elected(zoo, "spam", KIND_A), "two trusted devices are under the minimum of origins; the twenty do not count");
        zoo.ingest(crowd("public", 3, KIND_A, "k-fast")); // a third origin (the first two report again)
        assertEquals("k-fast", elected(zoo, "spam", KIND_A), "three trusted devices elect; the twenty still do not count");
    }

    @Test
    void aTrustThatIsNoWeightIsRefusedAtStart() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TenantData(false, Map.of("acme", -1.0), 1));
        assertTrue(e.getMessage().contains("jitzoo.zoo.tenant-trust.acme"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new TenantData(false, Map.of(), Double.NaN));
    }
}
