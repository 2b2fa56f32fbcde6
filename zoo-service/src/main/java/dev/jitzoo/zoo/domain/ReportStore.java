package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.Primitive;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Durable record of every measurement and of each key's elected kernel. */
public interface ReportStore {

    /** Stores reports in one round trip; a report already stored (same key and session) is kept once. */
    void addReports(List<StoredReport> reports);

    /**
     * What is stored of some keys' elections, read at once: each key's elected kernel (null when
     * none was served: too few origins yet) and the reports its election counts, oldest first: the
     * latest {@code sessionsPerOrigin} sessions of each of its latest {@code origins} origins. A key
     * with no report is absent. Read before a batch's reports are stored: a key new with the batch
     * costs no query of the reports.
     */
    Map<ZooKey, History> histories(Collection<ZooKey> keys, int origins, int sessionsPerOrigin);

    /**
     * Keeps the keys' elected kernels, in one round trip, each with when the oldest report its
     * election counted arrived: {@link #histories} reads no report older than that.
     */
    void saveBests(Map<ZooKey, Elected> bests);

    Optional<BestKernel> findBest(ZooKey key);

    long countMeasurements(String fingerprint);

    /**
     * Every kernel's mean time on every device kind that reported on one op (all keys sharing
     * {@link ZooKey#opKey()}), with the profile of a device of that kind.
     */
    List<SimilarKernels.KindTiming> timings(String opKey);

    /** Stores one session's microbenchmark speedups; a session's result already stored is kept once. */
    void addMicrobench(List<PrimitiveTiming> timings);

    /** Every device kind's microbenchmark speedups, each primitive's geometric mean over the kind's sessions. */
    List<DevicePrimitive> primitives();

    /** Keeps a microbenchmark's measured peak as its origin's latest for its device kind (an older one does not replace a newer). */
    void savePeak(OriginPeak peak);

    /** The latest measured peak of each origin of these device kinds, in one round trip; a kind without one is absent. */
    Map<String, List<Double>> originPeaks(Collection<String> fingerprints);

    /** One network origin's measured single-thread Wasm peak on a device kind. */
    record OriginPeak(String fingerprint, String origin, double gflops, long receivedAtMs) {
    }

    /** One primitive's speedup measured in one session. */
    record PrimitiveTiming(String fingerprint, String sessionId, Primitive primitive, double speedup, String engine,
                           long receivedAtMs) {
    }

    /** A device kind's pooled speedup of one primitive. */
    record DevicePrimitive(String fingerprint, Primitive primitive, double speedup, int reports, String engine) {
    }

    /**
     * One session's report on one key (from a hashed network origin, of a tenant): its kernels
     * fastest first, as the device timed them.
     */
    record StoredReport(ZooKey key, DeviceProfile device, String sessionId, String origin, String tenant, List<Timed> ranked,
                        long receivedAtMs, Initial initial) {

        /** The report as its session's votes, for the key's election window. */
        SessionVotes votes() {
            List<Election.Vote> votes = new ArrayList<>(ranked.size());
            for (int rank = 0; rank < ranked.size(); rank++) {
                votes.add(new Election.Vote(sessionId, origin, rank, ranked.get(rank).kernel(), ranked.get(rank).medianMs(), tenant));
            }
            return new SessionVotes(sessionId, receivedAtMs, votes, initial);
        }
    }

    /**
     * The kernel a session started an op with, as it timed it, and whether it was the zoo's
     * election (else the space's safe default); null in a report that did not time it.
     */
    record Initial(String kernelId, double medianMs, boolean fromZoo) {
    }

    /** How much faster a key's elected kernel is, as the sessions that timed both measured it (NaN: none did). */
    record Speedups(double vsInitial, double vsSafeDefault) {
    }

    /** A key's stored election: its kernel, the arrival of the oldest report it counted, and its speedups. */
    record Elected(BestKernel best, long windowFromMs, Speedups speedups) {
    }

    /** A key's stored election ({@code best} null when none is served) and the sessions it counts, oldest first. */
    record History(BestKernel best, List<SessionVotes> sessions) {
    }

    /** One session's votes on a key, and when its report arrived. */
    record SessionVotes(String sessionId, long receivedAtMs, List<Election.Vote> votes, Initial initial) {
    }

    /** One kernel's timing in a report. */
    record Timed(KernelRef kernel, double medianMs, int samples) {
    }
}
