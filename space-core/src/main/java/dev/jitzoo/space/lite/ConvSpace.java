package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The spaces of the convolution. Wasm: an implicit GEMM per output row and group: the group's output
 * channels by the row's outputs, over the windows gathered into Work once per tile): register tiles
 * of x0 ∈ 4, 8, 12, 16 output columns by y0 output channels, within the registers (y0·x0/4 sums +
 * x0/4 window vectors + one broadcast filter value, heuristic 1 of Table 1), scored by
 * multiply-adds per loaded vector, y0·(x0/4) / (y0 + x0/4) (heuristic 2), × the share of the tile
 * that lands in C along the group's channels and the row's outputs (heuristic 4); each with relaxed
 * madd where the device has it, and unroll 1, 2, 4 window taps a trip.
 */
final class ConvSpace {

    private static final int[] COLUMNS = {4, 8, 12, 16};
    private static final int[] UNROLLS = {1, 2, 4};
    /** A depthwise tile unrolls its window's columns itself: no unroll to choose. */
    private static final int[] ONE_TRIP = {1};
    private static final int MAX_ROWS = 6;
    /** Most output rows of a depthwise band. */
    private static final int MAX_BAND_ROWS = 4;

    private ConvSpace() {
    }

    static List<Candidate> build(OpSpec op, int registers, boolean relaxed) {
        if (depthwise(op)) {
            return buildDepthwise(op, registers, relaxed);
        }
        int channels = op.getShape(4) / OpRules.window(op).getGroup();
        long outputs = OpRules.convOutputWidth(op);
        List<Candidate> all = new ArrayList<>();
        for (int x0 : COLUMNS) {
            int vectors = x0 / ScheduleRules.LANES;
            for (int y0 = 1; y0 <= Math.min(MAX_ROWS, channels); y0++) {
                int sums = y0 * vectors;
                if (sums > ScheduleRules.WASM_MAX_ACCUMULATORS || sums + vectors + 1 > registers) {
                    continue;
                }
                double score = (double) sums / (y0 + vectors) * CompactSpaces.fill(channels, y0) * CompactSpaces.fill((int) outputs, x0);
                add(all, x0, y0, false, score);
                if (relaxed) {
                    add(all, x0, y0, true, score * Q4Space.RELAXED_GAIN);
                }
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    /** One input and one output channel per group: the kernel reads the input in place, y0 output rows a band. */
    static boolean depthwise(OpSpec op) {
        int group = OpRules.window(op).getGroup();
        return group == op.getShape(1) && group == op.getShape(4);
    }

    /**
     * A depthwise conv's space: tiles of y0 output rows (a band, sharing one copy of the input rows
     * under it) by x0 outputs, within the registers (sums + one input vector + one broadcast filter
     * value); scored by the multiply-adds per broadcast filter value, s / (s + 1) for s = y0·x0/4
     * sums, × the multiply-adds per value the band copies, 1 / (1 + copies / madds), × the share of
     * the tile in C along the rows and the outputs (heuristic 4).
     */
    private static List<Candidate> buildDepthwise(OpSpec op, int registers, boolean relaxed) {
        var w = OpRules.window(op);
        long outH = OpRules.convOutputHeight(op), outW = OpRules.convOutputWidth(op);
        long kh = op.getShape(5), kw = op.getShape(6), padded = op.getShape(3) + (long) w.getPadLeft() + w.getPadRight();
        List<Candidate> all = new ArrayList<>();
        for (int x0 : COLUMNS) {
            int vectors = x0 / ScheduleRules.LANES;
            for (int y0 = 1; y0 <= Math.min(MAX_BAND_ROWS, outH); y0++) {
                int sums = y0 * vectors;
                if (sums > ScheduleRules.WASM_MAX_ACCUMULATORS || sums + 2 > registers) {
                    continue;
                }
                double copies = (double) ((y0 - 1) * w.getStrideH() + (kh - 1) * w.getDilationH() + 1) * padded;
                double madds = (double) y0 * outW * kh * kw;
                double score = (double) sums / (sums + 1) / (1 + copies / madds)
                        * CompactSpaces.fill((int) outH, y0) * CompactSpaces.fill((int) outW, x0);
                add(all, x0, y0, false, score, ONE_TRIP);
                if (relaxed) {
                    add(all, x0, y0, true, score * Q4Space.RELAXED_GAIN, ONE_TRIP);
                }
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    private static void add(List<Candidate> all, int x0, int y0, boolean relaxed, double score) {
        add(all, x0, y0, relaxed, score, UNROLLS);
    }

    private static void add(List<Candidate> all, int x0, int y0, boolean relaxed, double score, int[] unrolls) {
        CompactSpaces.addUnrolled(all, Schedule.newBuilder().setX0(x0).setY0(y0).setVectorize(true).setRelaxedSimd(relaxed), unrolls, score);
    }

    private static final int[] WGSL_TILE = {1, 2, 4, 8};
    /** Workgroups as invocations along a row by output rows. */
    private static final int[][] WGSL_WORKGROUPS = {{8, 8}, {16, 4}, {4, 16}};

    /**
     * The WGSL space: one invocation's tile of y0 output channels by x0 outputs (x0, y0 ∈ 1, 2, 4, 8;
     * at most {@value ScheduleRules#WGSL_MAX_CONV_SUMS} sums), scored by multiply-adds per value
     * read, x0·y0 / (x0 + y0), × the share of the tile that lands in C (heuristic 4); each in
     * workgroups of 8×8, 16×4 and 4×16 invocations within the device's limits, the square first.
     */
    static List<Candidate> buildWgsl(OpSpec op, WebGpuLimits limits) {
        int channels = op.getShape(4) / OpRules.window(op).getGroup();
        int outputs = (int) OpRules.convOutputWidth(op);
        int invocations = limits.getMaxComputeInvocationsPerWorkgroup() == 0 ? 256 : limits.getMaxComputeInvocationsPerWorkgroup();
        List<Candidate> all = new ArrayList<>();
        for (int x0 : WGSL_TILE) {
            for (int y0 : WGSL_TILE) {
                if (x0 * y0 > ScheduleRules.WGSL_MAX_CONV_SUMS || y0 > 1 && y0 / 2 >= channels) {
                    continue;
                }
                double score = (double) x0 * y0 / (x0 + y0) * CompactSpaces.fill(channels, y0) * CompactSpaces.fill(outputs, x0);
                for (int i = 0; i < WGSL_WORKGROUPS.length; i++) {
                    int[] wg = WGSL_WORKGROUPS[i];
                    if (wg[0] * wg[1] > invocations) {
                        continue;
                    }
                    all.add(Candidate.newBuilder().setSchedule(Schedule.newBuilder().setX0(x0).setY0(y0).setX1(wg[0] * x0).setY1(wg[1]))
                            .setSource(CandidateSource.CANDIDATE_SOURCE_EXPLORATION).setScore(score * (1 - 0.05 * i)).build());
                }
            }
        }
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return all;
    }

    /** Whether a schedule made elsewhere fits (its unsplit fields): one the compiler takes, on a device with SIMD128. */
    static boolean runs(Schedule s, boolean simd) {
        return simd && ScheduleRules.convProblem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED;
    }
}
