package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.Utilization;
import dev.jitzoo.space.domain.OpShapes;
import dev.jitzoo.space.primitives.Primitive;
import dev.jitzoo.space.primitives.PrimitiveTable;
import dev.jitzoo.space.primitives.Verdict;
import java.util.ArrayList;
import java.util.List;

/**
 * The Wasm lite space (one thread, so Thread_block = Block_core = 1): register tiles by heuristics
 * 1, 2 and 4, the k block by heuristic 3, then each primitive (vectorize, unroll, loop order, relaxed
 * SIMD where the device has it, B packed where it is constant) fixed or tried both ways as the
 * {@link PrimitiveTable} says; cache_write is always on (C's tile in registers).
 *
 * <p>Registers are counted in SIMD registers: x0 columns take x0/4 v128s, and each of the y0·r0
 * A values is splatted into a register of its own, so Reg_thread = (x0/4)·r0 + r0·y0 + (x0/4)·y0.
 * A block is one register tile's pass over a k block (x1 = x0, y1 = y0: bands and panels stream
 * through L1 one at a time), so heuristic 3 chooses r1: the whole K when that fits L1, else the
 * largest power of two from 256 down to 32 that does.
 */
final class WasmSpace {

    private static final int[] COLUMNS = {4, 8, 16, 32};
    private static final int[] SCALAR_COLUMNS = {1, 2, 4, 8};
    private static final int[] ROWS = {1, 2, 4, 8};
    private static final int[] DEPTHS = {1, 2, 4};
    private static final int[] K_BLOCKS = {256, 128, 64, 32};
    /** The code generator's cap on one tile's accumulators (x86-64 has 16 SIMD registers). */
    static final int MAX_ACCUMULATORS = ScheduleRules.WASM_MAX_ACCUMULATORS;
    static final int LANES = ScheduleRules.LANES;

    private WasmSpace() {
    }

    /** What a Wasm device offers the space. */
    record Target(boolean simd, boolean relaxedSimd, int registers, int l1Bytes) {
    }

    static List<Candidate> build(OpShapes op, boolean constantB, boolean transposedB, Target device, PrimitiveTable primitives,
                                 double rho) {
        List<Candidate> out = new ArrayList<>();
        for (boolean simd : settings(primitives.verdict(Primitive.VECTORIZE), device.simd())) {
            for (int x0 : simd ? COLUMNS : SCALAR_COLUMNS) {
                addTiles(out, op, x0, simd, constantB, transposedB, device, primitives, rho);
            }
        }
        return out;
    }

    /** The register tiles of one width by heuristics 2 and 4, each with its k block (heuristic 3). */
    private static void addTiles(List<Candidate> out, OpShapes op, int x0, boolean simd, boolean constantB, boolean transposedB,
                                 Target device,
                                 PrimitiveTable primitives, double rho) {
        int columnRegisters = simd ? x0 / LANES : x0;
        for (int y0 : ROWS) {
            for (int r0 : DEPTHS) {
                long accumulators = (long) columnRegisters * y0;
                long reg = TableOne.regThread(columnRegisters, y0, r0);
                // heuristic 4 (Reg_thread = TOTAL_REGS, within the relaxation ratio); the codegen's cap
                if (reg > device.registers() || reg < rho * device.registers() || accumulators > MAX_ACCUMULATORS
                        || x0 > OpShapes.padded(op.n()) || y0 > OpShapes.padded(op.m())) {
                    continue;
                }
                int r1 = kBlock(op.k(), x0, y0, device.l1Bytes());
                if (r1 < 0) {
                    continue; // heuristic 3: no k block fits L1
                }
                Schedule tile = Schedule.newBuilder().setX0(x0).setY0(y0).setR0(r0).setR1(r1)
                        .setVectorize(simd).build();
                addVariants(out, op, tile, utilization(op, tile, device), constantB, transposedB, device, primitives);
            }
        }
    }

    /**
     * The primitives on one tile, each as the microbenchmark table says: fixed on, fixed off, or both
     * where open (unroll 1 or 2, rows or columns outside, mul+add or relaxed madd where the device has
     * it and the tile is vectorized, B packed or in place where B is constant).
     */
    private static void addVariants(List<Candidate> out, OpShapes op, Schedule tile, Utilization use, boolean constantB,
                                    boolean transposedB, Target device, PrimitiveTable primitives) {
        // a transposed B has no adjacent columns to load as a vector: vector tiles read it packed (each call, if B varies)
        boolean[] packs = transposedB && tile.getVectorize() ? new boolean[] {true}
                : settings(primitives.verdict(Primitive.CACHE_READ), constantB);
        for (boolean unrolled : settings(primitives.verdict(Primitive.UNROLL), true)) {
            for (boolean columnsOuter : settings(primitives.verdict(Primitive.LOOP_ORDER), true)) {
                for (boolean relaxed : settings(primitives.verdict(Primitive.RELAXED_SIMD), device.relaxedSimd() && tile.getVectorize())) {
                    for (boolean pack : packs) {
                        Schedule schedule = tile.toBuilder().setUnroll(unrolled ? 2 : 1).setColumnsOuter(columnsOuter)
                                .setRelaxedSimd(relaxed).setPackB(pack).build();
                        out.add(Candidate.newBuilder().setSchedule(schedule).setUtilization(use)
                                .setScore(WasmModel.predict(op, schedule, device)).build());
                    }
                }
            }
        }
    }

    /** Table 1 for one schedule on the device: SIMD registers of its tile, bytes of a k block's pass through L1. */
    static Utilization utilization(OpShapes op, Schedule s, Target device) {
        int r0 = Math.max(1, s.getR0());
        long reg = TableOne.regThread(s.getVectorize() ? s.getX0() / LANES : s.getX0(), s.getY0(), r0);
        long l1 = 4 * TableOne.l1Block(s.getX0(), s.getY0(), s.getR1() == 0 ? op.k() : s.getR1());
        return Utilization.newBuilder().setRegThread((int) reg).setL1BlockBytes(l1)
                .setThreadBlock(1).setBlockCore(1).setRegLimit(1)
                .setL1Limit((int) Math.min(Integer.MAX_VALUE, device.l1Bytes() / l1)).build();
    }

    /**
     * Whether a schedule made elsewhere runs on this device: the compiler makes a kernel of it
     * ({@link ScheduleRules#wasmProblem}), its primitives are ones the device has (SIMD, relaxed
     * SIMD), and B is packed only where it is constant.
     */
    static boolean runs(Schedule s, boolean constantB, boolean transposedB, Target device) {
        return ScheduleRules.wasmProblem(s, transposedB) == null && (!s.getVectorize() || device.simd())
                && (!s.getRelaxedSimd() || device.relaxedSimd()) && (!s.getPackB() || constantB || transposedB);
    }

    /** A primitive's settings to try: only off where it is not available, else as the verdict says. */
    static boolean[] settings(Verdict verdict, boolean available) {
        if (!available) {
            return new boolean[] {false};
        }
        return switch (verdict) {
            case ON -> new boolean[] {true};
            case OFF -> new boolean[] {false};
            case OPEN -> new boolean[] {false, true};
        };
    }

    /** Heuristic 3: 0 (whole K) when a tile's pass over K fits L1, else the largest k block that does; -1 if none. */
    static int kBlock(int k, int x0, int y0, int l1Bytes) {
        if (4 * TableOne.l1Block(x0, y0, k) <= l1Bytes) {
            return 0;
        }
        for (int r1 : K_BLOCKS) {
            if (r1 < k && 4 * TableOne.l1Block(x0, y0, r1) <= l1Bytes) {
                return r1;
            }
        }
        return -1;
    }
}
