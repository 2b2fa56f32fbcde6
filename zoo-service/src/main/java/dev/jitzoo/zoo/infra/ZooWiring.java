package dev.jitzoo.zoo.infra;

import com.mongodb.client.MongoClient;
import dev.jitzoo.zoo.ZooConfig;
import dev.jitzoo.zoo.domain.Analytics;
import dev.jitzoo.zoo.domain.ElectionWindows;
import dev.jitzoo.zoo.domain.GuardedCache;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.Zoo;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Builds the zoo from its real storage: MongoDB through the official driver, Redis through Lettuce
 * (redis-client), the cache guarded so that a slow or dead Redis only costs lookups their speed,
 * and a short-lived copy of it in memory in front.
 */
@ApplicationScoped
public class ZooWiring {

    @Produces
    @Singleton
    ElectionWindows electionWindows(ZooConfig config, MeterRegistry metrics) {
        ElectionWindows windows = new ElectionWindows(config.electionWindows());
        forget(metrics, "jitzoo.zoo.election.windows");
        Gauge.builder("jitzoo.zoo.election.windows", windows, ElectionWindows::size)
                .description("zoo keys whose election window this replica holds in memory").register(metrics);
        return windows;
    }

    @Produces
    @Singleton
    Zoo zoo(MongoClient mongo, StatefulRedisConnection<String, byte[]> redis, ZooConfig config, MeterRegistry metrics,
            ElectionWindows windows) {
        redis.setTimeout(config.cacheTimeout());
        GuardedCache cache = new GuardedCache(new RedisBestKernelCache(redis, config.cacheTtl()), config.cacheCoolDown());
        forget(metrics, "jitzoo.zoo.cache.lookups", "jitzoo.zoo.cache.stale.keys");
        // the cache's lookups by outcome: hit, miss (read from MongoDB), failed (Redis down or slow: read from MongoDB)
        FunctionCounter.builder("jitzoo.zoo.cache.lookups", cache, GuardedCache::hits).tag("result", "hit").register(metrics);
        FunctionCounter.builder("jitzoo.zoo.cache.lookups", cache, GuardedCache::misses).tag("result", "miss").register(metrics);
        FunctionCounter.builder("jitzoo.zoo.cache.lookups", cache, GuardedCache::failures).tag("result", "failed").register(metrics);
        Gauge.builder("jitzoo.zoo.cache.stale.keys", cache, GuardedCache::staleKeys).register(metrics);
        return new Zoo(new MongoReportStore(mongo.getDatabase(config.database())), new NearCache(cache, config.nearCacheTtl(), 100_000),
                windows, new TenantData(config.tenantData() == ZooConfig.TenantDataMode.SEPARATE, config.tenantTrust(),
                        config.defaultTrust()), config.minOrigins());
    }

    @Produces
    @Singleton
    Analytics analytics(MongoClient mongo, ZooConfig config) {
        return new MongoAnalytics(mongo.getDatabase(config.database()));
    }

    /**
     * Removes meters of these names left by an earlier start in this JVM (tests restart the
     * application; the registry outlives it): a function meter registered again would stay bound
     * to the earlier objects, held weakly, and vanish from the scrape once they are collected.
     */
    private static void forget(MeterRegistry metrics, String... names) {
        for (String name : names) {
            metrics.find(name).meters().forEach(metrics::remove);
        }
    }
}
