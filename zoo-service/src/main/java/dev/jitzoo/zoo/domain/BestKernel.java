package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.KernelRef;

/** The elected kernel of one zoo key, with the evidence behind it. */
public record BestKernel(KernelRef kernel, double medianMs, int reports) {
}
