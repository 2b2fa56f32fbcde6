package dev.jitzoo.zoo.domain;

import java.util.Optional;

/** Fast lookup of elected kernels, in front of the {@link ReportStore}. */
public interface BestKernelCache {

    Optional<BestKernel> get(ZooKey key);

    void put(ZooKey key, BestKernel best);

    /** Forgets a key (its entry is stale). */
    void evict(ZooKey key);
}
