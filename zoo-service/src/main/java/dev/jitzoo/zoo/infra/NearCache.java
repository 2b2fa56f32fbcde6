package dev.jitzoo.zoo.infra;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ZooKey;
import java.time.Duration;
import java.util.Optional;

/**
 * Elected kernels in this process's memory (Caffeine) in front of the shared cache: a Resolve of a
 * key seen in the last {@code ttl} takes no network round trip. This replica's own elections
 * update it at once; another replica's reach it within {@code ttl}.
 */
public final class NearCache implements BestKernelCache {

    private final Cache<ZooKey, BestKernel> near;
    private final BestKernelCache shared;

    public NearCache(BestKernelCache shared, Duration ttl, long maxKeys) {
        this.shared = shared;
        this.near = Caffeine.newBuilder().expireAfterWrite(ttl).maximumSize(maxKeys).build();
    }

    @Override
    public Optional<BestKernel> get(ZooKey key) {
        BestKernel known = near.getIfPresent(key);
        if (known != null) {
            return Optional.of(known);
        }
        Optional<BestKernel> found = shared.get(key);
        found.ifPresent(best -> near.put(key, best));
        return found;
    }

    @Override
    public void put(ZooKey key, BestKernel best) {
        near.put(key, best);
        shared.put(key, best);
    }

    @Override
    public void evict(ZooKey key) {
        near.invalidate(key);
        shared.evict(key);
    }
}
