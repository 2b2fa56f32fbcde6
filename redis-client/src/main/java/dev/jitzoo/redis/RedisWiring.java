package dev.jitzoo.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * The Redis connection (Lettuce) a service's caches use, string keys and byte values, from
 * {@code jitzoo.redis.uri} (e.g. {@code redis://127.0.0.1:6390}; required), and the readiness
 * check that pings it. A service that depends on this jar has both as beans.
 */
@ApplicationScoped
public class RedisWiring {

    @Produces
    @Singleton
    StatefulRedisConnection<String, byte[]> redis(@ConfigProperty(name = "jitzoo.redis.uri") String uri) {
        return RedisClient.create(uri).connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    void close(@Disposes StatefulRedisConnection<String, byte[]> connection) {
        connection.close();
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
