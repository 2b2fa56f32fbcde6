package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a valid microbenchmark result is: the gateway refuses a browser's result by these rules,
 * and the zoo checks a record off the topic by the same ones.
 */
public final class MicrobenchRules {

    /** Speedups are time off over time on; outside (0, MAX_SPEEDUP) a measurement is nonsense. */
    public static final double MAX_SPEEDUP = 1000;
    public static final int MAX_ENGINE_CHARS = 256;
    /**
     * GFLOP/s no single thread of any CPU reaches in Wasm SIMD (a core's f32 multiply-add peak is
     * tens to a few hundred): a microbenchmark's peak above it is nonsense.
     */
    public static final double MAX_PEAK_GFLOPS = 1000;

    private MicrobenchRules() {
    }

    /** A primitive's name in `./jitzoo microbench` results: {@code PRIMITIVE_LOOP_ORDER} is {@code loop_order}. */
    public static String key(Primitive primitive) {
        return primitive.name().substring("PRIMITIVE_".length()).toLowerCase(Locale.ROOT);
    }

    /**
     * Why a device's primitive vector (the paper's rho, part of every zoo key) is malformed, or
     * null: empty, or one character per primitive in the enum's order ({@code 1} the primitive
     * helps on the device, {@code 0} it does not, {@code -} not measured), at most as many as
     * there are primitives.
     */
    public static String primitiveVectorProblem(String vector) {
        int primitives = Primitive.values().length - 2; // UNSPECIFIED and UNRECOGNIZED are none
        if (vector.length() > primitives) {
            return "primitive_vector has at most " + primitives + " characters, got " + vector.length();
        }
        if (!vector.chars().allMatch(c -> c == '0' || c == '1' || c == '-')) {
            return "primitive_vector is made of 0, 1 and -, got \"" + vector + "\"";
        }
        return null;
    }

    /** Why this result (speedups, engine and measured peak) cannot be stored, or null when it can. */
    public static String problem(List<PrimitiveSpeedup> speedups, String engine, double peakGflops) {
        if (!(peakGflops >= 0 && peakGflops < MAX_PEAK_GFLOPS)) {
            return "peak_gflops must be in [0, " + (int) MAX_PEAK_GFLOPS + ") (0: not measured), got " + peakGflops;
        }
        if (speedups.isEmpty()) {
            return "a microbenchmark result measures at least one primitive";
        }
        if (engine.length() > MAX_ENGINE_CHARS) {
            return "engine is longer than " + MAX_ENGINE_CHARS + " characters";
        }
        Set<Primitive> seen = EnumSet.noneOf(Primitive.class);
        for (PrimitiveSpeedup s : speedups) {
            if (s.getPrimitive() == Primitive.PRIMITIVE_UNSPECIFIED || s.getPrimitive() == Primitive.UNRECOGNIZED) {
                return "unknown primitive " + s.getPrimitiveValue();
            }
            if (!seen.add(s.getPrimitive())) {
                return s.getPrimitive() + " is measured twice";
            }
            if (!(s.getSpeedup() > 0 && s.getSpeedup() < MAX_SPEEDUP)) {
                return "speedup of " + s.getPrimitive() + " must be in (0, " + (int) MAX_SPEEDUP + "), got " + s.getSpeedup();
            }
        }
        return null;
    }
}
