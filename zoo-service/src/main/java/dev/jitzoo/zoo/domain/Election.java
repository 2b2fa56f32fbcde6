package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.gateway.v1.SessionLimit;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.ToDoubleFunction;

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
 * elects its own fastest kernel. When no kernel reaches the quorum (ballots that barely overlap,
 * as when some devices were offered kernels others were not, each ranking only what it timed),
 * the contenders are the kernels the most origins ranked: every key with a vote has an election.
 * <p>
 * Where tenants share their data, an origin's ballot weighs the highest trust
 * ({@link TenantData#trust}) of the tenants it reported under, once: the same address behind many
 * tenants' keys (scraped, or leaked) is one ballot, not one per key. The quorum is that share of
 * the ballots' total weight, and a ballot's points are scaled by it. A ballot of weight 0 is not
 * counted; a key with only such ballots has no election.
 */
public final class Election {

    /** The ballot length: the top-N each report ranks (gateway.proto's SESSION_LIMIT_REPORT_TOP_N, the paper's 5). */
    public static final int TOP_N = SessionLimit.SESSION_LIMIT_REPORT_TOP_N_VALUE;
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

    /** One kernel as one session (of a tenant) ranked it. */
    public record Vote(String sessionId, String origin, int rank, KernelRef kernel, double medianMs, String tenant) {

        /** A vote of the public tenant. */
        public Vote(String sessionId, String origin, int rank, KernelRef kernel, double medianMs) {
            this(sessionId, origin, rank, kernel, medianMs, TenantData.PUBLIC);
        }
    }

    /**
     * The elected kernel, its latency, its rank-weighted points, the sessions and origins that
     * ranked it, and the ballots (origins whose votes weigh) the election counted.
     */
    public record Result(KernelRef kernel, double medianMs, double points, int sessions, int origins, int ballots) {
    }

    /** Elects from every vote of one key, every tenant trusted alike; empty only when there is none. */
    public static Optional<Result> elect(List<Vote> votes) {
        return elect(votes, tenant -> 1);
    }

    /**
     * Elects from every vote of one key, each tenant's ballots weighing its {@code trust}; empty when
     * no vote has any weight. Linear in the votes, plain loops: it runs per batch per key.
     */
    public static Optional<Result> elect(List<Vote> votes, ToDoubleFunction<String> trust) {
        // each origin's weight: the highest trust of the tenants it reported under
        Map<String, Double> trusts = new HashMap<>();
        Map<String, Double> weights = new HashMap<>();
        for (Vote v : votes) {
            double t = trusts.computeIfAbsent(v.tenant(), trust::applyAsDouble);
            weights.merge(v.origin(), t, Math::max);
        }
        // an origin → its sessions, and per kernel its sessions' latencies and rank points
        Map<String, Ballot> ballots = new HashMap<>();
        Map<String, Tally> tallies = new HashMap<>();
        for (Vote v : votes) {
            double weight = weights.get(v.origin());
            if (!(weight > 0)) {
                continue;
            }
            Ballot ballot = ballots.computeIfAbsent(v.origin(), o -> new Ballot(weight));
            ballot.sessions.add(v.sessionId());
            ballot.kernels.computeIfAbsent(v.kernel().getKernelId(), k -> new Ranking()).add(v);
            tallies.computeIfAbsent(v.kernel().getKernelId(), k -> new Tally(v.kernel())).sessions.add(v.sessionId());
        }
        if (ballots.isEmpty()) {
            return Optional.empty();
        }
        // each origin's ballot: a latency (its sessions' median) and its sessions' mean points per kernel it ranked
        double total = 0;
        for (Ballot ballot : ballots.values()) {
            total += ballot.weight;
            for (Map.Entry<String, Ranking> kernel : ballot.kernels.entrySet()) {
                Tally tally = tallies.get(kernel.getKey());
                Ranking r = kernel.getValue();
                tally.latencies.add(r.count == 1 ? r.ms[0] : median(Arrays.copyOf(r.ms, r.count)));
                tally.weights.add(ballot.weight);
                tally.support += ballot.weight;
                tally.points += ballot.weight * r.points / ballot.sessions.size();
            }
        }
        // the share of the total weight a contender needs; a hair under it, so that equal weights behave as counts do
        double quorum = ballots.size() < 3 ? 0 : QUORUM * total * (1 - 1e-9);
        double widest = tallies.values().stream().mapToDouble(t -> t.support).max().orElse(0);
        quorum = Math.min(quorum, widest);
        Tally winner = null;
        double winnerMs = 0;
        for (Tally t : tallies.values()) {
            if (t.latencies.isEmpty() || t.support < quorum) {
                continue;
            }
            double ms = robustMedian(t.latencies, t.weights);
            if (winner == null || ms < winnerMs || ms == winnerMs && (t.points > winner.points
                    || t.points == winner.points && t.kernel.getKernelId().compareTo(winner.kernel.getKernelId()) < 0)) {
                winner = t;
                winnerMs = ms;
            }
        }
        return Optional.of(new Result(winner.kernel, winnerMs, winner.points, winner.sessions.size(), winner.latencies.size(), ballots.size()));
    }

    /** One origin's ballot, weighing its tenant's trust. */
    private static final class Ballot {
        final double weight;
        final Set<String> sessions = new HashSet<>(4);
        final Map<String, Ranking> kernels = new HashMap<>(8);

        Ballot(double weight) {
            this.weight = weight;
        }
    }

    /** One origin's sessions' latencies and summed rank points for one kernel. */
    private static final class Ranking {
        double[] ms = new double[1];
        int count;
        double points;

        void add(Vote v) {
            if (count == ms.length) {
                ms = Arrays.copyOf(ms, count * 2);
            }
            ms[count++] = v.medianMs();
            points += Math.max(0, TOP_N - v.rank());
        }
    }

    /** One kernel across the ballots: a latency per origin that ranked it, its points, the sessions that ranked it. */
    private static final class Tally {
        final KernelRef kernel;
        final List<Double> latencies = new ArrayList<>();
        /** The weight of the ballot each latency is from. */
        final List<Double> weights = new ArrayList<>();
        final Set<String> sessions = new HashSet<>();
        /** The summed weight of the ballots that ranked it. */
        double support;
        double points;

        Tally(KernelRef kernel) {
            this.kernel = kernel;
        }
    }

    /** The median after dropping values further than {@link #OUTLIER_MADS} scaled MADs from it. */
    static double robustMedian(List<Double> values) {
        return robustMedian(values, values.stream().map(v -> 1.0).toList());
    }

    /**
     * The weighted median after dropping values further than {@link #OUTLIER_MADS} scaled MADs
     * (weighted too) from it: with equal weights, the plain one.
     */
    static double robustMedian(List<Double> values, List<Double> weights) {
        double[] xs = values.stream().mapToDouble(Double::doubleValue).toArray();
        double[] ws = weights.stream().mapToDouble(Double::doubleValue).toArray();
        double median = median(xs, ws);
        double mad = median(Arrays.stream(xs).map(x -> Math.abs(x - median)).toArray(), ws);
        double spread = Math.max(MAD_SCALE * mad, MIN_SPREAD * median);
        int kept = 0;
        for (int i = 0; i < xs.length; i++) {
            if (Math.abs(xs[i] - median) <= OUTLIER_MADS * spread) {
                xs[kept] = xs[i];
                ws[kept++] = ws[i];
            }
        }
        return median(Arrays.copyOf(xs, kept), Arrays.copyOf(ws, kept));
    }

    /** The plain median (an origin's sessions' latencies for a kernel): a primitive sort, no weights to carry. */
    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * The weighted median: the least value whose weight and the smaller values' reach half the
     * total; where they make exactly half, the mean of it and the next (so, with equal weights,
     * the middle value, or the mean of the middle two).
     */
    static double median(double[] xs, double[] ws) {
        Integer[] order = new Integer[xs.length];
        double total = 0;
        for (int i = 0; i < xs.length; i++) {
            order[i] = i;
            total += ws[i];
        }
        Arrays.sort(order, (a, b) -> Double.compare(xs[a], xs[b]));
        double half = total / 2;
        double below = 0;
        for (int k = 0; k < order.length; k++) {
            below += ws[order[k]];
            if (Math.abs(below - half) <= 1e-12 * total && k + 1 < order.length) {
                return (xs[order[k]] + xs[order[k + 1]]) / 2;
            }
            if (below >= half) {
                return xs[order[k]];
            }
        }
        return xs[order[order.length - 1]];
    }
}
