package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
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
 * elects its own fastest kernel. When no kernel reaches the quorum (ballots that barely overlap,
 * as when some devices were offered kernels others were not, each ranking only what it timed),
 * the contenders are the kernels the most origins ranked: every key with a vote has an election.
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

    /** Elects from every vote of one key; empty only when there is none. Linear in the votes, plain loops: it runs per batch per key. */
    public static Optional<Result> elect(List<Vote> votes) {
        if (votes.isEmpty()) {
            return Optional.empty();
        }
        // origin → its sessions, and per kernel its sessions' latencies and rank points
        Map<String, Ballot> ballots = new HashMap<>();
        Map<String, Tally> tallies = new HashMap<>();
        for (Vote v : votes) {
            Ballot ballot = ballots.computeIfAbsent(v.origin(), o -> new Ballot());
            ballot.sessions.add(v.sessionId());
            ballot.kernels.computeIfAbsent(v.kernel().getKernelId(), k -> new Ranking()).add(v);
            tallies.computeIfAbsent(v.kernel().getKernelId(), k -> new Tally(v.kernel())).sessions.add(v.sessionId());
        }
        int origins = ballots.size();
        // each origin's ballot: a latency (its sessions' median) and its sessions' mean points per kernel it ranked
        for (Ballot ballot : ballots.values()) {
            for (Map.Entry<String, Ranking> kernel : ballot.kernels.entrySet()) {
                Tally tally = tallies.get(kernel.getKey());
                Ranking r = kernel.getValue();
                tally.latencies.add(r.count == 1 ? r.ms[0] : median(Arrays.copyOf(r.ms, r.count)));
                tally.points += r.points / ballot.sessions.size();
            }
        }
        int quorum = origins < 3 ? 1 : (int) Math.ceil(QUORUM * origins);
        int widest = tallies.values().stream().mapToInt(t -> t.latencies.size()).max().orElse(1);
        quorum = Math.min(quorum, widest);
        Tally winner = null;
        double winnerMs = 0;
        for (Tally t : tallies.values()) {
            if (t.latencies.size() < quorum) {
                continue;
            }
            double ms = robustMedian(t.latencies);
            if (winner == null || ms < winnerMs || ms == winnerMs && (t.points > winner.points
                    || t.points == winner.points && t.kernel.getKernelId().compareTo(winner.kernel.getKernelId()) < 0)) {
                winner = t;
                winnerMs = ms;
            }
        }
        return Optional.of(new Result(winner.kernel, winnerMs, winner.points, winner.sessions.size(), winner.latencies.size()));
    }

    /** One origin's ballot. */
    private static final class Ballot {
        final Set<String> sessions = new HashSet<>(4);
        final Map<String, Ranking> kernels = new HashMap<>(8);
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
        final Set<String> sessions = new HashSet<>();
        double points;

        Tally(KernelRef kernel) {
            this.kernel = kernel;
        }
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
