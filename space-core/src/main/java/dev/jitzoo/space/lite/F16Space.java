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
 * The space of the float16-weight matmul: the float matmul's register tiles (x0 ∈ 4, 8, 12, 16; y0
 * rows; registers y0·x0/4 sums + x0/4 B vectors + one broadcast A, heuristic 1 of Table 1; scored
 * by multiply-adds per loaded vector, y0·(x0/4) / (y0 + x0/4), heuristic 2, × the share of the tile
 * that lands in C, heuristic 4) in two loop orders: staged ({@code columnsOuter}: each tile's
 * weights widened once into Work, where M has rows for at least four tiles' columns) and direct
 * (B widened as each k step reads it, every band again: the form for few rows), the latter's score
 * scaled by {@value #DIRECT_SHARE} (a widening costs ten instructions a vector, about what the
 * multiply-adds of five rows cost); staged tiles also with relaxed madd where the device has it;
 * unroll 1, 2, 4 k steps a trip.
 */
final class F16Space {

    private static final int[] COLUMNS = {4, 8, 12, 16};
    private static final int[] UNROLLS = {1, 2, 4};
    private static final int MAX_ROWS = 6;
    private static final double DIRECT_SHARE = 0.5;

    private F16Space() {
    }

    static List<Candidate> build(OpShapes op, int registers, boolean relaxed) {
        List<Candidate> all = new ArrayList<>();
        for (int x0 : COLUMNS) {
            int vectors = x0 / ScheduleRules.LANES;
            for (int y0 = 1; y0 <= Math.min(MAX_ROWS, op.m()); y0++) {
                int sums = y0 * vectors;
                if (sums > ScheduleRules.WASM_MAX_ACCUMULATORS || sums + vectors + 1 > registers) {
                    continue;
                }
                double score = (double) sums / (y0 + vectors) * CompactSpaces.fill(op.m(), y0) * CompactSpaces.fill(op.n(), x0);
                if (op.m() >= 4 * x0) {
                    add(all, x0, y0, true, false, score);
                    if (relaxed) {
                        add(all, x0, y0, true, true, score * Q4Space.RELAXED_GAIN);
                    }
                }
                add(all, x0, y0, false, false, score * DIRECT_SHARE);
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    private static void add(List<Candidate> all, int x0, int y0, boolean staged, boolean relaxed, double score) {
        CompactSpaces.addUnrolled(all, Schedule.newBuilder().setX0(x0).setY0(y0).setVectorize(true).setColumnsOuter(staged)
                .setRelaxedSimd(relaxed), UNROLLS, score);
    }


    /** Whether a schedule made elsewhere fits (its unsplit fields): one the compiler takes, on a device with SIMD128. */
    static boolean runs(Schedule s, boolean simd) {
        return simd && ScheduleRules.f16Problem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED;
    }
}
