package dev.jitzoo.space.primitives;

import java.util.Map;

/**
 * One device's microbenchmark run ({@code ./jitzoo microbench --json}'s last line): which runner and
 * device, and each primitive's speedup, time off over time on.
 */
public record MicrobenchResult(String runner, String device, String engine, Map<String, Double> speedups) {

    public MicrobenchResult {
        speedups = Map.copyOf(speedups);
    }
}
