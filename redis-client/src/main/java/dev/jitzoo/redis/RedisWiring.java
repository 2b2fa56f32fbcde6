package dev.jitzoo.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The Redis connection (Lettuce) a service's caches use, string keys and byte values, from
 * {@code jitzoo.redis.uri} (e.g. {@code redis://127.0.0.1:6390}; required). A service that depends
 * on this jar has it as a bean. No service needs Redis to serve (each keeps going without its cache
 * or its sessions' resume tokens), so none is made not-ready by a Redis outage.
 */
@ApplicationScoped
public class RedisWiring {

    /**
     * The client, on resources of its own without Lettuce's per-command latency histograms (on by
     * default where HdrHistogram is on the class path: a cost on every command, read by nothing here).
     */
    @Produces
    @Singleton
    RedisClient client(@ConfigProperty(name = "jitzoo.redis.uri") String uri) {
        ClientResources resources = DefaultClientResources.builder().commandLatencyRecorder(CommandLatencyRecorder.disabled()).build();
        return RedisClient.create(resources, uri);
    }

    /** Disposed with what it was given, never this bean's fields: the context may be gone by then. */
    void shutdown(@Disposes RedisClient client) {
        client.shutdown();
        client.getResources().shutdown(); // resources a client was given are not its to shut down
    }

    /** The one connection, string keys and byte values. */
    @Produces
    @Singleton
    StatefulRedisConnection<String, byte[]> redis(RedisClient client) {
        return client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    void close(@Disposes StatefulRedisConnection<String, byte[]> connection) {
        connection.close();
    }
}
