package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.kernel.MatMulPlan.TileShape;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Instruction;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;

/**
 * Emits one register tile: C[rows, width] at {@code c} = (or +=) A[rows, ks] at {@code a} x B[ks, width]
 * at {@code b}. The sums live in locals for the whole reduction: a v128 per 4 columns and an f32 per
 * leftover column. One register step covers {@code depth} k steps; per row each A element is
 * broadcast and multiply-added into every accumulator of that row; when a trip holds several k
 * steps of a whole-vector tile (unroll, r0) without relaxed madd, each accumulator instead takes the
 * pairwise sum of that trip's products in one add ({@link #summedSteps}). Strides are constants
 * added to two pointers, so the loop only bumps those pointers.
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
        if (firstKBlock == null && !plan.op().epilogue().isEmpty()) {
            acc.applyEpilogue(c);
        }
        acc.storeTo(c);
    }

    /**
     * A staged tile's bands: every y0 rows of A (from {@code a}, to the last M % y0) over a packed
     * float panel {@code width} columns wide at {@code panel} (a tile of weights widened, or a
     * convolution's windows gathered, into Work), into C from {@code c}, the epilogue included.
     */
    void overBands(int a, int panel, int c, int width) {
        int m = plan.op().m(), y0 = plan.schedule().y0();
        int bandA = pool.one("bandA", ValType.I32), bandC = pool.one("bandC", ValType.I32);
        f.localGet(a).localSet(bandA);
        f.localGet(c).localSet(bandC);
        Loops.repeat(f, Trips.fixed(m / y0), pool.one("band.counter", ValType.I32), () -> {
            emit(new TileShape(y0, width / LANES, width % LANES), bandA, panel, bandC, Trips.fixed(plan.op().k()), null);
            Loops.add(f, bandA, y0 * plan.rowBytesA());
            Loops.add(f, bandC, y0 * plan.rowBytesC());
        });
        if (m % y0 != 0) {
            emit(new TileShape(m % y0, width / LANES, width % LANES), bandA, panel, bandC, Trips.fixed(plan.op().k()), null);
        }
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
        int count = copies * depth;
        if (plan.widensB()) {
            for (int copy = 0; copy < copies; copy++) {
                widenedStep(acc, copy * depth, depth);
            }
        } else if (count > 1 && !plan.schedule().relaxedSimd() && acc.shape.scalars() == 0) {
            summedSteps(acc, count);
        } else {
            for (int copy = 0; copy < copies; copy++) {
                registerStep(acc, copy * depth, depth);
            }
        }
        Loops.add(f, pA, copies * depth * FLOAT_BYTES);
        Loops.add(f, pB, copies * depth * plan.bRowBytes(acc.shape.width()));
    }

    /**
     * k steps [k0, k0 + depth) relative to the pointers, row by row: every sum takes its A element
     * (broadcast) times its B value. Written the plain way, one load per operand use at an address
     * computed in full; the passes turn the constants into memarg offsets, the load and splat into
     * {@code v128.load32_splat}, and repeated loads into locals (each A element and B vector loaded
     * once per step).
     */
    private void registerStep(Accumulators acc, int k0, int depth) {
        TileShape shape = acc.shape;
        int bRowBytes = plan.bRowBytes(shape.width());
        long bColumnBytes = plan.bColumnBytes();
        for (int row = 0; row < shape.rows(); row++) {
            for (int s = 0; s < depth; s++) {
                long aOffset = (long) row * plan.rowBytesA() + (long) (k0 + s) * FLOAT_BYTES;
                long bOffset = (long) (k0 + s) * bRowBytes;
                for (int v = 0; v < shape.vectors(); v++) {
                    int sum = acc.vector(row, v);
                    if (plan.schedule().relaxedSimd()) {
                        broadcast(aOffset);
                        load(pB, bOffset + v * LANES * bColumnBytes, SimdOpcode.V128_LOAD);
                        f.localGet(sum).simd(SimdOpcode.F32X4_RELAXED_MADD).localSet(sum);
                    } else {
                        f.localGet(sum);
                        broadcast(aOffset);
                        load(pB, bOffset + v * LANES * bColumnBytes, SimdOpcode.V128_LOAD);
                        f.simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(sum);
                    }
                }
                for (int j = 0; j < shape.scalars(); j++) {
                    int sum = acc.scalar(row, j);
                    f.localGet(sum);
                    load(pA, aOffset, Opcode.F32_LOAD);
                    load(pB, bOffset + (shape.vectors() * LANES + j) * bColumnBytes, Opcode.F32_LOAD);
                    f.op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum);
                }
            }
        }
    }

    /**
     * k steps [k0, k0 + depth) over a float16 B read in place: per step, each of the tile's B vectors
     * (and single columns) widened once into a local, then every row multiply-adds with it.
     */
    private void widenedStep(Accumulators acc, int k0, int depth) {
        TileShape shape = acc.shape;
        int bRowBytes = plan.bRowBytes(shape.width());
        long bColumnBytes = plan.bColumnBytes();
        int[] wide = pool.group("tile.wideB", ValType.V128, shape.vectors());
        int[] single = pool.group("tile.singleB", ValType.F32, shape.scalars());
        int bits = pool.one("tile.halfBits", ValType.V128), scalarBits = pool.one("tile.halfBit", ValType.I32);
        for (int s = 0; s < depth; s++) {
            long bOffset = (long) (k0 + s) * bRowBytes;
            for (int v = 0; v < shape.vectors(); v++) {
                address(pB, bOffset + v * LANES * bColumnBytes);
                f.memory(SimdOpcode.V128_LOAD16X4_U, new MemArg(1, 0)).localSet(bits); // two-byte aligned: a row of N halves
                Halves.widenVector(f, bits);
                f.localSet(wide[v]);
            }
            for (int j = 0; j < shape.scalars(); j++) {
                address(pB, bOffset + (shape.vectors() * LANES + j) * bColumnBytes);
                f.memory(Opcode.I32_LOAD16_U, new MemArg(1, 0)).localSet(scalarBits);
                Halves.widenScalar(f, scalarBits);
                f.localSet(single[j]);
            }
            for (int row = 0; row < shape.rows(); row++) {
                long aOffset = (long) row * plan.rowBytesA() + (long) (k0 + s) * FLOAT_BYTES;
                for (int v = 0; v < shape.vectors(); v++) {
                    int sum = acc.vector(row, v);
                    f.localGet(sum);
                    broadcast(aOffset);
                    f.localGet(wide[v]).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(sum);
                }
                for (int j = 0; j < shape.scalars(); j++) {
                    int sum = acc.scalar(row, j);
                    f.localGet(sum);
                    load(pA, aOffset, Opcode.F32_LOAD);
                    f.localGet(single[j]).op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum);
                }
            }
        }
    }

    /**
     * k steps [0, count) at once, for tiles of whole vectors: each sum adds the pairwise sum of its
     * {@code count} products in one {@code f32x4.add}, so the loop-carried chain through a sum is
     * one add per trip, not {@code count}. (The products are independent; the engine overlaps them.)
     */
    private void summedSteps(Accumulators acc, int count) {
        TileShape shape = acc.shape;
        for (int row = 0; row < shape.rows(); row++) {
            for (int v = 0; v < shape.vectors(); v++) {
                int sum = acc.vector(row, v);
                f.localGet(sum);
                products(shape, row, v, 0, count);
                f.simd(SimdOpcode.F32X4_ADD).localSet(sum);
            }
        }
    }

    /** Pushes the pairwise sum of the products of k steps [from, to) for one vector of one row. */
    private void products(TileShape shape, int row, int v, int from, int to) {
        if (to - from == 1) {
            broadcast((long) row * plan.rowBytesA() + (long) from * FLOAT_BYTES);
            load(pB, (long) from * plan.bRowBytes(shape.width()) + v * LANES * plan.bColumnBytes(), SimdOpcode.V128_LOAD);
            f.simd(SimdOpcode.F32X4_MUL);
            return;
        }
        int middle = (from + to) >>> 1;
        products(shape, row, v, from, middle);
        products(shape, row, v, middle, to);
        f.simd(SimdOpcode.F32X4_ADD);
    }

    /** Pushes the A element at {@code pA + offset} in all four lanes. */
    private void broadcast(long offset) {
        load(pA, offset, Opcode.F32_LOAD);
        f.simd(SimdOpcode.F32X4_SPLAT);
    }

    /** Pushes the value at {@code pointer + offset}: the address computed in full, memarg offset 0. */
    private void load(int pointer, long offset, Instruction op) {
        address(pointer, offset);
        f.memory(op, MemArg.floatAt(0));
    }

    private void address(int pointer, long offset) {
        f.localGet(pointer);
        if (offset != 0) {
            f.i32Const(Math.toIntExact(offset)).op(Opcode.I32_ADD);
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
                load(c, offset, vector ? SimdOpcode.V128_LOAD : Opcode.F32_LOAD);
                f.localSet(local);
            });
        }

        /**
         * The op's epilogue on every sum before it is stored. This tile's column is where {@code c}
         * stands in its row of C; Residual is shaped like C, so it sits at the same distance from its base.
         */
        void applyEpilogue(int c) {
            int cBase = plan.param("C");
            int biasAt = pool.one("tile.biasAt", ValType.I32);
            int residualAt = pool.one("tile.residualAt", ValType.I32);
            if (plan.op().fuses(Epilogue.Kind.BIAS) && plan.biasPerRow()) {
                // C is [N, M, OH, OW]: the tile's first row is output channel ((c - C) / row) mod M
                f.localGet(c).localGet(cBase).op(Opcode.I32_SUB).i32Const(plan.rowBytesC()).op(Opcode.I32_DIV_U)
                        .i32Const(plan.abi().dims().get(4)).op(Opcode.I32_REM_U).i32Const(FLOAT_BYTES).op(Opcode.I32_MUL)
                        .localGet(plan.param("Bias")).op(Opcode.I32_ADD).localSet(biasAt);
            } else if (plan.op().fuses(Epilogue.Kind.BIAS)) {
                f.localGet(c).localGet(cBase).op(Opcode.I32_SUB).i32Const(plan.rowBytesC()).op(Opcode.I32_REM_U)
                        .localGet(plan.param("Bias")).op(Opcode.I32_ADD).localSet(biasAt);
            }
            if (plan.op().fuses(Epilogue.Kind.RESIDUAL)) {
                f.localGet(c).localGet(cBase).op(Opcode.I32_SUB).localGet(plan.param("Residual")).op(Opcode.I32_ADD)
                        .localSet(residualAt);
            }
            forEachCell((local, offset, vector) -> {
                long biasOffset = plan.biasPerRow() ? offset / plan.rowBytesC() * FLOAT_BYTES : offset % plan.rowBytesC();
                EpilogueEmitter.apply(f, pool, plan.op(), vector, local, new EpilogueEmitter.Operands() {
                    @Override
                    public void pushBias() {
                        address(biasAt, biasOffset);
                    }

                    @Override
                    public boolean biasBroadcast() {
                        return plan.biasPerRow();
                    }

                    @Override
                    public void pushResidual() {
                        address(residualAt, offset);
                    }
                });
            });
        }

        void storeTo(int c) {
            forEachCell((local, offset, vector) -> {
                address(c, offset);
                f.localGet(local).memory(vector ? SimdOpcode.V128_STORE : Opcode.F32_STORE, MemArg.floatAt(0));
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
                    action.apply(vector(row, v), rowOffset + (long) v * LANES * FLOAT_BYTES, true);
                }
                for (int j = 0; j < shape.scalars(); j++) {
                    long column = (long) shape.vectors() * LANES + j;
                    action.apply(scalar(row, j), rowOffset + column * FLOAT_BYTES, false);
                }
            }
        }
    }

    @FunctionalInterface
    private interface CellAction {
        void apply(int local, long offset, boolean vector);
    }
}
