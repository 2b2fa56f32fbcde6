package dev.jitzoo.codegen;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where generated kernels are kept by id, so identical requests compile once (the port
 * {@link KernelGenerator} needs; Redis in {@code infra/}). A cache may lose anything: a kernel can
 * always be generated again.
 */
public interface ArtifactCache {

    /** A kernel's place in the cache: its backend and id. */
    record Key(Backend backend, String kernelId) {
    }

    Optional<KernelArtifact> get(Backend backend, String kernelId);

    void put(KernelArtifact artifact);

    /** Those of {@code keys} the cache holds (the others absent): a batch's lookups, in one round trip where the cache can. */
    default Map<Key, KernelArtifact> getAll(Collection<Key> keys) {
        Map<Key, KernelArtifact> held = new HashMap<>();
        for (Key key : keys) {
            get(key.backend(), key.kernelId()).ifPresent(artifact -> held.put(key, artifact));
        }
        return held;
    }

    /** Keeps every artifact: a batch's fresh kernels, in one round trip where the cache can. */
    default void putAll(Collection<KernelArtifact> artifacts) {
        artifacts.forEach(this::put);
    }
}
