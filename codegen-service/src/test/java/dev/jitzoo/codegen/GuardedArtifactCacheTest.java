package dev.jitzoo.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A failing cache is a miss, then skipped for the cool-down, then asked again. */
class GuardedArtifactCacheTest {

    /** A cache in memory that fails every call while {@code broken}. */
    private static final class Flaky implements ArtifactCache {
        final Map<String, KernelArtifact> held = new HashMap<>();
        final AtomicInteger calls = new AtomicInteger();
        boolean broken;

        @Override
        public Optional<KernelArtifact> get(Backend backend, String kernelId) {
            calls.incrementAndGet();
            if (broken) {
                throw new IllegalStateException("connection refused");
            }
            return Optional.ofNullable(held.get(kernelId));
        }

        @Override
        public void put(KernelArtifact artifact) {
            calls.incrementAndGet();
            if (broken) {
                throw new IllegalStateException("connection refused");
            }
            held.put(artifact.getRef().getKernelId(), artifact);
        }
    }

    private static KernelArtifact artifact(String id) {
        return KernelArtifact.newBuilder().setRef(KernelRef.newBuilder().setKernelId(id).setBackend(Backend.BACKEND_WASM)).build();
    }

    @Test
    void aFailureIsAMissAndTheCacheIsSkippedForTheCoolDown() {
        Flaky flaky = new Flaky();
        AtomicLong now = new AtomicLong();
        GuardedArtifactCache guarded = new GuardedArtifactCache(() -> flaky, Duration.ofSeconds(5), now::get);
        guarded.put(artifact("k1"));
        assertEquals(Optional.of(artifact("k1")), guarded.get(Backend.BACKEND_WASM, "k1"));

        flaky.broken = true;
        assertEquals(Optional.empty(), guarded.get(Backend.BACKEND_WASM, "k1"), "a failed read is a miss");
        int callsWhenDown = flaky.calls.get();
        guarded.put(artifact("k2"));
        assertEquals(Optional.empty(), guarded.get(Backend.BACKEND_WASM, "k1"));
        assertEquals(callsWhenDown, flaky.calls.get(), "not asked during the cool-down");
        assertEquals(2, guarded.failures(), "the failed read and the skipped one");

        flaky.broken = false;
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertEquals(Optional.of(artifact("k1")), guarded.get(Backend.BACKEND_WASM, "k1"), "asked again after it");
        assertTrue(flaky.held.containsKey("k1") && !flaky.held.containsKey("k2"), "what was put while down is not there");
    }

    @Test
    void aFailedWriteStartsTheCoolDownToo() {
        Flaky flaky = new Flaky();
        AtomicLong now = new AtomicLong();
        GuardedArtifactCache guarded = new GuardedArtifactCache(() -> flaky, Duration.ofSeconds(5), now::get);
        flaky.broken = true;
        guarded.put(artifact("k1")); // no exception: the kernel was compiled and is served anyway
        flaky.broken = false;
        assertEquals(Optional.empty(), guarded.get(Backend.BACKEND_WASM, "k1"));
        assertEquals(1, flaky.calls.get(), "the read after the failed write skipped the cache");
    }

    @Test
    void aBatchIsLookedUpAndKeptThroughTheGuardAlike() {
        Flaky flaky = new Flaky();
        AtomicLong now = new AtomicLong();
        GuardedArtifactCache guarded = new GuardedArtifactCache(() -> flaky, Duration.ofSeconds(5), now::get);
        ArtifactCache.Key k1 = new ArtifactCache.Key(Backend.BACKEND_WASM, "k1");
        ArtifactCache.Key k2 = new ArtifactCache.Key(Backend.BACKEND_WASM, "k2");
        guarded.putAll(List.of(artifact("k1")));
        assertEquals(Map.of(k1, artifact("k1")), guarded.getAll(List.of(k1, k2)), "the one held, the other absent");

        flaky.broken = true;
        assertEquals(Map.of(), guarded.getAll(List.of(k1, k2)), "a failed lookup is a miss for every kernel of the batch");
        assertEquals(2, guarded.failures(), "each kernel of the batch counted");
        int callsWhenDown = flaky.calls.get();
        guarded.putAll(List.of(artifact("k2")));
        assertEquals(Map.of(), guarded.getAll(List.of(k1)));
        assertEquals(callsWhenDown, flaky.calls.get(), "not asked during the cool-down");

        flaky.broken = false;
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        guarded.putAll(List.of(artifact("k2")));
        assertEquals(Map.of(k1, artifact("k1"), k2, artifact("k2")), guarded.getAll(List.of(k1, k2)), "asked again after it");
    }

    @Test
    void aCacheThatCannotBeReachedIsTriedAgainAfterTheCoolDown() {
        Flaky flaky = new Flaky();
        AtomicLong now = new AtomicLong();
        AtomicInteger tries = new AtomicInteger();
        GuardedArtifactCache guarded = new GuardedArtifactCache(() -> {
            if (tries.incrementAndGet() == 1) {
                throw new IllegalStateException("Unable to connect to 127.0.0.1:6390");
            }
            return flaky;
        }, Duration.ofSeconds(5), now::get);
        assertEquals(Optional.empty(), guarded.get(Backend.BACKEND_WASM, "k1"), "a miss while it cannot connect");
        guarded.put(artifact("k1"));
        assertEquals(1, tries.get(), "not tried again during the cool-down");
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        guarded.put(artifact("k1"));
        assertEquals(Optional.of(artifact("k1")), guarded.get(Backend.BACKEND_WASM, "k1"));
        assertEquals(2, tries.get(), "connected once, then kept");
    }
}
