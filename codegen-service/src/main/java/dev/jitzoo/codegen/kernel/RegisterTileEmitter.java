package dev.jitzoo.codegen.kernel;

import static dev.jitzoo.codegen.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.codegen.kernel.MatMulPlan.LANES;

import dev.jitzoo.codegen.kernel.MatMulPlan.TileShape;
import dev.jitzoo.codegen.wasm.FunctionBuilder;
import dev.jitzoo.codegen.wasm.MemArg;
import dev.jitzoo.codegen.wasm.Opcode;
import dev.jitzoo.codegen.wasm.SimdOpcode;
import dev.jitzoo.codegen.wasm.ValType;

/**
 * Emits one register tile: C[rows, width] at {@code c} = (or +=) A[rows, ks] at {@code a} x B[ks, width]
 * at {@code b}. The sums live in locals for the whole reduction: a v128 per 4 columns and an f32 per
 * leftover column. One register step loads the B values of {@code depth} k steps, then per row
 * broadcasts each A element once (v128.load32_splat) and multiply-adds it into every accumulator of
 * that row. Row and column strides sit in the memarg offsets, so the loop only bumps two pointers.
 */
final class RegisterTileEmitter {

    private final FunctionBuilder f;
    private final MatMulPlan plan;
    private final LocalPool pool;
    private final int pA;
    private final int pB;
    private final int kCounter;
    private final int kTrips;

    RegisterTileEmitter(FunctionBuilder f, MatMulPlan plan, LocalPool pool) {
        this.f = f;
        this.plan = plan;
        this.pool = pool;
        this.pA = pool.one("tile.pA", ValType.I32);
        this.pB = pool.one("tile.pB", ValType.I32);
        this.kCounter = pool.one("tile.kCounter", ValType.I32);
        this.kTrips = pool.one("tile.kTrips", ValType.I32);
    }

    /**
     * @param kSteps        k steps to reduce over, starting at the k the pointers a and b stand at
     * @param firstKBlock   null when this call covers the whole reduction (sums start at 0); otherwise
     *                      pushes an i32 that is true in the first k block, when sums start at 0, and
     *                      false in later blocks, when they continue from what C holds
     */
    void emit(TileShape shape, int a, int b, int c, Trips kSteps, Runnable firstKBlock) {
        if (shape.isEmpty()) {
            return;
        }
        Accumulators acc = new Accumulators(shape);
        if (firstKBlock == null) {
            acc.zero();
        } else {
            firstKBlock.run();
            f.ifThen();
            acc.zero();
            f.elseBranch();
            acc.loadFrom(c);
            f.end();
        }
        f.localGet(a).localSet(pA);
        f.localGet(b).localSet(pB);
        reduce(acc, kSteps);
        acc.storeTo(c);
    }

    /** The k loop: whole trips of copies x depth steps, then the leftover steps one at a time. */
    private void reduce(Accumulators acc, Trips kSteps) {
        int perTrip = plan.copies() * plan.depth();
        if (kSteps instanceof Trips.Fixed fixed) {
            Loops.repeat(f, Trips.fixed(fixed.count() / perTrip), kCounter, () -> steps(acc, plan.copies(), plan.depth()));
            Loops.repeat(f, Trips.fixed(fixed.count() % perTrip), kCounter, () -> steps(acc, 1, 1));
        } else if (kSteps instanceof Trips.InLocal inLocal) {
            if (perTrip > 1) {
                f.localGet(inLocal.local()).i32Const(perTrip).op(Opcode.I32_DIV_U).localSet(kTrips);
                Loops.repeat(f, Trips.inLocal(kTrips), kCounter, () -> steps(acc, plan.copies(), plan.depth()));
                f.localGet(inLocal.local()).i32Const(perTrip).op(Opcode.I32_REM_U).localSet(kTrips);
                Loops.repeat(f, Trips.inLocal(kTrips), kCounter, () -> steps(acc, 1, 1));
            } else {
                Loops.repeat(f, kSteps, kCounter, () -> steps(acc, 1, 1));
            }
        }
    }

    /** {@code copies} register steps of {@code depth} k steps each, then the pointers move past them. */
    private void steps(Accumulators acc, int copies, int depth) {
        for (int copy = 0; copy < copies; copy++) {
            registerStep(acc, copy * depth, depth);
        }
        Loops.add(f, pA, copies * depth * FLOAT_BYTES);
        Loops.add(f, pB, copies * depth * plan.rowBytesB());
    }

    /** k steps [k0, k0 + depth) relative to the pointers: load their B values, then multiply-add row by row. */
    private void registerStep(Accumulators acc, int k0, int depth) {
        TileShape shape = acc.shape;
        int[] bVectors = pool.group("tile.bVectors", ValType.V128, depth * shape.vectors());
        int[] bScalars = pool.group("tile.bScalars", ValType.F32, depth * shape.scalars());
        for (int s = 0; s < depth; s++) {
            long rowOffset = (long) (k0 + s) * plan.rowBytesB();
            for (int v = 0; v < shape.vectors(); v++) {
                f.localGet(pB).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(rowOffset + (long) v * LANES * FLOAT_BYTES));
                f.localSet(bVectors[s * shape.vectors() + v]);
            }
            for (int j = 0; j < shape.scalars(); j++) {
                f.localGet(pB).memory(Opcode.F32_LOAD, MemArg.floatAt(rowOffset + (long) (shape.vectors() * LANES + j) * FLOAT_BYTES));
                f.localSet(bScalars[s * shape.scalars() + j]);
            }
        }
        int aSplat = pool.one("tile.aSplat", ValType.V128);
        int aScalar = pool.one("tile.aScalar", ValType.F32);
        for (int row = 0; row < shape.rows(); row++) {
            for (int s = 0; s < depth; s++) {
                MemArg aAt = MemArg.floatAt((long) row * plan.rowBytesA() + (long) (k0 + s) * FLOAT_BYTES);
                if (shape.vectors() > 0) {
                    f.localGet(pA).memory(SimdOpcode.V128_LOAD32_SPLAT, aAt).localSet(aSplat);
                    if (shape.scalars() > 0) {
                        f.localGet(aSplat).f32x4ExtractLane(0).localSet(aScalar);
                    }
                } else {
                    f.localGet(pA).memory(Opcode.F32_LOAD, aAt).localSet(aScalar);
                }
                for (int v = 0; v < shape.vectors(); v++) {
                    int sum = acc.vector(row, v);
                    f.localGet(sum).localGet(aSplat).localGet(bVectors[s * shape.vectors() + v])
                            .simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(sum);
                }
                for (int j = 0; j < shape.scalars(); j++) {
                    int sum = acc.scalar(row, j);
                    f.localGet(sum).localGet(aScalar).localGet(bScalars[s * shape.scalars() + j])
                            .op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum);
                }
            }
        }
    }

    /** The locals holding a tile's sums, row-major: v128s first, then the single-float columns. */
    private final class Accumulators {

        final TileShape shape;
        final int[] vectors;
        final int[] scalars;

        Accumulators(TileShape shape) {
            this.shape = shape;
            this.vectors = pool.group("tile.accVectors", ValType.V128, shape.rows() * shape.vectors());
            this.scalars = pool.group("tile.accScalars", ValType.F32, shape.rows() * shape.scalars());
        }

        int vector(int row, int v) {
            return vectors[row * shape.vectors() + v];
        }

        int scalar(int row, int j) {
            return scalars[row * shape.scalars() + j];
        }

        /** One constant, passed down a chain of tees: smaller than a v128.const (18 bytes) per sum. */
        void zero() {
            if (vectors.length > 0) {
                f.f32x4Const(0f);
                teeChain(vectors);
            }
            if (scalars.length > 0) {
                f.f32Const(0f);
                teeChain(scalars);
            }
        }

        void loadFrom(int c) {
            forEachCell((local, offset, vector) -> {
                f.localGet(c);
                if (vector) {
                    f.memory(SimdOpcode.V128_LOAD, offset);
                } else {
                    f.memory(Opcode.F32_LOAD, offset);
                }
                f.localSet(local);
            });
        }

        void storeTo(int c) {
            forEachCell((local, offset, vector) -> {
                f.localGet(c).localGet(local);
                if (vector) {
                    f.memory(SimdOpcode.V128_STORE, offset);
                } else {
                    f.memory(Opcode.F32_STORE, offset);
                }
            });
        }

        private void teeChain(int[] locals) {
            for (int i = 0; i < locals.length - 1; i++) {
                f.localTee(locals[i]);
            }
            f.localSet(locals[locals.length - 1]);
        }

        private void forEachCell(CellAction action) {
            for (int row = 0; row < shape.rows(); row++) {
                long rowOffset = (long) row * plan.rowBytesC();
                for (int v = 0; v < shape.vectors(); v++) {
                    action.apply(vector(row, v), MemArg.floatAt(rowOffset + (long) v * LANES * FLOAT_BYTES), true);
                }
                for (int j = 0; j < shape.scalars(); j++) {
                    long column = (long) shape.vectors() * LANES + j;
                    action.apply(scalar(row, j), MemArg.floatAt(rowOffset + column * FLOAT_BYTES), false);
                }
            }
        }
    }

    @FunctionalInterface
    private interface CellAction {
        void apply(int local, MemArg offset, boolean vector);
    }
}
