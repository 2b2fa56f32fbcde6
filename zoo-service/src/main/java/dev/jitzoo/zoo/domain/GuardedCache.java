package dev.jitzoo.zoo.domain;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * Keeps a cache from ever being a point of failure: a call that fails (the cache down, or slower
 * than its timeout) is a miss, and the cache is left alone for a cool-down, so lookups go to the
 * store at once instead of waiting on a dead cache each time. A key whose new best could not be
 * written is remembered, and evicted as soon as the cache answers again, so it never serves the
 * best from before the outage.
 */
public final class GuardedCache implements BestKernelCache {

    private static final Logger LOG = Logger.getLogger(GuardedCache.class);
    /** Keys remembered as stale at most; past it the oldest news is the cache's TTL's to repair. */
    private static final int MAX_STALE = 100_000;

    private final BestKernelCache cache;
    private final long coolDownNanos;
    private final LongSupplier clock;
    private final Set<ZooKey> stale = ConcurrentHashMap.newKeySet();
    private volatile long downUntil = Long.MIN_VALUE;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder failures = new LongAdder();

    public GuardedCache(BestKernelCache cache, Duration coolDown) {
        this(cache, coolDown, System::nanoTime);
    }

    GuardedCache(BestKernelCache cache, Duration coolDown, LongSupplier clock) {
        this.cache = cache;
        this.coolDownNanos = coolDown.toNanos();
        this.clock = clock;
    }

    @Override
    public Optional<BestKernel> get(ZooKey key) {
        if (!up()) {
            failures.increment();
            return Optional.empty();
        }
        try {
            Optional<BestKernel> found = cache.get(key);
            (found.isPresent() ? hits : misses).increment();
            return found;
        } catch (RuntimeException e) {
            down("read", e);
            return Optional.empty();
        }
    }

    /** Lookups the cache answered. */
    public long hits() {
        return hits.sum();
    }

    /** Lookups the cache did not hold (answered by the store). */
    public long misses() {
        return misses.sum();
    }

    /** Calls that failed or timed out, and lookups skipped while it was down (answered by the store). */
    public long failures() {
        return failures.sum();
    }

    @Override
    public void put(ZooKey key, BestKernel best) {
        putAll(Map.of(key, best));
    }

    @Override
    public void putAll(Map<ZooKey, BestKernel> bests) {
        if (up()) {
            try {
                cache.putAll(bests);
                return;
            } catch (RuntimeException e) {
                down("write", e);
            }
        }
        bests.keySet().stream().limit(Math.max(0, MAX_STALE - stale.size())).forEach(stale::add);
    }

    @Override
    public void evict(ZooKey key) {
        if (up()) {
            try {
                cache.evict(key);
                return;
            } catch (RuntimeException e) {
                down("evict", e);
            }
        }
        stale.add(key);
    }

    /** Whether keys that went stale while the cache was down are still to evict. */
    public int staleKeys() {
        return stale.size();
    }

    /** Whether the cache may be asked now; after an outage, first evicts what went stale meanwhile. */
    private boolean up() {
        if (clock.getAsLong() < downUntil) {
            return false;
        }
        for (ZooKey key : stale) {
            try {
                cache.evict(key);
                stale.remove(key);
            } catch (RuntimeException e) {
                down("repair", e);
                return false;
            }
        }
        return true;
    }

    private void down(String what, RuntimeException e) {
        failures.increment();
        downUntil = clock.getAsLong() + coolDownNanos;
        LOG.warnf("cache %s failed, lookups go to the store for %d ms: %s", what, coolDownNanos / 1_000_000, e.toString());
    }
}
