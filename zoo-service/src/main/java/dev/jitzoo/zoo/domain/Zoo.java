package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.LatencyRules;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The kernel zoo: takes reports, elects the best kernel per key, answers lookups. */
public class Zoo {

    /** Most kernels one similar-device lookup returns. */
    public static final int MAX_SIMILAR = 64;
    /**
     * The network origins an election counts: a key's latest to report, so that kernels offered
     * later can win and old devices age out, and a flood of sessions from one origin pushes out no
     * other origin's ballot.
     */
    public static final int ELECTION_ORIGINS = 400;
    /** The sessions of one origin an election counts: its latest (they pool into its one ballot). */
    public static final int SESSIONS_PER_ORIGIN = 8;
    /** Fewest origins an election is served from, unless configured otherwise ({@code jitzoo.zoo.min-origins}). */
    public static final int MIN_ORIGINS = 3;
    /** Device kinds whose measured peak this replica keeps in memory. */
    private static final int PEAK_KINDS = 100_000;

    private final ReportStore store;
    private final BestKernelCache cache;
    private final ElectionWindows windows;
    private final KindPeaks peaks;
    private final OpTimings timings;
    private final TenantData tenants;
    private final int minOrigins;

    /** A zoo where tenants share their data, all trusted alike, serving elections of {@link #MIN_ORIGINS} origins or more. */
    public Zoo(ReportStore store, BestKernelCache cache, ElectionWindows windows) {
        this(store, cache, windows, TenantData.shared(), MIN_ORIGINS);
    }

    /** A zoo whose tenants' data is kept as {@code tenants} says, serving elections of {@link #MIN_ORIGINS} origins or more. */
    public Zoo(ReportStore store, BestKernelCache cache, ElectionWindows windows, TenantData tenants) {
        this(store, cache, windows, tenants, MIN_ORIGINS);
    }

    /**
     * A zoo whose elections are served once at least {@code minOrigins} network origins voted:
     * below it no election is saved, and sessions start from the space's order. 1 serves one
     * device's report (a stack on one machine has one origin).
     */
    public Zoo(ReportStore store, BestKernelCache cache, ElectionWindows windows, TenantData tenants, int minOrigins) {
        if (minOrigins < 1) {
            throw new IllegalArgumentException("min-origins must be at least 1, got " + minOrigins);
        }
        this.minOrigins = minOrigins;
        this.tenants = tenants;
        this.store = store;
        this.cache = cache;
        this.windows = windows;
        this.peaks = new KindPeaks(store, PEAK_KINDS, minOrigins);
        this.timings = new OpTimings(store, 10_000);
    }

    /** A key's election after a batch: its best now, and whether its kernel changed. */
    public record Elected(ZooKey key, BestKernel best, boolean changed) {
    }

    /** A report of the batch that was refused, by its position in the batch. */
    public record Refused(int index, InvalidReportException reason) {
    }

    /** What ingesting a batch did: the elections of the keys it touched, and the reports refused. */
    public record Ingested(List<Elected> elections, List<Refused> refused) {
    }

    /**
     * Stores a batch of reports in one write and re-elects each key they touch once, from its
     * window in memory ({@link ElectionWindows}); the new elections are saved in one write and
     * cached. A report that is malformed or claims a latency its device cannot reach is refused and
     * the rest go on: the ceiling is the one the gateway stamped on it when it acknowledged it, else
     * the one its kind's measured peak implies ({@link LatencyRules}). Safe to call again with the
     * same batch (a redelivery, or a retry after the store failed): a report is stored and counted once.
     */
    public synchronized Ingested ingest(List<KernelReport> batch) {
        List<ReportStore.StoredReport> valid = new ArrayList<>();
        List<Refused> refused = new ArrayList<>();
        // a record the gateway stamped carries its ceiling: the kinds' peaks are read for the others only
        Map<String, Double> kindPeaks = peaks.of(batch.stream().filter(r -> r.getBackend() == Backend.BACKEND_WASM && !(r.getCeilingGflops() > 0))
                .map(r -> r.getDevice().getFingerprint()).distinct().toList());
        for (int i = 0; i < batch.size(); i++) {
            try {
                KernelReport report = batch.get(i);
                valid.add(validate(report, report.getCeilingGflops() > 0 ? report.getCeilingGflops() * 1e9
                        : LatencyRules.ceilingFlops(report.getBackend(), kindPeaks.getOrDefault(report.getDevice().getFingerprint(), Double.NaN))));
            } catch (InvalidReportException e) {
                refused.add(new Refused(i, e));
            }
        }
        // the windows not in memory are read before the batch is stored: a key new with it has no reports to look for
        Map<ZooKey, ElectionWindows.Window> touched = windows.windows(
                valid.stream().map(ReportStore.StoredReport::key).distinct().toList(),
                cold -> store.histories(cold, ELECTION_ORIGINS, SESSIONS_PER_ORIGIN));
        store.addReports(valid);
        valid.stream().map(r -> r.key().opKey()).distinct().forEach(timings::forget); // the next lookup of these ops reads them again
        valid.forEach(r -> touched.get(r.key()).add(r.votes()));
        Map<ZooKey, ReportStore.Elected> bests = new LinkedHashMap<>();
        // a key whose votes all weigh nothing (tenants of trust 0), or from fewer origins than an election needs, has no
        // election: its reports are stored, its lookups find none
        touched.forEach((key, window) -> Election.elect(window.votes(), tenants::trust).filter(r -> r.ballots() >= minOrigins)
                .map(BestKernel::of).ifPresent(best ->
                bests.put(key, new ReportStore.Elected(best, window.fromMs(), window.speedups(best.kernel().getKernelId())))));
        store.saveBests(bests);
        Map<ZooKey, BestKernel> cached = new LinkedHashMap<>();
        List<Elected> elections = new ArrayList<>();
        bests.forEach((key, elected) -> {
            cached.put(key, elected.best());
            elections.add(new Elected(key, elected.best(), touched.get(key).elected(elected.best().kernel().getKernelId())));
        });
        cache.putAll(cached);
        return new Ingested(elections, refused);
    }

    /** A report as stored, or why it is refused; {@code ceilingFlops} is what its device can reach at most. */
    private ReportStore.StoredReport validate(KernelReport report, double ceilingFlops) {
        if (report.getSessionId().isBlank()) {
            throw new InvalidReportException("session id is required");
        }
        if (report.getRankedCount() == 0) {
            throw new InvalidReportException("a report ranks at least one kernel");
        }
        List<ReportStore.Timed> ranked = new ArrayList<>();
        for (int rank = 0; rank < report.getRankedCount(); rank++) {
            var m = report.getRanked(rank);
            if (m.getKernel().getKernelId().isBlank()) {
                throw new InvalidReportException("measurement " + rank + " names no kernel");
            }
            if (!m.getKernel().getOp().equals(report.getOp())) {
                throw new InvalidReportException("kernel " + m.getKernel().getKernelId() + " is not for the reported op");
            }
            if (!(m.getMedianMs() > 0) || Double.isInfinite(m.getMedianMs())) {
                throw new InvalidReportException("measurement " + rank + " has no positive latency");
            }
            String impossible = LatencyRules.problem(report.getOp(), m.getMedianMs(), ceilingFlops);
            if (impossible != null) {
                throw new InvalidReportException("impossible_latency", "measurement " + rank + " " + impossible);
            }
            ranked.add(new ReportStore.Timed(m.getKernel(), m.getMedianMs(), m.getSamples()));
        }
        ReportStore.Initial initial = null;
        if (report.hasInitial()) {
            var m = report.getInitial();
            if (!(m.getMedianMs() > 0) || Double.isInfinite(m.getMedianMs()) || !m.getKernel().getOp().equals(report.getOp())) {
                throw new InvalidReportException("the initial kernel's timing is not a positive latency of the reported op");
            }
            initial = new ReportStore.Initial(m.getKernel().getKernelId(), m.getMedianMs(), report.getInitialFromZoo());
        }
        String origin = report.getOrigin().isBlank() ? report.getSessionId() : report.getOrigin();
        String tenant = TenantData.name(report.getTenant());
        return new ReportStore.StoredReport(ZooKey.of(tenants.pool(tenant), report.getOp(), report.getBackend(), report.getDevice()),
                report.getDevice(), report.getSessionId(), origin, tenant, ranked, report.getReceivedAtMs(), initial);
    }

    /**
     * The elected kernel of an op on a device kind for a tenant's session (its own pool's where
     * tenants keep their data apart), if any device of that kind reported one.
     */
    public Optional<BestKernel> resolve(String tenant, OpSpec op, Backend backend, DeviceProfile device) {
        ZooKey key = ZooKey.of(tenants.pool(tenant), op, backend, device);
        Optional<BestKernel> cached = cache.get(key);
        if (cached.isPresent()) {
            return cached;
        }
        Optional<BestKernel> stored = store.findBest(key);
        stored.ifPresent(best -> cache.put(key, best));
        return stored;
    }

    /** The elected kernel of an op on a device kind if this process holds it in memory: no I/O, fit for an event loop. */
    public Optional<BestKernel> held(String tenant, OpSpec op, Backend backend, DeviceProfile device) {
        return cache.held(ZooKey.of(tenants.pool(tenant), op, backend, device));
    }

    /**
     * The best kernels of device kinds similar to {@code device} for an op (at most {@code limit}),
     * from timings up to {@link OpTimings#FRESH} old, and the device kind's own elected kernel.
     */
    public Similar similar(String tenant, OpSpec op, Backend backend, DeviceProfile device, int limit) {
        if (limit < 1 || limit > MAX_SIMILAR) {
            throw new InvalidReportException("limit must be 1 to " + MAX_SIMILAR + ", got " + limit);
        }
        ZooKey key = ZooKey.of(tenants.pool(tenant), op, backend, device);
        SimilarKernels.Result ranked = SimilarKernels.rank(timings.of(key.opKey()), device, backend, key.asString(), limit);
        return new Similar(ranked.kernels(), ranked.similarKinds(), resolve(tenant, op, backend, device));
    }

    /** What similar device kinds learned, and the kind's own elected kernel. */
    public record Similar(List<SimilarKernels.Scored> kernels, int similarKinds, Optional<BestKernel> own) {
    }

    /**
     * Stores a microbenchmark result that {@link MicrobenchRules} accepts: its primitives' speedups,
     * and its measured peak as its origin's latest for the device kind.
     */
    public void ingestMicrobench(MicrobenchReport report) {
        if (report.getSessionId().isBlank()) {
            throw new InvalidReportException("session id is required");
        }
        if (report.getDevice().getFingerprint().isBlank()) {
            throw new InvalidReportException("device fingerprint is required");
        }
        String problem = MicrobenchRules.problem(report.getSpeedupsList(), report.getEngine(), report.getPeakGflops());
        if (problem != null) {
            throw new InvalidReportException(problem);
        }
        String fingerprint = report.getDevice().getFingerprint();
        store.addMicrobench(report.getSpeedupsList().stream().map(s -> new ReportStore.PrimitiveTiming(
                fingerprint, report.getSessionId(), s.getPrimitive(), s.getSpeedup(),
                report.getEngine(), report.getReceivedAtMs())).toList());
        if (report.getPeakGflops() > 0) {
            String origin = report.getOrigin().isBlank() ? report.getSessionId() : report.getOrigin();
            store.savePeak(new ReportStore.OriginPeak(fingerprint, origin, report.getPeakGflops(), report.getReceivedAtMs()));
            peaks.forget(fingerprint);
        }
    }

    /** Fewest network origins an election is served from. */
    public int minOrigins() {
        return minOrigins;
    }

    /**
     * A device kind's measured single-thread Wasm peak in GFLOP/s: the median of its origins' latest
     * once at least the minimum of origins measured it ({@link LatencyRules#kindPeakGflops}); NaN before.
     */
    public double peakGflops(String fingerprint) {
        return peaks.of(List.of(fingerprint)).get(fingerprint);
    }

    /** A device kind's peak if this replica holds it in memory (NaN inside: held as not measured): no I/O, fit for an event loop. */
    public Optional<Double> heldPeakGflops(String fingerprint) {
        return peaks.held(fingerprint);
    }

    /** The fleet's microbenchmark results, one entry per device kind. */
    public List<ReportStore.DevicePrimitive> primitives() {
        return store.primitives();
    }

    public long countMeasurements(String fingerprint) {
        return store.countMeasurements(fingerprint);
    }
}
