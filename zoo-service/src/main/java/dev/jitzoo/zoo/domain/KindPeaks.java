package dev.jitzoo.zoo.domain;

import com.github.benmanes.caffeine.cache.CacheLoader;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.jitzoo.proto.rules.LatencyRules;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Each device kind's measured single-thread Wasm peak, GFLOP/s: what the zoo checks a kind's
 * reported latencies against. A kind's peak is the median of its origins' latest microbenchmarks
 * once enough origins measured it, never below a floor ({@link LatencyRules#kindPeakGflops}), so
 * a minority of origins cannot move it far and one origin cannot set it (a flood from one address
 * is one origin). Read from the store for all the cold kinds of a batch at once and kept
 * {@link #KEPT}; a microbenchmark this replica stores makes its kind's entry read again. NaN for
 * a kind not measured by enough origins.
 */
public final class KindPeaks {

    /** How long a kind's peak is kept before it is read again (another replica's new microbenchmarks count after it). */
    static final Duration KEPT = Duration.ofMinutes(1);

    private final LoadingCache<String, Double> peaks;

    public KindPeaks(ReportStore store, long maxKinds, int minOrigins) {
        this.peaks = Caffeine.newBuilder().expireAfterWrite(KEPT).maximumSize(maxKinds).build(new CacheLoader<>() {
            @Override
            public Double load(String fingerprint) {
                return loadAll(Set.of(fingerprint)).get(fingerprint);
            }

            @Override
            public Map<String, Double> loadAll(Set<? extends String> fingerprints) {
                Map<String, List<Double>> measured = store.originPeaks(List.copyOf(fingerprints));
                Map<String, Double> all = new HashMap<>();
                fingerprints.forEach(fp -> {
                    List<Double> origins = measured.getOrDefault(fp, List.of());
                    all.put(fp, LatencyRules.kindPeakGflops(origins, minOrigins));
                });
                return all;
            }
        });
    }

    /** The peaks of these kinds, NaN where none was measured; the cold ones read in one store call. */
    public Map<String, Double> of(Collection<String> fingerprints) {
        return peaks.getAll(fingerprints);
    }

    /** The kind's peak if held in memory (NaN inside: held as not measured). */
    Optional<Double> held(String fingerprint) {
        return Optional.ofNullable(peaks.getIfPresent(fingerprint));
    }

    /** Reads the kind's peak again on its next use: a microbenchmark of it was stored. */
    void forget(String fingerprint) {
        peaks.invalidate(fingerprint);
    }
}
