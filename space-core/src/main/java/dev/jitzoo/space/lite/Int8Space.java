package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.space.domain.OpShapes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The space of the int8 matmul ({@code i32x4.dot_i16x8_s} over B packed in k pairs): register tiles
 * y0 × x0 and the k pairs per trip. Heuristic 1 of Table 1 counts registers here as i32x4 sums
 * (y0·x0/4) plus the live operands (x0/4 B vectors, one A pair), at most the device's SIMD registers
 * (V8 issues {@code i32x4.add(acc, i32x4.dot_i16x8_s(a, b))} as one instruction where the CPU has
 * one, so a dot needs no temporary; counting two more, as first, kept the 12-sum tiles out, and
 * MiniLM's int8 products ran 4–15% slower in the model); heuristic 2 (reuse) scores a tile by the dots per loaded vector,
 * y0·(x0/4) / (y0 + x0/4), times the share of its sums that land in C (heuristic 4: padding of the
 * last band and panel wasted). Unrolling two pairs hides the dot's latency; four rarely pays more.
 */
final class Int8Space {

    private static final int[] COLUMNS = {4, 8, 12, 16};
    private static final int[] UNROLLS = {2, 1, 4};
    private static final int MAX_ROWS = 6;
    /** Registers a tile needs besides its sums and B vectors: one A pair. */
    private static final int FIXED_REGISTERS = 1;

    private Int8Space() {
    }

    static List<Candidate> build(OpShapes op, int registers) {
        List<Candidate> all = new ArrayList<>();
        for (int x0 : COLUMNS) {
            for (int y0 = 1; y0 <= MAX_ROWS; y0++) {
                int sums = y0 * x0 / ScheduleRules.LANES;
                if (sums > ScheduleRules.WASM_MAX_INTEGER_ACCUMULATORS
                        || sums + x0 / ScheduleRules.LANES + FIXED_REGISTERS > registers) {
                    continue;
                }
                double reuse = (double) sums / (y0 + x0 / ScheduleRules.LANES);
                double used = CompactSpaces.fill(op.m(), y0) * CompactSpaces.fill(op.n(), x0);
                CompactSpaces.addUnrolled(all, Schedule.newBuilder().setX0(x0).setY0(y0).setVectorize(true).setPackB(true),
                        UNROLLS, reuse * used);
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }


    /** Whether a schedule made elsewhere fits (its unsplit fields): one the compiler takes, on a device with SIMD128. */
    static boolean runs(Schedule s, boolean simd) {
        return simd && ScheduleRules.int8Problem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED;
    }
}
