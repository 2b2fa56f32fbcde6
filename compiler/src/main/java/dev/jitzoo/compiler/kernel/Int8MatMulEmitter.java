package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Instruction;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * The int8 matmul ({@code matmul_int8}, docs/kernel-abi.md): onnxruntime's dynamic int8 product
 * (DynamicQuantizeLinear of A, MatMulInteger with the int8 weights, Cast, × the two scales) in one
 * kernel. A arrives as floats; the kernel finds its range (with 0 in it), its scale and zero point
 * as DynamicQuantizeLinear defines them, and writes each row quantized, less its zero point, as
 * i16 into Work (its rows padded to a multiple of 8 with zeros). The products are then integer:
 * {@code i32x4.dot_i16x8_s} multiplies eight i16 pairs and sums adjacent ones, so one instruction
 * takes two k steps of four columns (8 multiply-adds, exact), A's pair loaded into every lane pair
 * with one {@code v128.load32_splat} and B's, packed once ({@code pack_b}) into x0-wide panels of k
 * pairs, widened as it loads ({@code v128.load8x8_s}). The sums become floats only in the epilogue:
 * × AScale · BScale[j], then the matmul epilogue.
 *
 * <pre>
 * range of all of A (SIMD min/max), scale, zero point          {@link #emitRange}
 * for each row: Work[row] = clamp(nearest(A[row] / scale), -zero, 255 - zero)
 * for band of y0 rows (then the M % y0 rows left)
 *   for panel of x0 columns (the last one N % x0 wide)
 *     y0 × x0/4 i32x4 sums over ceil(K/2) pairs (unroll pairs per trip)
 *     scale, epilogue, store (lane by lane past N)
 * </pre>
 */
final class Int8MatMulEmitter {

    static final int PARAM_A = 0;
    static final int PARAM_B = 1;
    static final int PARAM_B_SCALE = 2;
    static final int PARAM_C = 3;
    static final int PARAM_WORK = 4;

    /** B's bytes per k pair and 4 columns in a panel: one {@code v128.load8x8_s}. */
    private static final int GROUP_BYTES = 8;
    private static final int I16_BYTES = 2;
    /** Work's rows are padded to a multiple of this many i16s: a quantize step's width. */
    static final int WORK_ALIGN = 8;
    private static final MemArg BYTES = new MemArg(0, 0);

    /** The locals the range leaves for the rows: A's scale (f32) and the bounds of a quantized value less its zero point. */
    record Range(int scale, int low, int high) {
    }

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool pool;
    private final int x0;
    private final int y0;
    private final int pairs;
    private final int unroll;

    private Int8MatMulEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        InvalidKernelException.refuse(op, schedule, ScheduleRules.int8Problem(schedule.wire()));
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = pool;
        this.x0 = schedule.x0();
        this.y0 = schedule.y0();
        this.pairs = (op.k() + 1) / 2;
        this.unroll = Math.max(1, schedule.unroll());
    }

    /** The entry {@code (A, B, BScale, C, Work[, Bias][, Residual])}. */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(AbiMetadata.operandCount(op)));
        LocalPool pool = new LocalPool(f);
        Range range = emitRange(op, f, pool);
        new Int8MatMulEmitter(op, schedule, f, pool).rows(range);
        return f;
    }

    /**
     * A split kernel's unit ({@link RangeEmitter}): the rows of {@code op} (the unit's) at the
     * operand parameters as set for it, with the range of the whole A found once per call.
     */
    static void emitInto(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool, Range range) {
        new Int8MatMulEmitter(op, schedule, f, pool).rows(range);
    }

    /** i16s per row of Work: K rounded up to a multiple of {@value #WORK_ALIGN}. */
    static int workRow(Op op) {
        return (op.k() + WORK_ALIGN - 1) / WORK_ALIGN * WORK_ALIGN;
    }

    /** Bytes of one packed panel: x0 columns of every k pair. */
    static int panelBytes(Op op, Schedule schedule) {
        return (op.k() + 1) / 2 * 2 * schedule.x0();
    }

    /** Bytes of the packed B: a panel per x0 columns, the last one padded with zeros. */
    static long packedBytes(Op op, Schedule schedule) {
        return (long) ((op.n() + schedule.x0() - 1) / schedule.x0()) * panelBytes(op, schedule);
    }

    private int param(String name) {
        return AbiMetadata.param(op, name);
    }

    private int rowBytesC() {
        return op.n() * FLOAT_BYTES;
    }

    /**
     * DynamicQuantizeLinear's parameters of all of A (at parameter {@code PARAM_A}), in float32 as
     * onnxruntime computes them: min and max with 0 in the range; scale = (max − min) / 255 (1 when
     * max = min); zero point = round-half-even(clamp(−min / scale, 0, 255)). Leaves the scale, −zero
     * and 255 − zero in locals.
     */
    static Range emitRange(Op op, FunctionBuilder f, LocalPool pool) {
        int p = pool.one("range.p", ValType.I32), counter = pool.one("range.counter", ValType.I32);
        int lowV = pool.one("range.lowV", ValType.V128), highV = pool.one("range.highV", ValType.V128);
        int low = pool.one("range.low", ValType.F32), high = pool.one("range.high", ValType.F32);
        int scale = pool.one("range.scale", ValType.F32), zero = pool.one("range.zero", ValType.F32);
        long elements = (long) op.m() * op.k();
        f.localGet(PARAM_A).localSet(p);
        f.f32x4Const(0f).localTee(lowV).localSet(highV);
        Loops.repeat(f, Trips.fixed(Math.toIntExact(elements / LANES)), counter, () -> {
            f.localGet(lowV).localGet(p).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).simd(SimdOpcode.F32X4_MIN).localSet(lowV);
            f.localGet(highV).localGet(p).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).simd(SimdOpcode.F32X4_MAX).localSet(highV);
            Loops.add(f, p, LANES * FLOAT_BYTES);
        });
        f.f32Const(0f).localTee(low).localSet(high);
        Loops.repeat(f, Trips.fixed(Math.toIntExact(elements % LANES)), counter, () -> {
            f.localGet(low).localGet(p).memory(Opcode.F32_LOAD, MemArg.floatAt(0)).op(Opcode.F32_MIN).localSet(low);
            f.localGet(high).localGet(p).memory(Opcode.F32_LOAD, MemArg.floatAt(0)).op(Opcode.F32_MAX).localSet(high);
            Loops.add(f, p, FLOAT_BYTES);
        });
        for (int lane = 0; lane < LANES; lane++) {
            f.localGet(low).localGet(lowV).f32x4ExtractLane(lane).op(Opcode.F32_MIN).localSet(low);
            f.localGet(high).localGet(highV).f32x4ExtractLane(lane).op(Opcode.F32_MAX).localSet(high);
        }
        // scale = max == min ? 1 : (max - min) / 255
        f.f32Const(1f).localGet(high).localGet(low).op(Opcode.F32_SUB).f32Const(255f).op(Opcode.F32_DIV)
                .localGet(high).localGet(low).op(Opcode.F32_EQ).op(Opcode.SELECT).localSet(scale);
        // zero = nearest(clamp(0 - min / scale, 0, 255)); the bounds of a value less it: -zero, 255 - zero
        f.f32Const(0f).localGet(low).localGet(scale).op(Opcode.F32_DIV).op(Opcode.F32_SUB).f32Const(0f).op(Opcode.F32_MAX)
                .f32Const(255f).op(Opcode.F32_MIN).op(Opcode.F32_NEAREST).localSet(zero);
        int lowBound = pool.one("range.lowBound", ValType.F32), highBound = pool.one("range.highBound", ValType.F32);
        f.f32Const(0f).localGet(zero).op(Opcode.F32_SUB).localSet(lowBound);
        f.f32Const(255f).localGet(zero).op(Opcode.F32_SUB).localSet(highBound);
        return new Range(scale, lowBound, highBound);
    }

    /** This call's rows: quantized into Work, then multiplied band by band. */
    private void rows(Range range) {
        quantize(range);
        Tile tile = new Tile(range.scale());
        int bandW = i32("bandW"), bandC = i32("bandC");
        f.localGet(PARAM_WORK).localSet(bandW);
        f.localGet(PARAM_C).localSet(bandC);
        Loops.repeat(f, Trips.fixed(op.m() / y0), i32("band.counter"), () -> {
            panels(tile, y0, bandW, bandC);
            Loops.add(f, bandW, y0 * workRow(op) * I16_BYTES);
            Loops.add(f, bandC, y0 * rowBytesC());
        });
        if (op.m() % y0 != 0) {
            panels(tile, op.m() % y0, bandW, bandC);
        }
    }

    /**
     * Work[row] = clamp(nearest(A[row] / scale), −zero, 255 − zero) as i16, eight at a time
     * ({@code i16x8.narrow_i32x4_s} of two quantized vectors), the rest one by one, zeros to the
     * row's padded end.
     */
    private void quantize(Range range) {
        int a = i32("q.a"), w = i32("q.w"), scaleV = pool.one("q.scaleV", ValType.V128);
        int lowV = pool.one("q.lowV", ValType.V128), highV = pool.one("q.highV", ValType.V128);
        f.localGet(range.scale()).simd(SimdOpcode.F32X4_SPLAT).localSet(scaleV);
        f.localGet(range.low()).simd(SimdOpcode.F32X4_SPLAT).localSet(lowV);
        f.localGet(range.high()).simd(SimdOpcode.F32X4_SPLAT).localSet(highV);
        f.localGet(PARAM_A).localSet(a);
        f.localGet(PARAM_WORK).localSet(w);
        int k = op.k(), eights = k / WORK_ALIGN, rest = k % WORK_ALIGN, pad = workRow(op) - k;
        Loops.repeat(f, Trips.fixed(op.m()), i32("q.rowCounter"), () -> {
            Loops.repeat(f, Trips.fixed(eights), i32("q.counter"), () -> {
                f.localGet(w);
                for (int half = 0; half < 2; half++) {
                    address(a, (long) half * LANES * FLOAT_BYTES);
                    f.memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).localGet(scaleV).simd(SimdOpcode.F32X4_DIV)
                            .simd(SimdOpcode.F32X4_NEAREST).localGet(lowV).simd(SimdOpcode.F32X4_MAX).localGet(highV)
                            .simd(SimdOpcode.F32X4_MIN).simd(SimdOpcode.I32X4_TRUNC_SAT_F32X4_S);
                }
                f.simd(SimdOpcode.I16X8_NARROW_I32X4_S).memory(SimdOpcode.V128_STORE, BYTES);
                Loops.add(f, a, WORK_ALIGN * FLOAT_BYTES);
                Loops.add(f, w, WORK_ALIGN * I16_BYTES);
            });
            for (int i = 0; i < rest; i++) {
                address(w, (long) i * I16_BYTES);
                address(a, (long) i * FLOAT_BYTES);
                f.memory(Opcode.F32_LOAD, MemArg.floatAt(0)).localGet(range.scale()).op(Opcode.F32_DIV).op(Opcode.F32_NEAREST)
                        .localGet(range.low()).op(Opcode.F32_MAX).localGet(range.high()).op(Opcode.F32_MIN)
                        .op(Opcode.I32_TRUNC_F32_S).memory(Opcode.I32_STORE16, BYTES);
            }
            for (int i = rest; i < rest + pad; i++) {
                address(w, (long) i * I16_BYTES);
                f.i32Const(0).memory(Opcode.I32_STORE16, BYTES);
            }
            Loops.add(f, a, rest * FLOAT_BYTES);
            Loops.add(f, w, (rest + pad) * I16_BYTES);
        });
    }

    /** One band of rows across every panel: the whole panels in a loop, then the narrow last one. */
    private void panels(Tile tile, int rows, int bandW, int bandC) {
        int panel = i32("panel"), panelC = i32("panelC"), panelScale = i32("panelScale");
        f.localGet(PARAM_B).localSet(panel);
        f.localGet(bandC).localSet(panelC);
        f.localGet(PARAM_B_SCALE).localSet(panelScale);
        int panelBytes = panelBytes(op, schedule);
        Loops.repeat(f, Trips.fixed(op.n() / x0), i32("panel.counter"), () -> {
            tile.emit(rows, x0, bandW, panel, panelC, panelScale);
            Loops.add(f, panel, panelBytes);
            Loops.add(f, panelC, x0 * FLOAT_BYTES);
            Loops.add(f, panelScale, x0 * FLOAT_BYTES);
        });
        if (op.n() % x0 != 0) {
            tile.emit(rows, op.n() % x0, bandW, panel, panelC, panelScale);
        }
    }

    /** A register tile: its sums, its k loop, its epilogue and store. */
    private final class Tile {

        private final int scale;
        private final int pW = i32("tile.pW");
        private final int pB = i32("tile.pB");
        private final int counter = i32("tile.counter");

        Tile(int scale) {
            this.scale = scale;
        }

        /** Rows × width of C at {@code c} (width ≤ x0: the panel's real columns; the sums cover x0). */
        void emit(int rows, int width, int w, int b, int c, int scales) {
            int vectors = x0 / LANES;
            int[] sums = pool.group("tile.sums", ValType.V128, rows * vectors);
            f.f32x4Const(0f); // all zero bits: i32 zeros too
            for (int i = 0; i < sums.length - 1; i++) {
                f.localTee(sums[i]);
            }
            f.localSet(sums[sums.length - 1]);
            f.localGet(w).localSet(pW);
            f.localGet(b).localSet(pB);
            Loops.repeat(f, Trips.fixed(pairs / unroll), counter, () -> pairSteps(rows, sums, unroll));
            Loops.repeat(f, Trips.fixed(pairs % unroll), counter, () -> pairSteps(rows, sums, 1));
            store(rows, width, sums, c, scales);
        }

        /** {@code count} k pairs: per row A's pair (an i32 of two i16) in every lane, dotted with each B group. */
        private void pairSteps(int rows, int[] sums, int count) {
            for (int p = 0; p < count; p++) {
                for (int row = 0; row < rows; row++) {
                    int pairA = pool.one("tile.pairA", ValType.V128);
                    load(pW, (long) row * workRow(op) * I16_BYTES + (long) p * 2 * I16_BYTES, SimdOpcode.V128_LOAD32_SPLAT, BYTES);
                    f.localSet(pairA);
                    for (int v = 0; v < x0 / LANES; v++) {
                        int sum = sums[row * (x0 / LANES) + v];
                        f.localGet(sum).localGet(pairA);
                        load(pB, (long) p * x0 * 2 + (long) v * GROUP_BYTES, SimdOpcode.V128_LOAD8X8_S, BYTES);
                        f.simd(SimdOpcode.I32X4_DOT_I16X8_S).simd(SimdOpcode.I32X4_ADD).localSet(sum);
                    }
                }
            }
            Loops.add(f, pW, count * 2 * I16_BYTES);
            Loops.add(f, pB, count * x0 * 2);
        }

        /**
         * Each sum × AScale × BScale[column], the epilogue, stored: whole vectors where four columns
         * are real, lane by lane in the last one when the width is not a multiple of 4.
         */
        private void store(int rows, int width, int[] sums, int c, int scales) {
            int vector = pool.one("tile.value", ValType.V128), scalar = pool.one("tile.scalar", ValType.F32);
            for (int row = 0; row < rows; row++) {
                for (int v = 0; v * LANES < width; v++) {
                    long column = (long) v * LANES;
                    long cOffset = (long) row * rowBytesC() + column * FLOAT_BYTES;
                    f.localGet(sums[row * (x0 / LANES) + v]).simd(SimdOpcode.F32X4_CONVERT_I32X4_S).localGet(scale)
                            .simd(SimdOpcode.F32X4_SPLAT).simd(SimdOpcode.F32X4_MUL).localSet(vector);
                    if (column + LANES <= width) {
                        f.localGet(vector);
                        load(scales, column * FLOAT_BYTES, SimdOpcode.V128_LOAD, MemArg.floatAt(0));
                        f.simd(SimdOpcode.F32X4_MUL).localSet(vector);
                        epilogue(true, vector, c, scales, column, cOffset);
                        address(c, cOffset);
                        f.localGet(vector).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
                        continue;
                    }
                    for (int lane = 0; column + lane < width; lane++) {
                        long laneColumn = column + lane;
                        f.localGet(vector).f32x4ExtractLane(lane);
                        load(scales, laneColumn * FLOAT_BYTES, Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.op(Opcode.F32_MUL).localSet(scalar);
                        epilogue(false, scalar, c, scales, laneColumn, cOffset + (long) lane * FLOAT_BYTES);
                        address(c, cOffset + (long) lane * FLOAT_BYTES);
                        f.localGet(scalar).memory(Opcode.F32_STORE, MemArg.floatAt(0));
                    }
                }
            }
        }

        /** Bias sits at the column's place in Bias (as BScale does in BScale), Residual at C's place in Residual. */
        private void epilogue(boolean isVector, int value, int c, int scales, long column, long cOffset) {
            EpilogueEmitter.apply(f, pool, op, isVector, value, new EpilogueEmitter.Operands() {
                @Override
                public void pushBias() {
                    f.localGet(scales).localGet(PARAM_B_SCALE).op(Opcode.I32_SUB).localGet(param("Bias")).op(Opcode.I32_ADD);
                    offset(column * FLOAT_BYTES);
                }

                @Override
                public void pushResidual() {
                    f.localGet(c).localGet(PARAM_C).op(Opcode.I32_SUB).localGet(param("Residual")).op(Opcode.I32_ADD);
                    offset(cOffset);
                }
            });
        }
    }

    /** Emits {@code pack_b(src, dst)}: B [K, N] int8 into panels of k pairs, zero-padded. */
    static FunctionBuilder emitPack(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
        LocalPool pool = new LocalPool(f);
        int src = 0, dst = 1;
        int at = pool.one("at", ValType.I32), k = pool.one("k", ValType.I32), column = pool.one("column", ValType.I32);
        int counter = pool.one("counter", ValType.I32), inner = pool.one("inner", ValType.I32);
        long words = packedBytes(op, schedule) / 4;
        f.localGet(dst).localSet(at);
        Loops.repeat(f, Trips.fixed(Math.toIntExact(words)), counter, () -> {
            f.localGet(at).i32Const(0).memory(Opcode.I32_STORE, MemArg.floatAt(0));
            Loops.add(f, at, 4);
        });
        int x0 = schedule.x0();
        f.i32Const(0).localSet(k);
        Loops.repeat(f, Trips.fixed(op.k()), counter, () -> {
            f.i32Const(0).localSet(column);
            Loops.repeat(f, Trips.fixed(op.n()), inner, () -> {
                // dst + column/x0 · panel + k/2 · 2·x0 + (column%x0)/4 · 8 + column%4 · 2 + k%2
                f.localGet(dst)
                        .localGet(column).i32Const(x0).op(Opcode.I32_DIV_U).i32Const(panelBytes(op, schedule)).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                        .localGet(k).i32Const(1).op(Opcode.I32_SHR_U).i32Const(2 * x0).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                        .localGet(column).i32Const(x0).op(Opcode.I32_REM_U).i32Const(2).op(Opcode.I32_SHR_U)
                        .i32Const(3).op(Opcode.I32_SHL).op(Opcode.I32_ADD)
                        .localGet(column).i32Const(3).op(Opcode.I32_AND).i32Const(1).op(Opcode.I32_SHL).op(Opcode.I32_ADD)
                        .localGet(k).i32Const(1).op(Opcode.I32_AND).op(Opcode.I32_ADD);
                f.localGet(src).memory(Opcode.I32_LOAD8_U, BYTES).memory(Opcode.I32_STORE8, BYTES);
                Loops.add(f, src, 1);
                Loops.add(f, column, 1);
            });
            Loops.add(f, k, 1);
        });
        return f;
    }

    private void load(int pointer, long offset, Instruction op, MemArg arg) {
        Loops.load(f, pointer, offset, op, arg);
    }

    private void address(int pointer, long offset) {
        Loops.address(f, pointer, offset);
    }

    private void offset(long offset) {
        Loops.offset(f, offset);
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
