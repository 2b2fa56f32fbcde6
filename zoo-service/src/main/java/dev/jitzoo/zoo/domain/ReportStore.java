package dev.jitzoo.zoo.domain;

import java.util.List;
import java.util.Optional;

/** Durable record of every measurement and of each key's elected kernel. */
public interface ReportStore {

    /** Stores measurements; a measurement already stored (same session, key and kernel) is kept once. */
    void addMeasurements(List<Measurement> measurements);

    /** Elects the best kernel of a key from all its measurements, or empty when there are none. */
    Optional<BestKernel> elect(ZooKey key);

    void saveBest(ZooKey key, BestKernel best);

    Optional<BestKernel> findBest(ZooKey key);

    long countMeasurements(String fingerprint);

    /** One kernel's timing from one session. */
    record Measurement(ZooKey key, String sessionId, int rank, dev.jitzoo.proto.kernel.v1.KernelRef kernel,
                       double medianMs, int samples, long receivedAtMs) {
    }
}
