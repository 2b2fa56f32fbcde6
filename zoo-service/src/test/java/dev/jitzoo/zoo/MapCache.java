package dev.jitzoo.zoo;

import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ZooKey;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The elected kernels' cache as a map, for zoos built in a test on the real store: a new one is a replica starting cold. */
final class MapCache implements BestKernelCache {

    private final Map<ZooKey, BestKernel> cached = new ConcurrentHashMap<>();

    @Override
    public Optional<BestKernel> get(ZooKey key) {
        return Optional.ofNullable(cached.get(key));
    }

    @Override
    public void put(ZooKey key, BestKernel best) {
        cached.put(key, best);
    }

    @Override
    public void evict(ZooKey key) {
        cached.remove(key);
    }
}
