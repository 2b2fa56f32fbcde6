package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.space.domain.OpShapes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The space of the 4-bit matmul (each column's f32x4 sums along K, its 4-bit weights widened in
 * registers): register tiles y0 rows × x0 columns and the blocks of 32 k per trip. Heuristic 1 of
 * Table 1 counts registers as the sums (y0·x0) plus one A vector per row and two for the weight
 * being widened (a column's scale and zero point are read once per block and may live in memory);
 * heuristic 2 scores a tile by the multiply-adds per vector it loads or widens, y0·x0 / (y0 + x0)
 * (an A vector serves x0 columns, a widened weight y0 rows), times the share of it that lands in C
 * (heuristic 4). Decode (M = 1) thus gets 1 × x0 tiles: every weight widened once.
 */
final class Q4Space {

    private static final int MAX_COLUMNS = 8;
    private static final int MAX_ROWS = 8;
    private static final int[] UNROLLS = {1, 2};
    /** Registers a tile needs besides its sums and A vectors: the weight widened and the nibble mask. */
    private static final int FIXED_REGISTERS = 2;

    private Q4Space() {
    }

    static List<Candidate> build(OpShapes op, int registers) {
        List<Candidate> all = new ArrayList<>();
        for (int x0 = 1; x0 <= MAX_COLUMNS; x0++) {
            for (int y0 = 1; y0 <= Math.min(MAX_ROWS, op.m()); y0++) {
                int sums = y0 * x0;
                if (sums > ScheduleRules.WASM_MAX_Q4_ACCUMULATORS || sums + y0 + FIXED_REGISTERS > registers) {
                    continue;
                }
                double reuse = (double) sums / (y0 + x0);
                double used = fill(op.m(), y0) * fill(op.n(), x0);
                for (int i = 0; i < UNROLLS.length; i++) {
                    Schedule schedule = Schedule.newBuilder().setX0(x0).setY0(y0).setVectorize(true).setPackB(true)
                            .setUnroll(UNROLLS[i]).build();
                    all.add(Candidate.newBuilder().setSchedule(schedule).setSource(CandidateSource.CANDIDATE_SOURCE_EXPLORATION)
                            .setScore(reuse * used * (1 - 0.05 * i)).build());
                }
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    private static double fill(int extent, int tile) {
        return (double) extent / (OpShapes.ceilDiv(extent, tile) * tile);
    }

    /** Whether a schedule made elsewhere fits (its unsplit fields): one the compiler takes, on a device with SIMD128. */
    static boolean runs(Schedule s, boolean simd) {
        return simd && ScheduleRules.q4Problem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED;
    }
}
