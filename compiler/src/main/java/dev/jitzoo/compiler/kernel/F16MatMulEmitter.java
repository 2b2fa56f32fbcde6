package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.HALF_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * The float16-weight matmul ({@code matmul_f16}, docs/kernel-abi.md): C = A × B with B the file's
 * float16 weights {@code [K, N]}, kept 16-bit in memory and widened exactly to float32 in the kernel
 * ({@link Halves}), the float matmul's register tile and epilogue otherwise. Two loop orders:
 * direct, the float matmul's loop nest ({@link MatMulEmitter}) reading B in place, each B vector
 * widened once per k step and shared by the tile's rows (the form for few rows); staged
 * ({@code columnsOuter}, when the call has at least x0 rows), each tile of x0 columns widened once
 * into Work as a packed float panel (K rows of x0 floats), then the float register tile over it for
 * every band of rows, the widening paid once per call. A call of fewer rows runs direct.
 *
 * <pre>
 * staged: for tile of x0 columns (then the N % x0 left)
 *           Work[k][0..w) = widen(B[k][c0..c0 + w)) for every k
 *           for band of y0 rows (then the M % y0 left): the float register tile over Work, epilogue, store
 * </pre>
 */
final class F16MatMulEmitter {

    static final int PARAM_A = 0;
    static final int PARAM_B = 1;
    static final int PARAM_C = 2;
    static final int PARAM_WORK = 3;

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool pool;

    private F16MatMulEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = pool;
    }

    /** The entry {@code (A, B, C, Work[, Bias][, Residual])}. */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(AbiMetadata.operandCount(op)));
        emitInto(op, schedule, f, new LocalPool(f));
        return f;
    }

    /** The rows of {@code op} at the operand parameters as set (a split kernel's unit, {@link RangeEmitter}). */
    static void emitInto(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        InvalidKernelException.refuse(op, schedule, ScheduleRules.f16Problem(schedule.wire()));
        if (schedule.columnsOuter() && op.m() >= schedule.x0()) {
            new F16MatMulEmitter(op, schedule, f, pool).staged();
        } else {
            MatMulEmitter.emitInto(new MatMulPlan(op, schedule.withColumnsOuter(false)), f, pool);
        }
    }

    private void staged() {
        int x0 = schedule.x0();
        int b = i32("tile.b"), c = i32("tile.c");
        f.localGet(PARAM_B).localSet(b);
        f.localGet(PARAM_C).localSet(c);
        Loops.repeat(f, Trips.fixed(op.n() / x0), i32("tile.counter"), () -> {
            tile(x0, b, c);
            Loops.add(f, b, x0 * HALF_BYTES);
            Loops.add(f, c, x0 * FLOAT_BYTES);
        });
        if (op.n() % x0 != 0) {
            tile(op.n() % x0, b, c);
        }
    }

    /** One tile of {@code width} columns at B column {@code b}, C column {@code c}: widened, then every band over it. */
    private void tile(int width, int b, int c) {
        widen(width, b);
        // the widened panel is a packed float B: the float tile reads it
        new RegisterTileEmitter(f, new MatMulPlan(op, schedule.withPackB(true).withColumnsOuter(false)), pool)
                .overBands(PARAM_A, PARAM_WORK, c, width);
    }

    /** Work[k][0..width) = B[k][the tile's columns] as floats, k by k: vectors of four, then single columns. */
    private void widen(int width, int b) {
        int row = i32("widen.row"), work = i32("widen.work"), bits = pool.one("widen.bits", ValType.V128);
        int bit = i32("widen.bit");
        f.localGet(b).localSet(row);
        f.localGet(PARAM_WORK).localSet(work);
        Loops.repeat(f, Trips.fixed(op.k()), i32("widen.counter"), () -> {
            for (int v = 0; v < width / LANES; v++) {
                f.localGet(row);
                offset((long) v * LANES * HALF_BYTES);
                f.memory(SimdOpcode.V128_LOAD16X4_U, new MemArg(1, 0)).localSet(bits);
                f.localGet(work);
                offset((long) v * LANES * FLOAT_BYTES);
                Halves.widenVector(f, bits);
                f.memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
            }
            for (int j = width / LANES * LANES; j < width; j++) {
                f.localGet(row);
                offset((long) j * HALF_BYTES);
                f.memory(Opcode.I32_LOAD16_U, new MemArg(1, 0)).localSet(bit);
                f.localGet(work);
                offset((long) j * FLOAT_BYTES);
                Halves.widenScalar(f, bit);
                f.memory(Opcode.F32_STORE, MemArg.floatAt(0));
            }
            Loops.add(f, row, op.n() * HALF_BYTES);
            Loops.add(f, work, width * FLOAT_BYTES);
        });
    }

    private void offset(long offset) {
        Loops.offset(f, offset);
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
