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
import java.util.List;

/**
 * The int8 matmul ({@code matmul_int8}, docs/kernel-abi.md): C = AScale · BScale[n] · Σ_k (A − AZero) · B,
 * then the epilogue, with A uint8 [M, K] and B int8 [K, N] as onnxruntime's dynamic quantization
 * leaves them. The products are integer: {@code i32x4.dot_i16x8_s} multiplies eight i16 pairs and
 * sums adjacent ones, so one instruction takes two k steps of four columns (8 multiply-adds,
 * exact). B is packed once ({@code pack_b}) into x0-wide panels of k pairs, 8 bytes per pair and 4
 * columns, zero-padded, so the k loop widens it as it loads ({@code v128.load8x8_s}); A's pair of
 * bytes is loaded into every lane pair ({@code v128.load16_splat}), widened and its zero point
 * subtracted. The sums become floats only in the epilogue.
 *
 * <pre>
 * for band of y0 rows (then the M % y0 rows left)
 *   for panel of x0 columns (the last one N % x0 wide)
 *     y0 × x0/4 i32x4 sums over K/2 pairs (unroll pairs per trip), the odd last k alone
 *     scale, epilogue, store (lane by lane past N)
 * </pre>
 */
final class Int8MatMulEmitter {

    static final int PARAM_A = 0;
    static final int PARAM_A_SCALE = 1;
    static final int PARAM_A_ZERO = 2;
    static final int PARAM_B = 3;
    static final int PARAM_B_SCALE = 4;
    static final int PARAM_C = 5;
    /** The inputs before C, in parameter order. */
    static final List<String> INPUTS = List.of("A", "AScale", "AZero", "B", "BScale");

    /** B's bytes per k pair and 4 columns in a panel: one {@code v128.load8x8_s}. */
    private static final int GROUP_BYTES = 8;
    private static final MemArg BYTES = new MemArg(0, 0);

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool pool;
    private final int x0;
    private final int y0;
    private final int pairs;
    private final int unroll;

    private Int8MatMulEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        String problem = ScheduleRules.int8Problem(schedule.wire());
        if (problem != null) {
            throw new InvalidKernelException("schedule " + schedule + " cannot compute " + op + ": " + problem);
        }
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = pool;
        this.x0 = schedule.x0();
        this.y0 = schedule.y0();
        this.pairs = op.k() / 2;
        this.unroll = Math.max(1, schedule.unroll());
    }

    /** The entry {@code (A, AScale, AZero, B, BScale, C[, Bias][, Residual])}. */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(operandCount(op)));
        new Int8MatMulEmitter(op, schedule, f, new LocalPool(f)).body();
        return f;
    }

    /** The whole op's code written into {@code f}, whose first parameters are the operands' offsets: a split kernel's unit ({@link RangeEmitter}). */
    static void emitInto(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        new Int8MatMulEmitter(op, schedule, f, pool).body();
    }

    static int operandCount(Op op) {
        return INPUTS.size() + 1 + (op.fuses(Epilogue.Kind.BIAS) ? 1 : 0) + (op.fuses(Epilogue.Kind.RESIDUAL) ? 1 : 0);
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
        int bias = PARAM_C + 1;
        return switch (name) {
            case "Bias" -> bias;
            case "Residual" -> op.fuses(Epilogue.Kind.BIAS) ? bias + 1 : bias;
            default -> throw new IllegalArgumentException(name);
        };
    }

    private int rowBytesC() {
        return op.n() * FLOAT_BYTES;
    }

    private void body() {
        int zero = pool.one("zero", ValType.V128), zeroScalar = pool.one("zeroScalar", ValType.I32);
        int scale = pool.one("scale", ValType.V128);
        f.localGet(PARAM_A_ZERO).memory(Opcode.I32_LOAD8_U, BYTES).localTee(zeroScalar).simd(SimdOpcode.I16X8_SPLAT).localSet(zero);
        f.localGet(PARAM_A_SCALE).memory(Opcode.F32_LOAD, MemArg.floatAt(0)).simd(SimdOpcode.F32X4_SPLAT).localSet(scale);
        int bandA = i32("bandA"), bandC = i32("bandC");
        f.localGet(PARAM_A).localSet(bandA);
        f.localGet(PARAM_C).localSet(bandC);
        Tile tile = new Tile(zero, zeroScalar, scale);
        Loops.repeat(f, Trips.fixed(op.m() / y0), i32("band.counter"), () -> {
            panels(tile, y0, bandA, bandC);
            Loops.add(f, bandA, y0 * op.k());
            Loops.add(f, bandC, y0 * rowBytesC());
        });
        if (op.m() % y0 != 0) {
            panels(tile, op.m() % y0, bandA, bandC);
        }
    }

    /** One band of rows across every panel: the whole panels in a loop, then the narrow last one. */
    private void panels(Tile tile, int rows, int bandA, int bandC) {
        int panel = i32("panel"), panelC = i32("panelC"), panelScale = i32("panelScale");
        f.localGet(PARAM_B).localSet(panel);
        f.localGet(bandC).localSet(panelC);
        f.localGet(PARAM_B_SCALE).localSet(panelScale);
        int panelBytes = panelBytes(op, schedule);
        Loops.repeat(f, Trips.fixed(op.n() / x0), i32("panel.counter"), () -> {
            tile.emit(rows, x0, bandA, panel, panelC, panelScale);
            Loops.add(f, panel, panelBytes);
            Loops.add(f, panelC, x0 * FLOAT_BYTES);
            Loops.add(f, panelScale, x0 * FLOAT_BYTES);
        });
        if (op.n() % x0 != 0) {
            tile.emit(rows, op.n() % x0, bandA, panel, panelC, panelScale);
        }
    }

    /** A register tile: its sums, its k loop, its epilogue and store. */
    private final class Tile {

        private final int zero;
        private final int zeroScalar;
        private final int scale;
        private final int pA = i32("tile.pA");
        private final int pB = i32("tile.pB");
        private final int counter = i32("tile.counter");

        Tile(int zero, int zeroScalar, int scale) {
            this.zero = zero;
            this.zeroScalar = zeroScalar;
            this.scale = scale;
        }

        /** Rows × width of C at {@code c} (width ≤ x0: the panel's real columns; the sums cover x0). */
        void emit(int rows, int width, int a, int b, int c, int scales) {
            int vectors = x0 / LANES;
            int[] sums = pool.group("tile.sums", ValType.V128, rows * vectors);
            f.f32x4Const(0f); // all zero bits: i32 zeros too
            for (int i = 0; i < sums.length - 1; i++) {
                f.localTee(sums[i]);
            }
            f.localSet(sums[sums.length - 1]);
            f.localGet(a).localSet(pA);
            f.localGet(b).localSet(pB);
            Loops.repeat(f, Trips.fixed(pairs / unroll), counter, () -> pairSteps(rows, sums, unroll));
            Loops.repeat(f, Trips.fixed(pairs % unroll), counter, () -> pairSteps(rows, sums, 1));
            if (op.k() % 2 != 0) {
                lastStep(rows, sums);
            }
            store(rows, width, sums, c, scales);
        }

        /** {@code count} k pairs: per row A's pair (less its zero point) in every lane pair, dotted with each B group. */
        private void pairSteps(int rows, int[] sums, int count) {
            for (int p = 0; p < count; p++) {
                for (int row = 0; row < rows; row++) {
                    int pairA = pool.one("tile.pairA", ValType.V128);
                    load(pA, (long) row * op.k() + 2L * p, SimdOpcode.V128_LOAD16_SPLAT, BYTES);
                    f.simd(SimdOpcode.I16X8_EXTEND_LOW_I8X16_U).localGet(zero).simd(SimdOpcode.I16X8_SUB).localSet(pairA);
                    dots(row, sums, pairA, (long) p * x0 * 2);
                }
            }
            Loops.add(f, pA, 2 * count);
            Loops.add(f, pB, count * x0 * 2);
        }

        /** The odd last k: A's value (less its zero point) in the low half of each lane, B's pad of zeros in the high. */
        private void lastStep(int rows, int[] sums) {
            for (int row = 0; row < rows; row++) {
                int pairA = pool.one("tile.pairA", ValType.V128);
                load(pA, (long) row * op.k(), Opcode.I32_LOAD8_U, BYTES);
                f.localGet(zeroScalar).op(Opcode.I32_SUB).i32Const(0xFFFF).op(Opcode.I32_AND)
                        .simd(SimdOpcode.I32X4_SPLAT).localSet(pairA);
                dots(row, sums, pairA, 0);
            }
        }

        private void dots(int row, int[] sums, int pairA, long bOffset) {
            for (int v = 0; v < x0 / LANES; v++) {
                int sum = sums[row * (x0 / LANES) + v];
                f.localGet(sum).localGet(pairA);
                load(pB, bOffset + (long) v * GROUP_BYTES, SimdOpcode.V128_LOAD8X8_S, BYTES);
                f.simd(SimdOpcode.I32X4_DOT_I16X8_S).simd(SimdOpcode.I32X4_ADD).localSet(sum);
            }
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
                            .simd(SimdOpcode.F32X4_MUL).localSet(vector);
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
        address(pointer, offset);
        f.memory(op, arg);
    }

    private void address(int pointer, long offset) {
        f.localGet(pointer);
        offset(offset);
    }

    private void offset(long offset) {
        if (offset != 0) {
            f.i32Const(Math.toIntExact(offset)).op(Opcode.I32_ADD);
        }
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
