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

/**
 * Emits {@code pack_b(src, dst)}: B[K, N] (per batch, once when shared; read as [N, K] when
 * transposed) rewritten as panels, one per x0-wide column
 * tile and one for the N % x0 columns left over, each K rows of its width stored contiguously. The
 * kernel then reads B at a stride of one panel row instead of N floats, one cache line after the
 * next. Run once when the weights are loaded; {@code dst} holds as many floats as B.
 */
final class PackEmitter {

    static final String ENTRY = "pack_b";
    private static final int SRC = 0;
    private static final int DST = 1;

    private final MatMulPlan plan;
    private final FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
    private final LocalPool locals = new LocalPool(f);

    private PackEmitter(MatMulPlan plan) {
        this.plan = plan;
    }

    static FunctionBuilder emit(MatMulPlan plan) {
        return new PackEmitter(plan).body();
    }

    private FunctionBuilder body() {
        Op op = plan.op();
        int x0 = plan.schedule().x0();
        int column = i32("column"), from = i32("from");
        int columnBytes = op.transposeB() ? op.k() * FLOAT_BYTES : FLOAT_BYTES;
        Loops.repeat(f, Trips.fixed(op.broadcastB() ? 1 : op.batch()), i32("batch.counter"), () -> {
            f.localGet(SRC).localSet(column);
            Loops.repeat(f, Trips.fixed(op.n() / x0), i32("tile.counter"), () -> {
                panel(x0, column, from);
                Loops.add(f, column, x0 * columnBytes);
            });
            panel(op.n() % x0, column, from);
            Loops.add(f, SRC, op.k() * op.n() * FLOAT_BYTES);
        });
        return f;
    }

    /** Copies the {@code width} columns starting at {@code column}, K rows, to {@code dst}, which moves past them. */
    private void panel(int width, int column, int from) {
        if (width == 0) {
            return;
        }
        Op op = plan.op();
        // a row of B is N floats on; in a transposed B, [N, K], the next k is the next float
        int rowBytes = op.transposeB() ? FLOAT_BYTES : op.n() * FLOAT_BYTES;
        int columnBytes = op.transposeB() ? op.k() * FLOAT_BYTES : FLOAT_BYTES;
        f.localGet(column).localSet(from);
        Loops.repeat(f, Trips.fixed(op.k()), i32("k.counter"), () -> {
            int vectors = plan.schedule().vectorize() && !op.transposeB() ? width / LANES : 0;
            for (int v = 0; v < vectors; v++) {
                copy(v * LANES * FLOAT_BYTES, v * LANES * FLOAT_BYTES, SimdOpcode.V128_LOAD, SimdOpcode.V128_STORE, from);
            }
            for (int j = vectors * LANES; j < width; j++) {
                copy(j * FLOAT_BYTES, j * columnBytes, Opcode.F32_LOAD, Opcode.F32_STORE, from);
            }
            Loops.add(f, from, rowBytes);
            Loops.add(f, DST, width * FLOAT_BYTES);
        });
    }

    private void copy(int to, int offset, Instruction load, Instruction store, int from) {
        f.localGet(DST);
        if (to != 0) {
            f.i32Const(to).op(Opcode.I32_ADD);
        }
        f.localGet(from);
        if (offset != 0) {
            f.i32Const(offset).op(Opcode.I32_ADD);
        }
        f.memory(load, MemArg.floatAt(0)).memory(store, MemArg.floatAt(0));
    }

    private int i32(String role) {
        return locals.one(role, ValType.I32);
    }
}
