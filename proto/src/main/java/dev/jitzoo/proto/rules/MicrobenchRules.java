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

    private MicrobenchRules() {
    }

    /** A primitive's name in `./jitzoo microbench` results: {@code PRIMITIVE_LOOP_ORDER} is {@code loop_order}. */
    public static String key(Primitive primitive) {
        return primitive.name().substring("PRIMITIVE_".length()).toLowerCase(Locale.ROOT);
    }

    /** Why these speedups cannot be stored, or null when they can. */
    public static String problem(List<PrimitiveSpeedup> speedups, String engine) {
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
