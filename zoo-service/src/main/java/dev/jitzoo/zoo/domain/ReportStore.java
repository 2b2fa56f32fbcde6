package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.Primitive;
import java.util.List;
import java.util.Optional;

/** Durable record of every measurement and of each key's elected kernel. */
public interface ReportStore {

    /** Stores measurements; a measurement already stored (same session, key and kernel) is kept once. */
    void addMeasurements(List<Measurement> measurements);

    /** The votes of a key's latest sessions (at most {@code sessions} of them), for its {@link Election}. */
    List<Election.Vote> votes(ZooKey key, int sessions);

    /** Keeps a key's elected kernel; returns the id of the kernel it replaced (one round trip). */
    Optional<String> saveBest(ZooKey key, BestKernel best);

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

    /** One primitive's speedup measured in one session. */
    record PrimitiveTiming(String fingerprint, String sessionId, Primitive primitive, double speedup, String engine,
                           long receivedAtMs) {
    }

    /** A device kind's pooled speedup of one primitive. */
    record DevicePrimitive(String fingerprint, Primitive primitive, double speedup, int reports, String engine) {
    }

    /** One kernel's timing from one session (from a hashed network origin), on the reporting device. */
    record Measurement(ZooKey key, DeviceProfile device, String sessionId, String origin, int rank, KernelRef kernel,
                       double medianMs, int samples, long receivedAtMs) {
    }
}
