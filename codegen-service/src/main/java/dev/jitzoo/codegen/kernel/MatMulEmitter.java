package dev.jitzoo.codegen.kernel;

import dev.jitzoo.codegen.wasm.FunctionBuilder;
import dev.jitzoo.codegen.wasm.Opcode;
import dev.jitzoo.codegen.wasm.SimdOpcode;
import dev.jitzoo.codegen.wasm.ValType;

/**
 * Emits a (batch) matmul straight to Wasm instructions. C is cut into bands of y0 rows; each band
 * into tiles of x0 columns whose y0 x x0 accumulators live in locals (v128 when vectorized, four
 * columns each). Per step of the reduction, each B vector is loaded once and each A element once
 * (splat), then multiplied into every accumulator that needs it. Rows and columns that do not fill
 * a whole tile are done by narrower scalar code, so no access leaves the operands.
 *
 * <p>Shapes are constants: every trip count and every row stride is baked in, and strides reach
 * memory through the memarg offset of the load, not through address arithmetic.
 */
final class MatMulEmitter {

    private static final int F32 = 4;
    static final int PARAM_A = 0;
    static final int PARAM_B = 1;
    static final int PARAM_C = 2;

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f = new FunctionBuilder(3);
    private final int lanes;
    private final int rowBytesA;
    private final int rowBytesB;
    private final int rowBytesC;

    // pointer locals
    private final int aBand = f.local(ValType.I32);
    private final int cBand = f.local(ValType.I32);
    private final int bTile = f.local(ValType.I32);
    private final int cTile = f.local(ValType.I32);
    private final int pA = f.local(ValType.I32);
    private final int pB = f.local(ValType.I32);
    // loop counters, one per nesting level
    private final int batchCount = f.local(ValType.I32);
    private final int bandCount = f.local(ValType.I32);
    private final int tileCount = f.local(ValType.I32);
    private final int kCount = f.local(ValType.I32);
    private final int[] acc;
    private final int[] bVec;
    private final int aSplat;
    private final int scalarAcc = f.local(ValType.F32);

    MatMulEmitter(Op op, Schedule schedule) {
        this.op = op;
        this.schedule = schedule;
        this.lanes = schedule.vectorize() ? 4 : 1;
        this.rowBytesA = op.k() * F32;
        this.rowBytesB = op.n() * F32;
        this.rowBytesC = op.n() * F32;
        ValType lane = schedule.vectorize() ? ValType.V128 : ValType.F32;
        int vectorsPerRow = schedule.x0() / lanes;
        this.acc = new int[schedule.y0() * vectorsPerRow];
        for (int i = 0; i < acc.length; i++) {
            acc[i] = f.local(lane);
        }
        this.bVec = new int[vectorsPerRow];
        for (int i = 0; i < bVec.length; i++) {
            bVec[i] = f.local(lane);
        }
        this.aSplat = f.local(lane);
    }

    FunctionBuilder emit() {
        int y0 = schedule.y0();
        f.repeat(op.batch(), batchCount, () -> {
            f.get(PARAM_A).set(aBand);
            f.get(PARAM_C).set(cBand);
            rowBands(y0, op.m() / y0);
            rowBands(op.m() % y0, 1);
            f.addTo(PARAM_A, op.m() * rowBytesA);
            f.addTo(PARAM_B, op.k() * rowBytesB);
            f.addTo(PARAM_C, op.m() * rowBytesC);
        });
        return f;
    }

    /** {@code count} bands of {@code rows} rows each, starting at aBand/cBand. */
    private void rowBands(int rows, int count) {
        if (rows == 0) {
            return;
        }
        f.repeat(count, bandCount, () -> {
            f.get(PARAM_B).set(bTile);
            f.get(cBand).set(cTile);
            int x0 = schedule.x0();
            f.repeat(op.n() / x0, tileCount, () -> {
                registerTile(rows);
                f.addTo(bTile, x0 * F32);
                f.addTo(cTile, x0 * F32);
            });
            f.repeat(op.n() % x0, tileCount, () -> {
                scalarColumn(rows);
                f.addTo(bTile, F32);
                f.addTo(cTile, F32);
            });
            f.addTo(aBand, rows * rowBytesA);
            f.addTo(cBand, rows * rowBytesC);
        });
    }

    /** C[rows, x0] at cTile = A[rows, :] at aBand times B[:, x0] at bTile. */
    private void registerTile(int rows) {
        int vectors = bVec.length;
        for (int r = 0; r < rows; r++) {
            for (int v = 0; v < vectors; v++) {
                zero(acc[r * vectors + v]);
            }
        }
        f.get(aBand).set(pA);
        f.get(bTile).set(pB);
        int unroll = Math.max(1, Math.min(schedule.unroll(), op.k()));
        f.repeat(op.k() / unroll, kCount, () -> {
            for (int u = 0; u < unroll; u++) {
                reductionStep(rows, u);
            }
            f.addTo(pA, unroll * F32);
            f.addTo(pB, unroll * rowBytesB);
        });
        f.repeat(op.k() % unroll, kCount, () -> {
            reductionStep(rows, 0);
            f.addTo(pA, F32);
            f.addTo(pB, rowBytesB);
        });
        for (int r = 0; r < rows; r++) {
            for (int v = 0; v < vectors; v++) {
                f.get(cTile).get(acc[r * vectors + v]);
                store(r * rowBytesC + v * lanes * F32);
            }
        }
    }

    /** One k: acc[r][v] += A[r, k] * B[k, v], with k = (pA, pB) advanced by {@code u} steps. */
    private void reductionStep(int rows, int u) {
        int vectors = bVec.length;
        for (int v = 0; v < vectors; v++) {
            f.get(pB);
            load(u * rowBytesB + v * lanes * F32);
            f.set(bVec[v]);
        }
        for (int r = 0; r < rows; r++) {
            f.get(pA);
            if (lanes == 4) {
                f.memory(SimdOpcode.V128_LOAD32_SPLAT, r * rowBytesA + u * F32);
            } else {
                f.memory(Opcode.F32_LOAD, r * rowBytesA + u * F32);
            }
            f.set(aSplat);
            for (int v = 0; v < vectors; v++) {
                int a = acc[r * vectors + v];
                f.get(a).get(aSplat).get(bVec[v]);
                if (lanes == 4) {
                    f.simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD);
                } else {
                    f.op(Opcode.F32_MUL).op(Opcode.F32_ADD);
                }
                f.set(a);
            }
        }
    }

    /** One column of C (rows of it) at cTile, by scalar dot products. */
    private void scalarColumn(int rows) {
        for (int r = 0; r < rows; r++) {
            f.f32(0f).set(scalarAcc);
            f.get(aBand).set(pA);
            f.get(bTile).set(pB);
            final int row = r;
            f.repeat(op.k(), kCount, () -> {
                f.get(scalarAcc);
                f.get(pA).memory(Opcode.F32_LOAD, row * rowBytesA);
                f.get(pB).memory(Opcode.F32_LOAD, 0);
                f.op(Opcode.F32_MUL).op(Opcode.F32_ADD).set(scalarAcc);
                f.addTo(pA, F32);
                f.addTo(pB, rowBytesB);
            });
            f.get(cTile).get(scalarAcc).memory(Opcode.F32_STORE, r * rowBytesC);
        }
    }

    private void zero(int local) {
        if (lanes == 4) {
            f.v128Zero();
        } else {
            f.f32(0f);
        }
        f.set(local);
    }

    private void load(int offset) {
        if (lanes == 4) {
            f.memory(SimdOpcode.V128_LOAD, offset);
        } else {
            f.memory(Opcode.F32_LOAD, offset);
        }
    }

    private void store(int offset) {
        if (lanes == 4) {
            f.memory(SimdOpcode.V128_STORE, offset);
        } else {
            f.memory(Opcode.F32_STORE, offset);
        }
    }
}
