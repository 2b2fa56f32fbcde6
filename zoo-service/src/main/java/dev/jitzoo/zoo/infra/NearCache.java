package dev.jitzoo.zoo.infra;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.BestKernelCache;
import dev.jitzoo.zoo.domain.ZooKey;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Elected kernels in this process's memory (Caffeine) in front of the shared cache: a Resolve of a
 * key seen lately takes no network round trip. An entry older than {@code ttl} is still answered
 * while it is read again from the shared cache in the background, so a hot key never waits on
 * Redis; one not read for ten times {@code ttl} is dropped. This replica's own elections update it
 * at once; another replica's reach it within about {@code ttl}.
 */
public final class NearCache implements BestKernelCache {

    /** Refreshes at once: each is one Redis read, bounded by the cache's timeout. */
    private static final int REFRESH_THREADS = 2;
    /** The threads that read keys older than the TTL again from the shared cache, in the background. */
    private static final ExecutorService REFRESHES = Executors.newFixedThreadPool(REFRESH_THREADS, runnable -> {
        Thread thread = new Thread(runnable, "zoo-near-cache-refresh");
        thread.setDaemon(true);
        return thread;
    });

    private final LoadingCache<ZooKey, BestKernel> near;
    private final BestKernelCache shared;

    public NearCache(BestKernelCache shared, Duration ttl, long maxKeys) {
        this.shared = shared;
        // refreshes run on threads of their own: by default they would go to the common pool, which
        // CompletableFuture replaces with a new thread per task where it has one core or two (a small pod)
        this.near = Caffeine.newBuilder().refreshAfterWrite(ttl).expireAfterWrite(ttl.multipliedBy(10)).maximumSize(maxKeys)
                .executor(REFRESHES).build(key -> shared.get(key).orElse(null));
    }

    @Override
    public Optional<BestKernel> get(ZooKey key) {
        return Optional.ofNullable(near.get(key)); // a miss reads the shared cache, and keeps what it found
    }

    @Override
    public Optional<BestKernel> held(ZooKey key) {
        return Optional.ofNullable(near.getIfPresent(key));
    }

    @Override
    public void put(ZooKey key, BestKernel best) {
        near.put(key, best);
        shared.put(key, best);
    }

    @Override
    public void putAll(Map<ZooKey, BestKernel> bests) {
        near.putAll(bests);
        shared.putAll(bests);
    }

    @Override
    public void evict(ZooKey key) {
        near.invalidate(key);
        shared.evict(key);
    }
}
