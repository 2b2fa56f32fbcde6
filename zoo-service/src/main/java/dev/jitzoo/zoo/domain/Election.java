package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How a zoo key's kernel is elected from an anonymous crowd's reports: the paper's top-5 ballots,
 * counted so that a minority of lying sessions cannot choose the winner.
 *
 * <ol>
 *   <li>One ballot per network origin: an origin's sessions (each one report per key) pool into
 *       one, its latency for a kernel the median of its sessions', so a flood from one address
 *       weighs as much as one honest device.</li>
 *   <li>Contenders: the kernels at least {@link #QUORUM} of the origins put in their top five.
 *       A kernel only liars rank cannot run; the honest best, on every honest ballot, can.</li>
 *   <li>Each contender's latency is the median over the origins that ranked it, outliers
 *       (further than {@link #OUTLIER_MADS} scaled MADs) left out: under the quorum, liars are
 *       a minority of every contender's reporters and cannot move its median.</li>
 *   <li>The winner is the contender with the lowest latency; the rank-weighted points (5 for a
 *       first place down to 1 for a fifth) break a tie.</li>
 * </ol>
 * With fewer than three origins every kernel they ranked is a contender: one device's report
 * elects its own fastest kernel.
 */
public final class Election {

    /** The ballot length: the top-N each report ranks (the paper's 5). */
    public static final int TOP_N = 5;
    /** Share of origins whose ballots must rank a kernel for it to contend. */
    public static final double QUORUM = 2.0 / 3.0;
    /** A reporter's latency further than this many scaled MADs from a kernel's median is an outlier. */
    static final double OUTLIER_MADS = 3.5;
    /** The MAD's scale to a standard deviation under normal noise. */
    private static final double MAD_SCALE = 1.4826;
    /** The least spread assumed, as a share of the median: identical reports do not make every other one an outlier. */
    private static final double MIN_SPREAD = 0.05;

    private Election() {
    }

    /** One kernel as one session ranked it. */
    public record Vote(String sessionId, String origin, int rank, KernelRef kernel, double medianMs) {
    }

    /** The elected kernel, its latency, its rank-weighted points, and the sessions and origins that ranked it. */
    public record Result(KernelRef kernel, double medianMs, double points, int sessions, int origins) {
    }

    /** Elects from every vote of one key; empty when there is none. */
    public static Optional<Result> elect(List<Vote> votes) {
        if (votes.isEmpty()) {
            return Optional.empty();
        }
        // origin → kernel → its sessions' latencies and ranks
        Map<String, Map<String, List<Vote>>> byOrigin = new LinkedHashMap<>();
        Map<String, KernelRef> refs = new HashMap<>();
        Map<String, Set<String>> sessions = new HashMap<>();
        for (Vote v : votes) {
            byOrigin.computeIfAbsent(v.origin(), o -> new LinkedHashMap<>())
                    .computeIfAbsent(v.kernel().getKernelId(), k -> new ArrayList<>()).add(v);
            refs.putIfAbsent(v.kernel().getKernelId(), v.kernel());
            sessions.computeIfAbsent(v.kernel().getKernelId(), k -> new HashSet<>()).add(v.sessionId());
        }
        int origins = byOrigin.size();
        // each origin's ballot: a latency and points per kernel it ranked
        Map<String, List<Double>> latencies = new HashMap<>();
        Map<String, Double> points = new HashMap<>();
        for (Map<String, List<Vote>> ballot : byOrigin.values()) {
            int originSessions = (int) ballot.values().stream().flatMap(List::stream).map(Vote::sessionId).distinct().count();
            for (Map.Entry<String, List<Vote>> kernel : ballot.entrySet()) {
                latencies.computeIfAbsent(kernel.getKey(), k -> new ArrayList<>())
                        .add(median(kernel.getValue().stream().mapToDouble(Vote::medianMs).toArray()));
                double pts = kernel.getValue().stream().mapToDouble(v -> Math.max(0, TOP_N - v.rank())).sum() / originSessions;
                points.merge(kernel.getKey(), pts, Double::sum);
            }
        }
        int quorum = origins < 3 ? 1 : (int) Math.ceil(QUORUM * origins);
        record Contender(String id, double ms, double points) {
        }
        List<Contender> contenders = new ArrayList<>();
        for (Map.Entry<String, List<Double>> kernel : latencies.entrySet()) {
            if (kernel.getValue().size() >= quorum) {
                contenders.add(new Contender(kernel.getKey(), robustMedian(kernel.getValue()), points.get(kernel.getKey())));
            }
        }
        if (contenders.isEmpty()) {
            return Optional.empty();
        }
        Contender winner = contenders.stream().min(Comparator.comparingDouble(Contender::ms)
                .thenComparing(Comparator.comparingDouble(Contender::points).reversed())
                .thenComparing(Contender::id)).orElseThrow();
        return Optional.of(new Result(refs.get(winner.id()), winner.ms(), winner.points(), sessions.get(winner.id()).size(),
                latencies.get(winner.id()).size()));
    }

    /** The median after dropping values further than {@link #OUTLIER_MADS} scaled MADs from it. */
    static double robustMedian(List<Double> values) {
        double[] xs = values.stream().mapToDouble(Double::doubleValue).toArray();
        double median = median(xs);
        double mad = median(Arrays.stream(xs).map(x -> Math.abs(x - median)).toArray());
        double spread = Math.max(MAD_SCALE * mad, MIN_SPREAD * median);
        double[] kept = Arrays.stream(xs).filter(x -> Math.abs(x - median) <= OUTLIER_MADS * spread).toArray();
        return median(kept);
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
