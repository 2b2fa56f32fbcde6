package dev.jitzoo.zoo.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ZooKey;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import org.jboss.logging.Logger;

/** Elected kernels in Redis as protobuf bytes under {@code jitzoo:zoo:best:<key>}, with a TTL. */
public class RedisBestKernelCache implements BestKernelCache {

    private static final Logger LOG = Logger.getLogger(RedisBestKernelCache.class);
    private static final String PREFIX = "jitzoo:zoo:best:";

    private final RedisCommands<String, byte[]> redis;
    private final Duration ttl;

    public RedisBestKernelCache(RedisCommands<String, byte[]> redis, Duration ttl) {
        this.redis = redis;
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
        byte[] bytes = ResolvedKernel.newBuilder()
                .setFound(true)
                .setKernel(best.kernel())
                .setMedianMs(best.medianMs())
                .setReports(best.reports())
                .setOrigins(best.origins())
                .build().toByteArray();
        redis.setex(PREFIX + key.asString(), ttl.toSeconds(), bytes);
    }
}
