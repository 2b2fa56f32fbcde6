package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.KernelRef;

/**
 * The elected kernel of one zoo key, with the evidence behind it: its latency (see
 * {@link Election}), and the sessions and distinct network origins that ranked it.
 */
public record BestKernel(KernelRef kernel, double medianMs, int reports, int origins) {

    static BestKernel of(Election.Result result) {
        return new BestKernel(result.kernel(), result.medianMs(), result.sessions(), result.origins());
    }
}
