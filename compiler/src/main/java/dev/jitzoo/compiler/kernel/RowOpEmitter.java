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
import java.util.function.IntConsumer;

/**
 * Emits the element-wise and row ops a transformer layer needs besides its matmuls: add and mul
 * over [n], softmax and layer norm over the last axis of [rows, cols]. Their schedule is
 * {@code vectorize} (four elements per v128) and {@code unroll} (vectors per loop trip); what is
 * left over past the whole vectors runs one float at a time. Softmax's exp is computed on v128s
 * (range reduction by ln 2, a degree-6 polynomial, the exponent built in the float's bits), within
 * 2e-7 relative of the exact function; a lone float goes through it in lane 0.
 */
final class RowOpEmitter {

    private static final float LOG2E = 1.44269504088896341f;
    private static final float LN2_HI = 0.693359375f;
    private static final float LN2_LO = -2.12194440e-4f;
    /** exp(x) for x below this is under float's normal range; above the upper bound it overflows. */
    private static final float EXP_MIN = -87.33654f;
    private static final float EXP_MAX = 88.0f;
    private static final float[] EXP_TAYLOR = {1f, 1f, 1f / 2, 1f / 6, 1f / 24, 1f / 120, 1f / 720};

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool locals;

    private RowOpEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool locals) {
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.locals = locals;
    }

    /** The entry {@code (a, ..., c)} computing the whole op. */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(AbiMetadata.operandShapes(op).size()));
        emitInto(op, schedule, f, new LocalPool(f));
        return f;
    }

    /** The whole op's code written into {@code f}, whose first parameters are the operands' offsets. */
    static void emitInto(Op op, Schedule schedule, FunctionBuilder f, LocalPool locals) {
        schedule.checkRowOp(op);
        RowOpEmitter e = new RowOpEmitter(op, schedule, f, locals);
        switch (op.kind()) {
            case ADD -> e.elementwise(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
            case MUL -> e.elementwise(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
            case SOFTMAX -> e.softmax();
            case LAYER_NORM -> e.layerNorm();
            default -> throw new IllegalArgumentException(op.kind() + " is not a row op");
        }
    }

    // ---- the ops ----

    /** C = A (op) B: params a, b, c. */
    private void elementwise(SimdOpcode wide, Opcode narrow) {
        int a = 0, b = 1, c = 2;
        overRow(op.dims().get(0), new int[] {a, b, c}, offset -> {
            address(c, offset);
            load(a, offset, SimdOpcode.V128_LOAD);
            load(b, offset, SimdOpcode.V128_LOAD);
            f.simd(wide).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
        }, offset -> {
            address(c, offset);
            load(a, offset, Opcode.F32_LOAD);
            load(b, offset, Opcode.F32_LOAD);
            f.op(narrow).memory(Opcode.F32_STORE, MemArg.floatAt(0));
        });
    }

    /** Per row: the max, then exp(x - max) into C with its sum, then C times 1 / sum. Params a, c. */
    private void softmax() {
        int a = 0, c = 1;
        int vMax = v128("softmax.vMax"), vSum = v128("softmax.vSum"), x = v128("softmax.x");
        int max = f32("softmax.max"), sum = f32("softmax.sum");
        overRows(new int[] {a, c}, () -> {
            f.f32x4Const(Float.NEGATIVE_INFINITY).localSet(vMax);
            f.f32Const(Float.NEGATIVE_INFINITY).localSet(max);
            overRow(op.cols(), new int[] {a}, offset -> {
                f.localGet(vMax);
                load(a, offset, SimdOpcode.V128_LOAD);
                f.simd(SimdOpcode.F32X4_MAX).localSet(vMax);
            }, offset -> {
                f.localGet(max);
                load(a, offset, Opcode.F32_LOAD);
                f.op(Opcode.F32_MAX).localSet(max);
            });
            horizontal(vMax, Opcode.F32_MAX, max);

            f.f32x4Const(0f).localSet(vSum);
            f.f32Const(0f).localSet(sum);
            overRow(op.cols(), new int[] {a, c}, offset -> {
                load(a, offset, SimdOpcode.V128_LOAD);
                f.localGet(max).simd(SimdOpcode.F32X4_SPLAT).simd(SimdOpcode.F32X4_SUB).localSet(x);
                exp(x);
                f.localSet(x);
                address(c, offset);
                f.localGet(x).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
                f.localGet(vSum).localGet(x).simd(SimdOpcode.F32X4_ADD).localSet(vSum);
            }, offset -> {
                load(a, offset, Opcode.F32_LOAD);
                f.localGet(max).op(Opcode.F32_SUB).simd(SimdOpcode.F32X4_SPLAT).localSet(x);
                exp(x);
                f.f32x4ExtractLane(0).localSet(scalarTemp());
                address(c, offset);
                f.localGet(scalarTemp()).memory(Opcode.F32_STORE, MemArg.floatAt(0));
                f.localGet(sum).localGet(scalarTemp()).op(Opcode.F32_ADD).localSet(sum);
            });
            horizontal(vSum, Opcode.F32_ADD, sum);

            f.f32Const(1f).localGet(sum).op(Opcode.F32_DIV).localSet(sum);
            f.localGet(sum).simd(SimdOpcode.F32X4_SPLAT).localSet(vSum);
            overRow(op.cols(), new int[] {c}, offset -> {
                address(c, offset);
                load(c, offset, SimdOpcode.V128_LOAD);
                f.localGet(vSum).simd(SimdOpcode.F32X4_MUL).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
            }, offset -> {
                address(c, offset);
                load(c, offset, Opcode.F32_LOAD);
                f.localGet(sum).op(Opcode.F32_MUL).memory(Opcode.F32_STORE, MemArg.floatAt(0));
            });
        });
    }

    /** Per row: mean, variance about it, then (x - mean) / sqrt(variance + eps) * Gamma + Beta. Params a, gamma, beta, c. */
    private void layerNorm() {
        int a = 0, gamma = 1, beta = 2, c = 3;
        int vAcc = v128("norm.vAcc"), vMean = v128("norm.vMean"), vScale = v128("norm.vScale"), d = v128("norm.d");
        int mean = f32("norm.mean"), acc = f32("norm.acc"), scale = f32("norm.scale"), ds = f32("norm.ds");
        int g = i32("norm.gamma"), bt = i32("norm.beta");
        float perCol = 1f / op.cols();
        overRows(new int[] {a, c}, () -> {
            // mean
            f.f32x4Const(0f).localSet(vAcc);
            f.f32Const(0f).localSet(acc);
            overRow(op.cols(), new int[] {a}, offset -> {
                f.localGet(vAcc);
                load(a, offset, SimdOpcode.V128_LOAD);
                f.simd(SimdOpcode.F32X4_ADD).localSet(vAcc);
            }, offset -> {
                f.localGet(acc);
                load(a, offset, Opcode.F32_LOAD);
                f.op(Opcode.F32_ADD).localSet(acc);
            });
            horizontal(vAcc, Opcode.F32_ADD, acc);
            f.localGet(acc).f32Const(perCol).op(Opcode.F32_MUL).localSet(mean);
            f.localGet(mean).simd(SimdOpcode.F32X4_SPLAT).localSet(vMean);
            // variance
            f.f32x4Const(0f).localSet(vAcc);
            f.f32Const(0f).localSet(acc);
            overRow(op.cols(), new int[] {a}, offset -> {
                load(a, offset, SimdOpcode.V128_LOAD);
                f.localGet(vMean).simd(SimdOpcode.F32X4_SUB).localTee(d).localGet(d).simd(SimdOpcode.F32X4_MUL);
                f.localGet(vAcc).simd(SimdOpcode.F32X4_ADD).localSet(vAcc);
            }, offset -> {
                load(a, offset, Opcode.F32_LOAD);
                f.localGet(mean).op(Opcode.F32_SUB).localTee(ds).localGet(ds).op(Opcode.F32_MUL);
                f.localGet(acc).op(Opcode.F32_ADD).localSet(acc);
            });
            horizontal(vAcc, Opcode.F32_ADD, acc);
            f.f32Const(1f).localGet(acc).f32Const(perCol).op(Opcode.F32_MUL).f32Const(op.layerNormEpsilon()).op(Opcode.F32_ADD)
                    .op(Opcode.F32_SQRT).op(Opcode.F32_DIV).localSet(scale);
            f.localGet(scale).simd(SimdOpcode.F32X4_SPLAT).localSet(vScale);
            // normalize
            f.localGet(gamma).localSet(g);
            f.localGet(beta).localSet(bt);
            overRow(op.cols(), new int[] {a, c, g, bt}, offset -> {
                address(c, offset);
                load(a, offset, SimdOpcode.V128_LOAD);
                f.localGet(vMean).simd(SimdOpcode.F32X4_SUB).localGet(vScale).simd(SimdOpcode.F32X4_MUL);
                load(g, offset, SimdOpcode.V128_LOAD);
                f.simd(SimdOpcode.F32X4_MUL);
                load(bt, offset, SimdOpcode.V128_LOAD);
                f.simd(SimdOpcode.F32X4_ADD).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
            }, offset -> {
                address(c, offset);
                load(a, offset, Opcode.F32_LOAD);
                f.localGet(mean).op(Opcode.F32_SUB).localGet(scale).op(Opcode.F32_MUL);
                load(g, offset, Opcode.F32_LOAD);
                f.op(Opcode.F32_MUL);
                load(bt, offset, Opcode.F32_LOAD);
                f.op(Opcode.F32_ADD).memory(Opcode.F32_STORE, MemArg.floatAt(0));
            });
        });
    }

    // ---- loops ----

    /** {@code body} once per row; then the row pointers move on by one row. Params are the row pointers. */
    private void overRows(int[] rowPointers, Runnable body) {
        Loops.repeat(f, Trips.fixed(op.rows()), i32("row.counter"), () -> {
            body.run();
            for (int pointer : rowPointers) {
                Loops.add(f, pointer, op.cols() * FLOAT_BYTES);
            }
        });
    }

    /**
     * One pass over {@code count} floats: whole v128s, {@code unroll} per trip, then single floats.
     * The bodies get a byte offset from the {@code pointers}, which move along the row and are
     * moved back to where they started at the end.
     */
    private void overRow(int count, int[] pointers, IntConsumer vectorAt, IntConsumer scalarAt) {
        int vectors = schedule.vectorize() ? count / LANES : 0;
        int perTrip = Math.max(1, schedule.unroll());
        trips(vectors / perTrip, perTrip, LANES, pointers, vectorAt);
        trips(vectors % perTrip > 0 ? 1 : 0, vectors % perTrip, LANES, pointers, vectorAt);
        int scalars = count - vectors * LANES;
        trips(scalars / perTrip, perTrip, 1, pointers, scalarAt);
        trips(scalars % perTrip > 0 ? 1 : 0, scalars % perTrip, 1, pointers, scalarAt);
        for (int pointer : pointers) {
            Loops.add(f, pointer, -count * FLOAT_BYTES);
        }
    }

    /** {@code count} trips of {@code copies} bodies {@code width} floats apart; the cursors move past each trip. */
    private void trips(int count, int copies, int width, int[] cursors, IntConsumer body) {
        Loops.repeat(f, Trips.fixed(count), i32("trip.counter." + width), () -> {
            for (int copy = 0; copy < copies; copy++) {
                body.accept(copy * width * FLOAT_BYTES);
            }
            for (int cursor : cursors) {
                Loops.add(f, cursor, copies * width * FLOAT_BYTES);
            }
        });
    }

    // ---- helpers ----

    /** Pushes exp of the v128 in local {@code x}; leaves {@code x} changed. */
    private void exp(int x) {
        int n = v128("exp.n");
        f.localGet(x).f32x4Const(EXP_MIN).simd(SimdOpcode.F32X4_MAX).f32x4Const(EXP_MAX).simd(SimdOpcode.F32X4_MIN)
                .localTee(x);
        f.f32x4Const(LOG2E).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_NEAREST).localSet(n);
        // r = x - n ln2, in two parts so that r keeps its low bits
        f.localGet(x).localGet(n).f32x4Const(LN2_HI).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_SUB)
                .localGet(n).f32x4Const(LN2_LO).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_SUB).localSet(x);
        f.f32x4Const(EXP_TAYLOR[EXP_TAYLOR.length - 1]);
        for (int i = EXP_TAYLOR.length - 2; i >= 0; i--) {
            f.localGet(x).simd(SimdOpcode.F32X4_MUL).f32x4Const(EXP_TAYLOR[i]).simd(SimdOpcode.F32X4_ADD);
        }
        // times 2^n: (n + 127) << 23 is the bit pattern of 2^n
        f.localGet(n).simd(SimdOpcode.I32X4_TRUNC_SAT_F32X4_S).f32x4Const(Float.intBitsToFloat(127))
                .simd(SimdOpcode.I32X4_ADD).i32Const(23).simd(SimdOpcode.I32X4_SHL).simd(SimdOpcode.F32X4_MUL);
    }

    /** {@code into = into (op) lane0 (op) lane1 (op) lane2 (op) lane3} of the v128 in {@code vector}. */
    private void horizontal(int vector, Opcode op, int into) {
        for (int lane = 0; lane < LANES; lane++) {
            f.localGet(into).localGet(vector).f32x4ExtractLane(lane).op(op).localSet(into);
        }
    }

    private void load(int pointer, int offset, Instruction op) {
        address(pointer, offset);
        f.memory(op, MemArg.floatAt(0));
    }

    private void address(int pointer, int offset) {
        f.localGet(pointer);
        if (offset != 0) {
            f.i32Const(offset).op(Opcode.I32_ADD);
        }
    }

    private int scalarTemp() {
        return f32("scalar.temp");
    }

    private int v128(String role) {
        return locals.one(role, ValType.V128);
    }

    private int f32(String role) {
        return locals.one(role, ValType.F32);
    }

    private int i32(String role) {
        return locals.one(role, ValType.I32);
    }
}
