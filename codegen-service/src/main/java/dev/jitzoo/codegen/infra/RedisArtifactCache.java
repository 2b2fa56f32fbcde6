package dev.jitzoo.codegen.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.codegen.ArtifactCache;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Generated kernels in Redis under {@code jitzoo:codegen:r<emitter revision>:<kernel id>} (Wasm)
 * or {@code jitzoo:codegen:wgsl-r<emitter revision>:<kernel id>} (WGSL). The id is a hash of
 * everything the request says; the revision stands for that backend's emitter. Identical requests
 * from many clients compile once.
 */
public class RedisArtifactCache implements ArtifactCache {

    private static final Logger LOG = Logger.getLogger(RedisArtifactCache.class);
    private static final String WASM_PREFIX = "jitzoo:codegen:r" + WasmCompiler.EMITTER_REVISION + ":";
    private static final String WGSL_PREFIX = "jitzoo:codegen:wgsl-r" + WgslCompiler.EMITTER_REVISION + ":";

    private final RedisCommands<String, byte[]> redis;
    private final Duration ttl;

    public RedisArtifactCache(RedisCommands<String, byte[]> redis, Duration ttl) {
        this.redis = redis;
        this.ttl = ttl;
    }

    @Override
    public Optional<KernelArtifact> get(Backend backend, String kernelId) {
        String key = key(backend, kernelId);
        byte[] bytes = redis.get(key);
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(KernelArtifact.parseFrom(bytes));
        } catch (InvalidProtocolBufferException e) {
            LOG.warnf("dropping corrupt cached kernel %s", kernelId);
            redis.del(key);
            return Optional.empty();
        }
    }

    @Override
    public void put(KernelArtifact artifact) {
        redis.setex(key(artifact.getRef().getBackend(), artifact.getRef().getKernelId()), ttl.toSeconds(),
                artifact.toByteArray());
    }

    private static String key(Backend backend, String kernelId) {
        return (backend == Backend.BACKEND_WGSL ? WGSL_PREFIX : WASM_PREFIX) + kernelId;
    }
}
