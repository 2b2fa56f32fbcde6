package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.Zoo;
import dev.jitzoo.zoo.infra.MongoReportStore;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The keys that have reports ({@link MongoReportStore#REPORT_KEYS}), on the real store: a key new
 * with its batch is elected without a query of the reports (where the store indexes only
 * {@code _id}, as the embedded one, such a query reads them all); a replica starting cold reads a
 * known key's reports once; a store written before the keys were kept has them entered at start,
 * so no origin counted before is lost.
 */
class ReportKeysTest {

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(16).addShape(16).addShape(16).build();
    private static final DeviceProfile KIND = DeviceProfile.newBuilder().setFingerprint("report-keys-test").build();

    @RegisterExtension
    static final StoreZoos ZOOS = new StoreZoos();

    private final ReportQueries reportQueries = new ReportQueries();
    private final MongoClient client = MongoClients.create(MongoClientSettings.builder()
            .applyConnectionString(new ConnectionString(TestInfra.mongoUri())).addCommandListener(reportQueries).build());

    /** The queries sent to the reports collection, by command name. */
    static final class ReportQueries extends CopyOnWriteArrayList<String> implements CommandListener {
        @Override
        public void commandStarted(CommandStartedEvent event) {
            String command = event.getCommandName();
            if ((command.equals("find") || command.equals("aggregate"))
                    && event.getCommand().getString(command).getValue().equals(MongoReportStore.REPORTS)) {
                add(command);
            }
        }
    }

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void aKeyNewWithItsBatchIsElectedWithoutReadingTheReports() {
        MongoDatabase db = client.getDatabase(ZOOS.database("keys"));
        Zoo zoo = ZOOS.zoo(db, TenantData.shared());
        reportQueries.clear();
        for (int origin = 0; origin < Zoo.MIN_ORIGINS; origin++) { // a batch each, as reports arrive one by one
            zoo.ingest(List.of(report("origin-" + origin)));
        }
        assertEquals(Zoo.MIN_ORIGINS, best(zoo).orElseThrow().origins());
        assertEquals(List.of(), reportQueries, "a new key's reports are not looked for");

        Zoo restarted = ZOOS.zoo(db, TenantData.shared());
        reportQueries.clear();
        restarted.ingest(List.of(report("origin-late")));
        assertEquals(List.of("find"), reportQueries, "a key the store holds is read once, as the replica starts to hold it");
        assertEquals(Zoo.MIN_ORIGINS + 1, best(restarted).orElseThrow().origins(), "the origins counted before the restart count");
    }

    @Test
    void keysOfReportsStoredBeforeTheyWereKeptAreEnteredAtStart() {
        String name = ZOOS.database("keys-before");
        MongoDatabase db = client.getDatabase(name);
        Zoo zoo = ZOOS.zoo(db, TenantData.shared());
        for (int origin = 0; origin < Zoo.MIN_ORIGINS - 1; origin++) {
            zoo.ingest(List.of(report("origin-" + origin)));
        }
        assertTrue(best(zoo).isEmpty(), "too few origins to serve an election");
        db.getCollection(MongoReportStore.REPORT_KEYS).drop(); // as a store that an earlier zoo wrote

        Zoo upgraded = ZOOS.zoo(db, TenantData.shared());
        upgraded.ingest(List.of(report("origin-last")));
        assertEquals(Zoo.MIN_ORIGINS, best(upgraded).orElseThrow().origins(), "the reports stored before count");
    }

    private static Optional<BestKernel> best(Zoo zoo) {
        return zoo.resolve("", OP, Backend.BACKEND_WASM, KIND);
    }

    private static KernelReport report(String origin) {
        KernelReport.Builder report = KernelReport.newBuilder().setSessionId("s-" + UUID.randomUUID()).setOrigin(origin)
                .setDevice(KIND).setOp(OP).setBackend(Backend.BACKEND_WASM).setReceivedAtMs(System.currentTimeMillis());
        for (String kernel : List.of("k-fast", "k-slow")) {
            report.addRanked(Measurement.newBuilder().setMedianMs(kernel.equals("k-fast") ? 1.0 : 2.0).setSamples(5)
                    .setKernel(KernelRef.newBuilder().setKernelId(kernel).setBackend(Backend.BACKEND_WASM).setOp(OP).setAbiVersion(1)));
        }
        return report.build();
    }
}
