package dev.jitzoo.gateway.jit;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;

/**
 * The space's answers, kept a moment by what was asked (tenant, op, device profile, backend): a
 * burst of page loads of one device kind asks the space (and the zoo behind it) once per op and
 * {@code ttl}, not once per Hello, and the Hellos that come while that call is on its way wait
 * for its answer instead of making their own. An answer is at most {@code ttl} old, so a kind's
 * newer election reaches its next sessions within it; an answer that carries no election for the
 * kind is dropped as soon as a session of that kind reports through this gateway (its first
 * election follows a report, and the next page of the kind must start on it, not on the safe
 * default); a call that fails is not kept. A zero {@code ttl} keeps nothing: every Hello asks.
 */
final class ComposeCache {

    /** Distinct questions kept at once: device kinds × ops of the pages loading now. */
    private static final int MAX_ENTRIES = 4096;

    /** Whose elections a report may change: the zoo elects per tenant, device kind and backend. */
    private record Kind(String tenant, String fingerprint, Backend backend) {
        static Kind of(ComposeRequest request) {
            return new Kind(request.getTenant(), request.getDevice().getFingerprint(), request.getBackend());
        }
    }

    private final AsyncCache<ComposeRequest, ComposeResponse> answers;
    /** The kept questions whose answers carry no election, by kind: a report of the kind drops them. */
    private final ConcurrentMap<Kind, Set<ComposeRequest>> unelected = new ConcurrentHashMap<>();

    ComposeCache(Duration ttl, MeterRegistry metrics) {
        if (ttl.isZero() || ttl.isNegative()) {
            this.answers = null;
            return;
        }
        this.answers = Caffeine.newBuilder()
                .maximumSize(MAX_ENTRIES)
                .expireAfterWrite(ttl)
                .<ComposeRequest, ComposeResponse>removalListener((request, answer, cause) -> {
                    if (cause != RemovalCause.REPLACED) {
                        forget(request);
                    }
                })
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
        return Uni.createFrom().completionStage(() -> answers.get(request, (r, executor) -> call.get().subscribeAsCompletionStage()
                .thenApply(answer -> {
                    if (!answer.getOwn().getFound()) {
                        unelected.computeIfAbsent(Kind.of(r), k -> ConcurrentHashMap.newKeySet()).add(r);
                    }
                    return answer;
                })).copy());
    }

    /**
     * A session of the tenant's device kind had a report stored: the kept answers of that kind
     * without an election are dropped, so the next Hello asks the space again and starts on the
     * election the report may have made. Constant time on the report's path.
     */
    void reported(String tenant, DeviceProfile device, Backend backend) {
        if (answers == null) {
            return;
        }
        Set<ComposeRequest> stale = unelected.remove(new Kind(tenant, device.getFingerprint(), backend));
        if (stale != null) {
            answers.synchronous().invalidateAll(stale);
        }
    }

    private void forget(ComposeRequest request) {
        unelected.computeIfPresent(Kind.of(request), (kind, requests) -> {
            requests.remove(request);
            return requests.isEmpty() ? null : requests;
        });
    }
}
