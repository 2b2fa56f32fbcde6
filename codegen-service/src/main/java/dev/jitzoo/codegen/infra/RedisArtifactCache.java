package dev.jitzoo.codegen.infra;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.codegen.ArtifactCache;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import io.lettuce.core.KeyValue;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Generated kernels in Redis under {@code jitzoo:codegen:r<emitter revision>:<kernel id>} (Wasm)
 * or {@code jitzoo:codegen:wgsl-r<emitter revision>:<kernel id>} (WGSL). The id is a hash of
 * everything the request says; the revision stands for that backend's emitter. Identical requests
 * from many clients compile once. A batch's kernels are read with one {@code MGET} and written
 * with their {@code SETEX}es pipelined, one round trip each way for the whole batch.
 */
public class RedisArtifactCache implements ArtifactCache {

    private static final Logger LOG = Logger.getLogger(RedisArtifactCache.class);
    private static final String WASM_PREFIX = "jitzoo:codegen:r" + WasmCompiler.EMITTER_REVISION + ":";
    private static final String WGSL_PREFIX = "jitzoo:codegen:wgsl-r" + WgslCompiler.EMITTER_REVISION + ":";

    private final RedisCommands<String, byte[]> redis;
    private final RedisAsyncCommands<String, byte[]> pipelined;
    private final Duration timeout;
    private final Duration ttl;

    public RedisArtifactCache(StatefulRedisConnection<String, byte[]> connection, Duration ttl) {
        this.redis = connection.sync();
        this.pipelined = connection.async();
        this.timeout = connection.getTimeout();
        this.ttl = ttl;
    }

    @Override
    public Optional<KernelArtifact> get(Backend backend, String kernelId) {
        String key = key(backend, kernelId);
        return parse(key, redis.get(key));
    }

    @Override
    public Map<Key, KernelArtifact> getAll(Collection<Key> keys) {
        List<Key> asked = List.copyOf(keys);
        List<KeyValue<String, byte[]>> values = redis.mget(asked.stream().map(k -> key(k.backend(), k.kernelId())).toArray(String[]::new));
        Map<Key, KernelArtifact> held = new HashMap<>();
        for (int i = 0; i < asked.size(); i++) {
            Key k = asked.get(i);
            parse(values.get(i).getKey(), values.get(i).getValueOrElse(null)).ifPresent(artifact -> held.put(k, artifact));
        }
        return held;
    }

    @Override
    public void put(KernelArtifact artifact) {
        redis.setex(key(artifact), ttl.toSeconds(), artifact.toByteArray());
    }

    @Override
    public void putAll(Collection<KernelArtifact> artifacts) {
        List<RedisFuture<String>> writes = new ArrayList<>(artifacts.size());
        for (KernelArtifact artifact : artifacts) {
            writes.add(pipelined.setex(key(artifact), ttl.toSeconds(), artifact.toByteArray()));
        }
        if (!LettuceFutures.awaitAll(timeout, writes.toArray(new RedisFuture<?>[0]))) {
            throw new RedisCommandTimeoutException("writing " + writes.size() + " kernels took over " + timeout.toMillis() + " ms");
        }
    }

    /** The artifact cached under {@code key}, if any; a corrupt one is dropped (and compiled again). */
    private Optional<KernelArtifact> parse(String key, byte[] bytes) {
        if (bytes == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(KernelArtifact.parseFrom(bytes));
        } catch (InvalidProtocolBufferException e) {
            LOG.warnf("dropping corrupt cached kernel %s", key);
            redis.del(key);
            return Optional.empty();
        }
    }

    private static String key(KernelArtifact artifact) {
        return key(artifact.getRef().getBackend(), artifact.getRef().getKernelId());
    }

    private static String key(Backend backend, String kernelId) {
        return (backend == Backend.BACKEND_WGSL ? WGSL_PREFIX : WASM_PREFIX) + kernelId;
    }
}
