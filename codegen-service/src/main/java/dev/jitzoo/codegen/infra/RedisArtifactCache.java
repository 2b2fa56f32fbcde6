package dev.jitzoo.codegen.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.codegen.kernel.WasmCompiler;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Generated kernels in Redis under {@code jitzoo:codegen:r<emitter revision>:<kernel id>}. The id
 * is a hash of everything the request says; the revision stands for the compiler itself. Identical
 * requests from many clients compile once.
 */
public class RedisArtifactCache {

    private static final Logger LOG = Logger.getLogger(RedisArtifactCache.class);
    private static final String PREFIX = "jitzoo:codegen:r" + WasmCompiler.EMITTER_REVISION + ":";

    private final RedisCommands<String, byte[]> redis;
    private final Duration ttl;

    public RedisArtifactCache(RedisCommands<String, byte[]> redis, Duration ttl) {
        this.redis = redis;
        this.ttl = ttl;
    }

    public Optional<KernelArtifact> get(String kernelId) {
        byte[] bytes = redis.get(PREFIX + kernelId);
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(KernelArtifact.parseFrom(bytes));
        } catch (InvalidProtocolBufferException e) {
            LOG.warnf("dropping corrupt cached kernel %s", kernelId);
            redis.del(PREFIX + kernelId);
            return Optional.empty();
        }
    }

    public void put(KernelArtifact artifact) {
        redis.setex(PREFIX + artifact.getRef().getKernelId(), ttl.toSeconds(), artifact.toByteArray());
    }
}
