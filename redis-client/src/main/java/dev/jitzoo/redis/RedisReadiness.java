package dev.jitzoo.redis;

import io.lettuce.core.api.StatefulRedisConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready while Redis answers PING: for a service that cannot work without it. */
@Readiness
@ApplicationScoped
public class RedisReadiness implements HealthCheck {

    private final StatefulRedisConnection<String, byte[]> redis;

    public RedisReadiness(StatefulRedisConnection<String, byte[]> redis) {
        this.redis = redis;
    }

    @Override
    public HealthCheckResponse call() {
        try {
            return HealthCheckResponse.named("redis").status("PONG".equals(redis.sync().ping())).build();
        } catch (RuntimeException e) {
            return HealthCheckResponse.named("redis").down().withData("error", String.valueOf(e.getMessage())).build();
        }
    }
}
