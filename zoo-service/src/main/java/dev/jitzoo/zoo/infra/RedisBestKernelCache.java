package dev.jitzoo.zoo.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ZooKey;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/** Elected kernels in Redis as protobuf bytes under {@code jitzoo:zoo:best:<key>}, with a TTL. */
public class RedisBestKernelCache implements BestKernelCache {

    private static final Logger LOG = Logger.getLogger(RedisBestKernelCache.class);
    private static final String PREFIX = "jitzoo:zoo:best:";

    private final RedisCommands<String, byte[]> redis;
    private final RedisAsyncCommands<String, byte[]> pipelined;
    private final Duration timeout;
    private final Duration ttl;

    /** Commands on {@code connection} fail past its timeout. */
    public RedisBestKernelCache(StatefulRedisConnection<String, byte[]> connection, Duration ttl) {
        this.redis = connection.sync();
        this.pipelined = connection.async();
        this.timeout = connection.getTimeout();
        this.ttl = ttl;
    }

    @Override
    public Optional<BestKernel> get(ZooKey key) {
        byte[] bytes = redis.get(PREFIX + key.asString());
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            ResolvedKernel cached = ResolvedKernel.parseFrom(bytes);
            return Optional.of(new BestKernel(cached.getKernel(), cached.getMedianMs(), cached.getReports(), cached.getOrigins()));
        } catch (InvalidProtocolBufferException e) {
            LOG.warnf("dropping corrupt cache entry %s", key.asString());
            redis.del(PREFIX + key.asString());
            return Optional.empty();
        }
    }

    @Override
    public void evict(ZooKey key) {
        redis.del(PREFIX + key.asString());
    }

    @Override
    public void put(ZooKey key, BestKernel best) {
        redis.setex(PREFIX + key.asString(), ttl.toSeconds(), bytes(best));
    }

    /** Every key written without waiting for each answer, then all awaited within the connection's timeout. */
    @Override
    public void putAll(Map<ZooKey, BestKernel> bests) {
        List<RedisFuture<String>> writes = new ArrayList<>(bests.size());
        bests.forEach((key, best) -> writes.add(pipelined.setex(PREFIX + key.asString(), ttl.toSeconds(), bytes(best))));
        if (!LettuceFutures.awaitAll(timeout, writes.toArray(RedisFuture[]::new))) {
            throw new RedisCommandTimeoutException("writing " + bests.size() + " elections took over " + timeout.toMillis() + " ms");
        }
    }

    private static byte[] bytes(BestKernel best) {
        return ResolvedKernel.newBuilder()
                .setFound(true)
                .setKernel(best.kernel())
                .setMedianMs(best.medianMs())
                .setReports(best.reports())
                .setOrigins(best.origins())
                .build().toByteArray();
    }
}
