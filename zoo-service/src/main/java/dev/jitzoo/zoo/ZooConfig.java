package dev.jitzoo.zoo;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

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
     * How many zoo keys' election windows this replica keeps in memory (each the latest sessions of
     * at most {@code Zoo.ELECTION_ORIGINS} origins); a key past them is read again from MongoDB
     * when its next report arrives.
     */
    @WithDefault("1024")
    int electionWindows();

    /**
     * Fewest network origins whose reports elect a key's kernel (and measure a device kind's peak):
     * below it nothing is served and sessions start from the space's order, so one address cannot
     * choose what every device of a kind runs. {@code ./jitzoo up} sets 1: on one machine every
     * device is one origin.
     */
    @WithDefault("3")
    int minOrigins();

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

    /**
     * The token the admin surfaces ({@code /api/v1}, {@code /dashboard}) ask for; none: they are off.
     * {@code ./jitzoo up} writes a random one to {@code .jitzoo/admin-token}; the chart keeps one in a Secret.
     */
    Optional<String> adminToken();

    /** After a cache call failed, how long lookups skip the cache. */
    @WithDefault("PT5S")
    Duration cacheCoolDown();
}
