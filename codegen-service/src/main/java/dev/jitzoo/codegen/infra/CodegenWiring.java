package dev.jitzoo.codegen.infra;

import dev.jitzoo.codegen.ArtifactCache;
import dev.jitzoo.codegen.CodegenConfig;
import io.lettuce.core.api.StatefulRedisConnection;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** The kernel cache, on the Redis connection of redis-client (which also checks readiness). */
@ApplicationScoped
public class CodegenWiring {

    @Produces
    @Singleton
    ArtifactCache cache(StatefulRedisConnection<String, byte[]> redis, CodegenConfig config) {
        return new RedisArtifactCache(redis.sync(), config.cacheTtl());
    }
}
