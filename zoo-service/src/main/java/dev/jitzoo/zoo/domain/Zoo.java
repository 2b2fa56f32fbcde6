package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.MicrobenchRules;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The kernel zoo: takes reports, elects the best kernel per key, answers lookups. */
public class Zoo {

    /** Most kernels one similar-device lookup returns. */
    public static final int MAX_SIMILAR = 64;
    /** The sessions an election counts: a key's latest, so that kernels offered later can win and old devices age out. */
    public static final int ELECTION_WINDOW = 400;
    /** FLOP/s no single device reaches on one op: a latency implying more is a lie, refused. */
    static final double FLOPS_CEILING = 1e12;

    private final ReportStore store;
    private final BestKernelCache cache;

    public Zoo(ReportStore store, BestKernelCache cache) {
        this.store = store;
        this.cache = cache;
    }

    /** What ingesting a report did: the key's best now, and whether the election changed its kernel. */
    public record Ingested(BestKernel best, boolean changed) {
    }

    /**
     * Stores a validated report and re-elects its key (over its latest sessions, {@link Election}).
     * Refuses a latency no device can reach for the op's work.
     */
    public Ingested ingest(KernelReport report) {
        ZooKey key = ZooKey.of(report.getOp(), report.getBackend(), report.getDevice());
        if (report.getSessionId().isBlank()) {
            throw new InvalidReportException("session id is required");
        }
        if (report.getRankedCount() == 0) {
            throw new InvalidReportException("a report ranks at least one kernel");
        }
        List<ReportStore.Measurement> measurements = new ArrayList<>();
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
            double least = flops(report.getOp()) / FLOPS_CEILING * 1e3;
            if (m.getMedianMs() < least) {
                throw new InvalidReportException("impossible_latency", "measurement " + rank + " claims " + m.getMedianMs() + " ms, under the "
                        + least + " ms its op takes at " + FLOPS_CEILING / 1e12 + " TFLOP/s");
            }
            String origin = report.getOrigin().isBlank() ? report.getSessionId() : report.getOrigin();
            measurements.add(new ReportStore.Measurement(key, report.getDevice(), report.getSessionId(), origin, rank,
                    m.getKernel(), m.getMedianMs(), m.getSamples(), report.getReceivedAtMs()));
        }
        store.addMeasurements(measurements);
        BestKernel best = Election.elect(store.votes(key, ELECTION_WINDOW)).map(BestKernel::of)
                .orElseThrow(() -> new IllegalStateException("no vote of " + key.asString() + " after storing one"));
        boolean changed = store.saveBest(key, best).map(before -> !before.equals(best.kernel().getKernelId())).orElse(true);
        cache.put(key, best);
        return new Ingested(best, changed);
    }

    /** The elected kernel of an op on a device kind, if any device of that kind reported one. */
    public Optional<BestKernel> resolve(OpSpec op, Backend backend, DeviceProfile device) {
        ZooKey key = ZooKey.of(op, backend, device);
        Optional<BestKernel> cached = cache.get(key);
        if (cached.isPresent()) {
            return cached;
        }
        Optional<BestKernel> stored = store.findBest(key);
        stored.ifPresent(best -> cache.put(key, best));
        return stored;
    }

    /**
     * The best kernels of device kinds similar to {@code device} for an op (at most {@code limit}),
     * and the device kind's own elected kernel.
     */
    public Similar similar(OpSpec op, Backend backend, DeviceProfile device, int limit) {
        if (limit < 1 || limit > MAX_SIMILAR) {
            throw new InvalidReportException("limit must be 1 to " + MAX_SIMILAR + ", got " + limit);
        }
        ZooKey key = ZooKey.of(op, backend, device);
        SimilarKernels.Result ranked = SimilarKernels.rank(store.timings(key.opKey()), device, backend, key.asString(), limit);
        return new Similar(ranked.kernels(), ranked.similarKinds(), resolve(op, backend, device));
    }

    /** What similar device kinds learned, and the kind's own elected kernel. */
    public record Similar(List<SimilarKernels.Scored> kernels, int similarKinds, Optional<BestKernel> own) {
    }

    /** Stores a microbenchmark result that {@link MicrobenchRules} accepts. */
    public void ingestMicrobench(MicrobenchReport report) {
        if (report.getSessionId().isBlank()) {
            throw new InvalidReportException("session id is required");
        }
        if (report.getDevice().getFingerprint().isBlank()) {
            throw new InvalidReportException("device fingerprint is required");
        }
        String problem = MicrobenchRules.problem(report.getSpeedupsList(), report.getEngine());
        if (problem != null) {
            throw new InvalidReportException(problem);
        }
        store.addMicrobench(report.getSpeedupsList().stream().map(s -> new ReportStore.PrimitiveTiming(
                report.getDevice().getFingerprint(), report.getSessionId(), s.getPrimitive(), s.getSpeedup(),
                report.getEngine(), report.getReceivedAtMs())).toList());
    }

    /** The fleet's microbenchmark results, one entry per device kind. */
    public List<ReportStore.DevicePrimitive> primitives() {
        return store.primitives();
    }

    /** Floating-point operations of an op: 2MKN for a MatMul, 2BMKN for a batch of them, an element each otherwise. */
    static double flops(OpSpec op) {
        double product = 1;
        for (int dim : op.getShapeList()) {
            product *= dim;
        }
        return switch (op.getKind()) {
            case OP_KIND_MATMUL, OP_KIND_BATCH_MATMUL -> 2 * product;
            default -> product;
        };
    }

    public long countMeasurements(String fingerprint) {
        return store.countMeasurements(fingerprint);
    }
}
