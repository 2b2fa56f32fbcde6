package dev.jitzoo.codegen.infra;

import dev.jitzoo.codegen.CodegenConfig;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** The Redis connection (Lettuce) behind the kernel cache, and the readiness check that pings it. */
@ApplicationScoped
public class CodegenWiring {

    @Produces
    @Singleton
    StatefulRedisConnection<String, byte[]> redis(CodegenConfig config) {
        return RedisClient.create(config.redisUri())
                .connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    void close(@Disposes StatefulRedisConnection<String, byte[]> connection) {
        connection.close();
    }

    @Produces
    @Singleton
    RedisArtifactCache cache(StatefulRedisConnection<String, byte[]> redis, CodegenConfig config) {
        return new RedisArtifactCache(redis.sync(), config.cacheTtl());
    }

    @Produces
    @Readiness
    @ApplicationScoped
    HealthCheck redisReadiness(StatefulRedisConnection<String, byte[]> redis) {
        return () -> {
            try {
                return HealthCheckResponse.named("redis").status("PONG".equals(redis.sync().ping())).build();
            } catch (RuntimeException e) {
                return HealthCheckResponse.named("redis").down().withData("error", String.valueOf(e.getMessage())).build();
            }
        };
    }
}
