package dev.jitzoo.gateway.jit;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The space's answers, kept a moment by what was asked (tenant, op, device profile, backend): a
 * burst of page loads of one device kind asks the space (and the zoo behind it) once per op and
 * {@code ttl}, not once per Hello, and the Hellos that come while that call is on its way wait
 * for its answer instead of making their own. An answer is at most {@code ttl} old, so a kind's
 * new election reaches its next sessions within it; a call that fails is not kept. A zero
 * {@code ttl} keeps nothing: every Hello asks.
 */
final class ComposeCache {

    /** Distinct questions kept at once: device kinds × ops of the pages loading now. */
    private static final int MAX_ENTRIES = 4096;

    private final AsyncCache<ComposeRequest, ComposeResponse> answers;

    ComposeCache(Duration ttl, MeterRegistry metrics) {
        if (ttl.isZero() || ttl.isNegative()) {
            this.answers = null;
            return;
        }
        this.answers = Caffeine.newBuilder()
                .maximumSize(MAX_ENTRIES)
                .expireAfterWrite(ttl)
                .recordStats()
                .buildAsync();
        CaffeineCacheMetrics.monitor(metrics, answers.synchronous(), "jitzoo_gateway_compose");
    }

    /**
     * The kept answer to the request, or the one {@code call} (subscribed once, by the first asker)
     * gives. Each asker gets a copy of the shared future: one that gives up (its session closed)
     * cancels its own wait, not the call the others wait on.
     */
    Uni<ComposeResponse> get(ComposeRequest request, Supplier<Uni<ComposeResponse>> call) {
        if (answers == null) {
            return Uni.createFrom().deferred(call::get);
        }
        return Uni.createFrom().completionStage(() -> answers.get(request, (r, executor) -> call.get().subscribeAsCompletionStage()).copy());
    }
}
