package dev.jitzoo.codegen;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Keeps the kernel cache from ever being a point of failure: a call that fails (Redis down, or
 * slower than its timeout) is a miss, so the kernel is compiled, and the cache is left alone for a
 * cool-down, so requests compile at once instead of waiting on a dead cache each time. It connects
 * on first use, and again after a failed try, so codegen starts and serves while Redis is down. A
 * kernel never changes under its id, so nothing the cache held before an outage is stale after it.
 */
public final class GuardedArtifactCache implements ArtifactCache {

    private static final Logger LOG = Logger.getLogger(GuardedArtifactCache.class);

    private final Supplier<ArtifactCache> connect;
    private volatile ArtifactCache cache;
    private final long coolDownNanos;
    private final LongSupplier clock;
    private final LongAdder failures = new LongAdder();
    private volatile long downUntil = Long.MIN_VALUE;

    /** {@code connect} gives the cache, or throws while it cannot be reached. */
    public GuardedArtifactCache(Supplier<ArtifactCache> connect, Duration coolDown) {
        this(connect, coolDown, System::nanoTime);
    }

    GuardedArtifactCache(Supplier<ArtifactCache> connect, Duration coolDown, LongSupplier clock) {
        this.connect = connect;
        this.coolDownNanos = coolDown.toNanos();
        this.clock = clock;
    }

    @Override
    public Optional<KernelArtifact> get(Backend backend, String kernelId) {
        return read(1, Optional.empty(), cache -> cache.get(backend, kernelId));
    }

    @Override
    public void put(KernelArtifact artifact) {
        write(cache -> cache.put(artifact));
    }

    @Override
    public Map<Key, KernelArtifact> getAll(Collection<Key> keys) {
        return keys.isEmpty() ? Map.of() : read(keys.size(), Map.of(), cache -> cache.getAll(keys));
    }

    @Override
    public void putAll(Collection<KernelArtifact> artifacts) {
        if (!artifacts.isEmpty()) {
            write(cache -> cache.putAll(artifacts));
        }
    }

    /** {@code lookups} through the cache, or {@code missed} (each lookup counted failed) while it is down or when it fails. */
    private <T> T read(int lookups, T missed, Function<ArtifactCache, T> lookup) {
        if (down()) {
            failures.add(lookups);
            return missed;
        }
        try {
            return lookup.apply(cache());
        } catch (RuntimeException e) {
            failed("read", e, lookups);
            return missed;
        }
    }

    /** A write to the cache; skipped while it is down (compiled again on its next request, as after the cache's own eviction). */
    private void write(Consumer<ArtifactCache> keep) {
        if (down()) {
            return;
        }
        try {
            keep.accept(cache());
        } catch (RuntimeException e) {
            failed("write", e, 1);
        }
    }

    /** Lookups that failed or timed out, and those skipped while the cache was down (each compiled). */
    public long failures() {
        return failures.sum();
    }

    private ArtifactCache cache() {
        ArtifactCache connected = cache;
        if (connected == null) {
            synchronized (this) {
                if (cache == null) {
                    cache = connect.get();
                }
                connected = cache;
            }
        }
        return connected;
    }

    private boolean down() {
        return clock.getAsLong() < downUntil;
    }

    /** Counts {@code calls} failed (a batch's lookups are each one) and starts the cool-down. */
    private void failed(String what, RuntimeException e, int calls) {
        failures.add(calls);
        downUntil = clock.getAsLong() + coolDownNanos;
        LOG.warnf("kernel cache %s failed, kernels are compiled without it for %d ms: %s", what, coolDownNanos / 1_000_000,
                e.toString());
    }
}
