package dev.jitzoo.zoo;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the zoo service. MongoDB and Kafka are set through Quarkus' own keys, Redis (the
 * elected kernels' cache) through {@code jitzoo.redis.uri} (redis-client).
 */
@ConfigMapping(prefix = "jitzoo.zoo")
public interface ZooConfig {

    /** MongoDB database holding reports and elections. */
    @WithDefault("jitzoo")
    String database();

    /** How long an elected kernel stays in the Redis cache before it is read again from MongoDB. */
    @WithDefault("PT1H")
    Duration cacheTtl();

    /** How long one cache call may take: past it the lookup goes to MongoDB. */
    @WithDefault("PT0.25S")
    Duration cacheTimeout();

    /**
     * How long an elected kernel stays in each zoo replica's own memory in front of Redis: another
     * replica's new election reaches this one's Resolve within it.
     */
    @WithDefault("PT1S")
    Duration nearCacheTtl();

    /**
     * How many zoo keys' election windows this replica keeps in memory (each at most
     * {@code Zoo.ELECTION_WINDOW} sessions' votes); a key past them is read again from MongoDB
     * when its next report arrives.
     */
    @WithDefault("1024")
    int electionWindows();

    /**
     * Tenants' reports: {@code shared} (the default) elects from every tenant's, each weighing its
     * trust; {@code separate} elects each tenant's kernels from its own alone (see {@code TenantData}).
     */
    @WithDefault("shared")
    TenantDataMode tenantData();

    /** How much each named tenant's network origins weigh in a shared election (0: its reports do not vote). */
    Map<String, Double> tenantTrust();

    /** How much the origins of a tenant not named in {@code tenant-trust} weigh in a shared election. */
    @WithDefault("1")
    double defaultTrust();

    enum TenantDataMode {
        SHARED, SEPARATE
    }

    /** After a cache call failed, how long lookups skip the cache. */
    @WithDefault("PT5S")
    Duration cacheCoolDown();
}
