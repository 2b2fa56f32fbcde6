package dev.jitzoo.compiler.kernel;

import java.util.List;

/**
 * A short fixed list of schedules that compile for every shape: the skeleton's stand-in for the
 * space service's device-guided lite space. Best guess first; the scalar ones serve devices
 * without Wasm SIMD (and are valid on every device).
 */
public final class FixedCandidates {

    private static final List<Schedule> ALL = List.of(
            Schedule.registerTile(4, 8, true, 2),
            Schedule.registerTile(2, 16, true, 2),
            Schedule.registerTile(4, 8, true, 2).withCacheTile(64, 32, 128),
            Schedule.registerTile(2, 16, true, 1).withReductionTile(2).withCacheTile(128, 16, 64),
            Schedule.registerTile(2, 8, true, 4),
            Schedule.registerTile(4, 4, true, 0).withReductionTile(4),
            Schedule.registerTile(1, 4, true, 0),
            Schedule.registerTile(2, 4, false, 4),
            Schedule.registerTile(4, 4, false, 0));

    private FixedCandidates() {
    }

    /** Every candidate, best guess first. */
    public static List<Schedule> all() {
        return ALL;
    }

    /** The candidates a device can run: all of them with Wasm SIMD, the scalar ones without. */
    public static List<Schedule> forDevice(boolean wasmSimd) {
        return wasmSimd ? ALL : ALL.stream().filter(s -> !s.vectorize()).toList();
    }
}
