package dev.jitzoo.zoo.domain;

import java.util.Map;
import java.util.Optional;

/** Fast lookup of elected kernels, in front of the {@link ReportStore}. */
public interface BestKernelCache {

    Optional<BestKernel> get(ZooKey key);

    /** What this process holds of the key without any I/O (nothing, unless the cache keeps a copy in memory). */
    default Optional<BestKernel> held(ZooKey key) {
        return Optional.empty();
    }

    void put(ZooKey key, BestKernel best);

    /** Puts many keys at once (a batch's elections); one round trip where the cache can. */
    default void putAll(Map<ZooKey, BestKernel> bests) {
        bests.forEach(this::put);
    }

    /** Forgets a key (its entry is stale). */
    void evict(ZooKey key);
}
