package dev.jitzoo.codegen.infra;

import dev.jitzoo.codegen.ArtifactCache;
import dev.jitzoo.codegen.CodegenConfig;
import dev.jitzoo.codegen.GuardedArtifactCache;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The kernel cache, on the Redis connection of redis-client, guarded: a Redis outage only costs compiles. */
@ApplicationScoped
public class CodegenWiring {

    @Produces
    @Singleton
    ArtifactCache cache(Instance<StatefulRedisConnection<String, byte[]>> redis, CodegenConfig config, MeterRegistry metrics) {
        GuardedArtifactCache cache = new GuardedArtifactCache(() -> {
            StatefulRedisConnection<String, byte[]> connection = redis.get(); // connects here: throws while Redis is away
            connection.setTimeout(config.cacheTimeout());
            return new RedisArtifactCache(connection, config.cacheTtl());
        }, config.cacheCoolDown());
        // one left by an earlier start in this JVM (tests restart the application) would stay bound to that start's cache
        metrics.find("jitzoo.codegen.cache.failures").meters().forEach(metrics::remove);
        FunctionCounter.builder("jitzoo.codegen.cache.failures", cache, GuardedArtifactCache::failures)
                .description("kernel cache lookups that failed, timed out or were skipped while Redis was down (each compiled)")
                .register(metrics);
        return cache;
    }
}
