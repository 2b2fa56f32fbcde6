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
 * The space of the 4-bit matmul, in two loop orders. Staged ({@code columnsOuter}): each tile of x0
 * columns widened once into Work, then the float register tile over it for every band of rows, so
 * its tiles are the float matmul's (x0 ∈ 4, 8, 12, 16; registers: y0·x0/4 sums, x0/4 B vectors,
 * one broadcast A; scored by multiply-adds per loaded vector, y0·(x0/4) / (y0 + x0/4)); it enters
 * where M has rows for at least four tiles' columns. Direct: each column's f32x4 sums along K, the
 * weights widened in registers by every band (registers: y0·x0 sums, one A vector per row, the
 * weight and the nibble mask; scored y0·x0 / (y0 + x0)), scaled by {@value #DIRECT_SHARE}: measured
 * here on MiniLM's 128 × 384 × 1536, the best direct tile ran at 9.5 GFLOP/s and the best staged
 * one at about 2.5 times that; a staged tile also comes with relaxed madd where the device has it.
 * Decode (M = 1) gets direct 1 × x0 tiles, every weight widened once.
 * Both × the share of the tile that lands in C (heuristic 4 of Table 1).
 */
final class Q4Space {

    private static final int MAX_COLUMNS = 8;
    private static final int MAX_ROWS = 8;
    private static final int[] UNROLLS = {1, 2};
    /** Registers a direct tile needs besides its sums and A vectors: the weight widened and the nibble mask. */
    private static final int FIXED_REGISTERS = 2;
    private static final double DIRECT_SHARE = 0.4;
    private static final int[] STAGED_COLUMNS = {4, 8, 12, 16};
    private static final int STAGED_MAX_ROWS = 6;
    /**
     * A staged tile with relaxed madd where the device has it, scored this much above its mul+add
     * twin: the float tile's f32x4.relaxed_madd is one instruction for two (measured here: the best
     * float32 MiniLM product 50.6 GFLOP/s with it, the best float16-weight one 42.2 without).
     */
    static final double RELAXED_GAIN = 1.1;

    private Q4Space() {
    }

    static List<Candidate> build(OpShapes op, int registers, boolean relaxed) {
        List<Candidate> all = new ArrayList<>();
        for (int x0 = 1; x0 <= MAX_COLUMNS; x0++) {
            for (int y0 = 1; y0 <= Math.min(MAX_ROWS, op.m()); y0++) {
                int sums = y0 * x0;
                if (sums > ScheduleRules.WASM_MAX_Q4_ACCUMULATORS) {
                    continue;
                }
                double reuse = (double) sums / (y0 + x0) * CompactSpaces.fill(op.m(), y0) * CompactSpaces.fill(op.n(), x0);
                if (sums + y0 + FIXED_REGISTERS <= registers) {
                    add(all, x0, y0, false, false, reuse * DIRECT_SHARE);
                }
            }
        }
        for (int x0 : STAGED_COLUMNS) {
            int vectors = x0 / ScheduleRules.LANES;
            for (int y0 = 1; y0 <= Math.min(STAGED_MAX_ROWS, op.m()) && op.m() >= 4 * x0; y0++) {
                int sums = y0 * vectors;
                if (sums > ScheduleRules.WASM_MAX_ACCUMULATORS || sums + vectors + 1 > registers) {
                    continue;
                }
                double score = (double) sums / (y0 + vectors) * CompactSpaces.fill(op.m(), y0) * CompactSpaces.fill(op.n(), x0);
                add(all, x0, y0, true, false, score);
                if (relaxed) {
                    add(all, x0, y0, true, true, score * RELAXED_GAIN);
                }
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    private static void add(List<Candidate> all, int x0, int y0, boolean staged, boolean relaxed, double score) {
        CompactSpaces.addUnrolled(all, Schedule.newBuilder().setX0(x0).setY0(y0).setVectorize(true).setPackB(true)
                .setColumnsOuter(staged).setRelaxedSimd(relaxed), UNROLLS, score);
    }


    /** Whether a schedule made elsewhere fits (its unsplit fields): one the compiler takes, on a device with SIMD128. */
    static boolean runs(Schedule s, boolean simd) {
        return simd && ScheduleRules.q4Problem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED;
    }
}
