package dev.jitzoo.zoo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ElectionWindows;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.Zoo;
import dev.jitzoo.zoo.domain.ZooKey;
import dev.jitzoo.zoo.infra.MongoReportStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Zoos built in a test on the real store (the test MongoDB): each database fresh and dropped after
 * the test class; each zoo a replica starting cold, nothing in memory, its cache a map of its own.
 * A test class registers one: {@code @RegisterExtension static final StoreZoos ZOOS = new StoreZoos();}.
 */
final class StoreZoos implements AfterAllCallback {

    private final MongoClient client = MongoClients.create(TestInfra.mongoUri());
    private final List<String> databases = new ArrayList<>();

    /** A fresh database's name. */
    String database(String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        databases.add(name);
        return name;
    }

    /** The database made last. */
    String latest() {
        return databases.get(databases.size() - 1);
    }

    /** A zoo on this database, as a replica starts, serving elections of {@link Zoo#MIN_ORIGINS} origins or more. */
    Zoo zoo(String database, TenantData tenants) {
        return zoo(client.getDatabase(database), tenants);
    }

    /** A zoo as {@link #zoo(String, TenantData)} builds one, on a database reached through a client of the test's own. */
    Zoo zoo(MongoDatabase database, TenantData tenants) {
        return new Zoo(new MongoReportStore(database), new MapCache(), new ElectionWindows(64), tenants);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        databases.forEach(name -> client.getDatabase(name).drop());
        client.close();
    }

    private static final class MapCache implements BestKernelCache {
        private final Map<ZooKey, BestKernel> cached = new ConcurrentHashMap<>();

        @Override
        public Optional<BestKernel> get(ZooKey key) {
            return Optional.ofNullable(cached.get(key));
        }

        @Override
        public void put(ZooKey key, BestKernel best) {
            cached.put(key, best);
        }

        @Override
        public void evict(ZooKey key) {
            cached.remove(key);
        }
    }
}
