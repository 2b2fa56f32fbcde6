package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.Utilization;
import dev.jitzoo.space.device.GpuArchitecture;
import dev.jitzoo.space.domain.OpShapes;
import java.util.ArrayList;
import java.util.List;

/**
 * The WebGPU lite space: Table 1 with the GPU's core resources from {@link GpuArchitecture} and the
 * adapter's limits, filtered by heuristics 2 (powers of two), 5 (Thread_block within 256 and the
 * adapter's invocation limit), 6 (L1_block within 16 KiB and the adapter's workgroup storage) and 7
 * (Block_core = RegLimit, within the relaxation ratio); heuristic 1 holds by construction (vec4 is
 * 128 bits: x0 is whole vec4s). Four more filters of ours: a workgroup fills whole warps; an
 * invocation's tile is at most 4 times as wide as high; neither block side is
 * larger than the op's extent rounded up to a power of two; and a block is at most twice as wide as
 * high or the other way round (of blocks of one area the squarest reuses each loaded value most).
 *
 * <p>L1_block here is the bytes the kernel stages in workgroup memory ({@link TableOne#stagedBytes}):
 * Table 1's x1·y1 term is C's block, which lives in registers and is already in Reg_thread. Counted
 * as 4-byte elements in L1 as well, it would make L1 bind before registers for every tiling on
 * every GPU in the table, and heuristic 7 would leave no candidate at all.
 *
 * <p>Ordering: most blocks per core first, as in the paper; among equals, the block that reuses each
 * loaded value most (x1·y1 / (x1 + y1)) and pads least. No GPU here to fit a model against, so the
 * WebGPU order is the paper's with a tie-break, not a tuned prediction.
 */
final class WebGpuSpace {

    /** Columns per invocation: whole vec4s (heuristic 1, and vectorize is web-consistent: always on). */
    private static final int[] COLUMNS = {4, 8};
    private static final int[] ROWS = {1, 2, 4, 8};
    /** k steps loaded together; deeper copies are what unroll (fixed at 4) already writes out. */
    private static final int[] DEPTHS = {1, 2};
    private static final int[] THREADS = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    private static final int[] STAGING = {0, 16, 32};
    static final int MAX_THREADS = 256;
    static final int MAX_SHARED_BYTES = 16 * 1024;
    static final int UNROLL = 4;

    private WebGpuSpace() {
    }

    static List<Candidate> build(OpShapes op, GpuArchitecture gpu, WebGpuLimits limits, double rho) {
        // a small op (a few rows: a short sequence) fills no workgroup of whole warps with a block of
        // at most 2:1, and a tiny one (attention's at a short sequence) no block whose registers bind
        // (heuristic 7); each is still worth tuning, among the blocks that fit in it
        for (Relaxed relaxed : Relaxed.values()) {
            List<Candidate> out = build(op, gpu, limits, rho, relaxed);
            if (!out.isEmpty()) {
                return out;
            }
        }
        return List.of();
    }

    /** How far the filters are relaxed for an op too small for all of them: not, warps and shape, heuristic 7 too. */
    private enum Relaxed { NONE, SMALL, TINY }

    private static List<Candidate> build(OpShapes op, GpuArchitecture gpu, WebGpuLimits limits, double rho, Relaxed relaxed) {
        List<Candidate> out = new ArrayList<>();
        for (int x0 : COLUMNS) {
            for (int y0 : ROWS) {
                for (int r0 : DEPTHS) {
                    long reg = TableOne.regThread(x0, y0, r0);
                    if (reg <= gpu.registersPerThread() && x0 <= 4 * y0) {
                        addWorkgroups(out, op, gpu, limits, rho, x0, y0, r0, reg, relaxed);
                    }
                }
            }
        }
        return out;
    }

    /**
     * Every workgroup and staging depth for one invocation tile that heuristics 5, 6 and 7 keep.
     * Relaxed for a small op, blocks need not fill whole warps or be at most 2:1 (the op bounds
     * them: a block no larger than the op); for a tiny one, heuristic 7 is dropped too.
     */
    private static void addWorkgroups(List<Candidate> out, OpShapes op, GpuArchitecture gpu, WebGpuLimits limits,
                                      double rho, int x0, int y0, int r0, long reg, Relaxed relaxed) {
        int maxThreads = Math.min(MAX_THREADS, limits.getMaxComputeInvocationsPerWorkgroup());
        int maxShared = Math.min(MAX_SHARED_BYTES, limits.getMaxComputeWorkgroupStorageSize());
        for (int tx : THREADS) {
            for (int ty : THREADS) {
                long threads = (long) tx * ty;
                int x1 = x0 * tx, y1 = y0 * ty;
                if (threads > maxThreads || tx > limits.getMaxComputeWorkgroupSizeX()   // heuristic 5
                        || ty > limits.getMaxComputeWorkgroupSizeY()
                        || x1 > OpShapes.padded(op.n()) || y1 > OpShapes.padded(op.m())) {
                    continue;
                }
                if (relaxed == Relaxed.NONE && (threads % gpu.warpWidth() != 0 || x1 > 2 * y1 || y1 > 2 * x1)) {
                    continue;
                }
                for (int r1 : STAGING) {
                    long l1 = TableOne.stagedBytes(x1, y1, r1);
                    if (l1 > maxShared || r1 > OpShapes.padded(op.k())) {
                        continue; // heuristic 6
                    }
                    double warps = TableOne.warpBlock(threads, gpu.warpWidth());
                    TableOne.BlocksPerCore blocks = TableOne.BlocksPerCore.of(reg, threads, l1, warps,
                            gpu.registersPerCore(), gpu.l1BytesPerCore(), gpu.warpsPerCore());
                    if (blocks.blockCore() < 1 || relaxed != Relaxed.TINY && !blocks.registersBind(rho)) {
                        continue; // heuristic 7
                    }
                    Schedule schedule = Schedule.newBuilder().setX0(x0).setY0(y0).setR0(r0).setX1(x1).setY1(y1).setR1(r1)
                            .setVectorize(true).setUnroll(UNROLL).build();
                    out.add(Candidate.newBuilder().setSchedule(schedule).setUtilization(utilization(reg, threads, l1, warps, blocks))
                            .setScore(blocks.blockCore() + tieBreak(op, x1, y1)).build());
                }
            }
        }
    }

    /** Table 1 for one schedule on this GPU. */
    static Utilization utilization(Schedule s, GpuArchitecture gpu) {
        long reg = TableOne.regThread(s.getX0(), s.getY0(), Math.max(1, s.getR0()));
        long threads = TableOne.threadBlock(s.getX0(), s.getY0(), s.getX1(), s.getY1());
        long l1 = TableOne.stagedBytes(s.getX1(), s.getY1(), s.getR1());
        double warps = TableOne.warpBlock(threads, gpu.warpWidth());
        return utilization(reg, threads, l1, warps, TableOne.BlocksPerCore.of(reg, threads, l1, warps,
                gpu.registersPerCore(), gpu.l1BytesPerCore(), gpu.warpsPerCore()));
    }

    private static Utilization utilization(long reg, long threads, long l1, double warps, TableOne.BlocksPerCore blocks) {
        return Utilization.newBuilder().setRegThread((int) reg).setL1BlockBytes(l1)
                .setThreadBlock((int) threads).setWarpBlock(warps).setBlockCore((int) blocks.blockCore())
                .setRegLimit(clamp(blocks.regLimit())).setL1Limit(clamp(blocks.l1Limit()))
                .setWarpLimit(clamp(blocks.warpLimit())).build();
    }

    /**
     * Whether a schedule made elsewhere fits this adapter: the compiler makes a kernel of its tile
     * ({@link ScheduleRules#wgslTileProblem}), it names its workgroup, and the workgroup is within
     * the adapter's invocation, per-axis and storage limits.
     */
    static boolean runs(Schedule s, WebGpuLimits limits) {
        if (ScheduleRules.wgslTileProblem(s) != null || s.getX1() < s.getX0() || s.getY1() < s.getY0()) {
            return false;
        }
        long tx = s.getX1() / s.getX0(), ty = s.getY1() / s.getY0();
        return tx * ty <= limits.getMaxComputeInvocationsPerWorkgroup() && tx <= limits.getMaxComputeWorkgroupSizeX()
                && ty <= limits.getMaxComputeWorkgroupSizeY()
                && TableOne.stagedBytes(s.getX1(), s.getY1(), s.getR1()) <= limits.getMaxComputeWorkgroupStorageSize();
    }

    /** In [0, 1): reuse of each loaded value by the block, discounted by padding; orders candidates with equal Block_core. */
    static double tieBreak(OpShapes op, int x1, int y1) {
        double reuse = (double) x1 * y1 / (x1 + y1) / 256.0;
        double padded = (double) op.m() * op.n()
                / ((double) OpShapes.ceilDiv(op.m(), y1) * y1 * OpShapes.ceilDiv(op.n(), x1) * x1);
        return Math.min(0.999, reuse * padded);
    }

    private static int clamp(long v) {
        return (int) Math.min(Integer.MAX_VALUE, v);
    }
}
