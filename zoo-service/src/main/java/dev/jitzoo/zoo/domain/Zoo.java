package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The kernel zoo: takes reports, elects the best kernel per key, answers lookups. */
public class Zoo {

    private final ReportStore store;
    private final BestKernelCache cache;

    public Zoo(ReportStore store, BestKernelCache cache) {
        this.store = store;
        this.cache = cache;
    }

    /** Stores a validated report and re-elects its key. Returns the new best. */
    public BestKernel ingest(KernelReport report) {
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
            measurements.add(new ReportStore.Measurement(key, report.getSessionId(), rank, m.getKernel(),
                    m.getMedianMs(), m.getSamples(), report.getReceivedAtMs()));
        }
        store.addMeasurements(measurements);
        BestKernel best = store.elect(key).orElseThrow();
        store.saveBest(key, best);
        cache.put(key, best);
        return best;
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

    public long countMeasurements(String fingerprint) {
        return store.countMeasurements(fingerprint);
    }
}
