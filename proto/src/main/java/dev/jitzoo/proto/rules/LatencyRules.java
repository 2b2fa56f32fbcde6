package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.util.List;

/**
 * The fastest a device may claim to run an op: the gateway refuses a report faster than this
 * before it acknowledges it, and the zoo checks a record off the topic against the ceiling the
 * gateway stamped on it, so nothing acknowledged is refused later for a reason known at
 * acknowledgement. A device kind's measured peak counts only once enough network origins measured
 * it (the median of their latest), and never below {@link #PEAK_FLOOR_GFLOPS}: one origin cannot
 * lower the ceiling every honest device of its kind is held to.
 */
public final class LatencyRules {

    /** FLOP/s no device reaches on one op in Wasm (one CPU thread's kernels split at most over a few cores). */
    public static final double WASM_FLOPS_CEILING = 1e12;
    /** FLOP/s no GPU reaches on one WGSL kernel. */
    public static final double WGSL_FLOPS_CEILING = 2e14;
    /**
     * Where a kind's Wasm peak is measured, a kernel may be timed at most this many times faster
     * than it: the headroom covers a peak measured while the device was busy.
     */
    public static final double PEAK_MARGIN = 2;
    /**
     * The least single-thread Wasm SIMD peak a kind is held to, GFLOP/s: below what the slowest
     * engine on the slowest supported device measures (a phone's core, SIMD on, runs several), so
     * origins claiming a lower peak cannot make honest latencies look impossible.
     */
    public static final double PEAK_FLOOR_GFLOPS = 1;

    private LatencyRules() {
    }

    /**
     * A device kind's peak from its origins' latest microbenchmarks (GFLOP/s each): NaN (not
     * measured) from fewer than {@code minOrigins} origins, else their median, at least the floor.
     */
    public static double kindPeakGflops(List<Double> originPeaks, int minOrigins) {
        if (originPeaks.isEmpty() || originPeaks.size() < minOrigins) {
            return Double.NaN;
        }
        double[] sorted = originPeaks.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return Math.max(PEAK_FLOOR_GFLOPS, median);
    }

    /**
     * The most FLOP/s a kernel of a backend can be timed at on a device kind: for Wasm,
     * {@link #PEAK_MARGIN} times the kind's peak ({@code kindPeakGflops}; NaN or 0 when not
     * measured), never above the backend's ceiling nor below the floor's.
     */
    public static double ceilingFlops(Backend backend, double kindPeakGflops) {
        if (backend != Backend.BACKEND_WASM) {
            return WGSL_FLOPS_CEILING;
        }
        if (!(kindPeakGflops > 0)) {
            return WASM_FLOPS_CEILING;
        }
        return Math.min(WASM_FLOPS_CEILING, PEAK_MARGIN * Math.max(PEAK_FLOOR_GFLOPS, kindPeakGflops) * 1e9);
    }

    /** Floating-point operations of an op: 2MKN for a MatMul, 2BMKN for a batch of them, an element each otherwise. */
    public static double flops(OpSpec op) {
        double product = 1;
        for (int dim : op.getShapeList()) {
            product *= dim;
        }
        return OpRules.isMatmul(op.getKind()) ? 2 * product : product;
    }

    /** Why a latency of an op is impossible under a ceiling (FLOP/s), or null when it is not. */
    public static String problem(OpSpec op, double medianMs, double ceilingFlops) {
        double least = flops(op) / ceilingFlops * 1e3;
        if (medianMs >= least) {
            return null;
        }
        return "claims " + medianMs + " ms, under the " + least + " ms its op takes at " + ceilingFlops / 1e9
                + " GFLOP/s, the most its device can reach";
    }
}
