package dev.jitzoo.zoo.domain;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Every device kind's mean latency per kernel of an op, as the similar-kernel lookup ranks them:
 * an aggregation over all the op's reports, so read once per op and kept. An op read more than
 * {@link #FRESH} ago is answered as kept while it is read again in the background: a burst of new
 * sessions costs the store one read per op, not one per session. One not asked for in
 * {@link #KEPT} is dropped. Reports this replica stores make their op's entry read again at its
 * next lookup; other replicas' count within {@link #FRESH}.
 */
final class OpTimings {

    static final Duration FRESH = Duration.ofSeconds(10);
    static final Duration KEPT = Duration.ofMinutes(10);

    /** Refreshes run on a thread of their own (the common pool spawns a thread per task on one or two cores). */
    private static final ExecutorService REFRESHES = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "zoo-op-timings-refresh");
        thread.setDaemon(true);
        return thread;
    });

    private final LoadingCache<String, List<SimilarKernels.KindTiming>> timings;

    OpTimings(ReportStore store, long maxOps) {
        this.timings = Caffeine.newBuilder().refreshAfterWrite(FRESH).expireAfterWrite(KEPT).maximumSize(maxOps)
                .executor(REFRESHES).build(store::timings);
    }

    List<SimilarKernels.KindTiming> of(String opKey) {
        return timings.get(opKey);
    }

    /** Reads the op's timings again at its next lookup: reports of it were stored. */
    void forget(String opKey) {
        timings.invalidate(opKey);
    }
}
