package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;

import dev.jitzoo.compiler.kernel.MatMulPlan.Blocking;
import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;
import java.util.function.Consumer;

/**
 * Emits the body of a (batch) matmul entry {@code (a, b, c)}: per batch, the interior as a loop nest
 * over cache blocks then register tiles, then the right and bottom edges with narrower tiles.
 *
 * <pre>
 * for each batch
 *   for row block (y1)  for column block (x1)  for k block (r1)      interior
 *     for band of y0 rows  for tile of x0 columns  register tile over the k block
 *     (columnsOuter: column block, row block, k block, tile, band)
 *   for band of y0 rows: tile of N%x0 columns over all of K          right edge
 *   for tile of x0 columns, then N%x0: tile of M%y0 rows over all K   bottom edge
 * </pre>
 *
 * Shapes are constants, so every loop has a fixed trip count except where a cache tile does not
 * divide its axis: there the last block is shorter, and its length is computed at run time once per
 * block. Pointers advance by constant strides and are read only where they address an operand
 * (after its last use a pointer may step past the end, never to be dereferenced).
 */
final class MatMulEmitter {

    static final int PARAM_A = 0;
    static final int PARAM_B = 1;
    static final int PARAM_C = 2;

    private final MatMulPlan plan;
    private final FunctionBuilder f;
    private final LocalPool locals;
    private final RegisterTileEmitter tiles;

    private MatMulEmitter(MatMulPlan plan, FunctionBuilder f, LocalPool locals) {
        this.plan = plan;
        this.f = f;
        this.locals = locals;
        this.tiles = new RegisterTileEmitter(f, plan, locals);
    }

    /** The entry {@code (a, b, c, ...)} computing the whole op. */
    static FunctionBuilder emit(MatMulPlan plan) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(plan.operands().size()));
        return new MatMulEmitter(plan, f, new LocalPool(f)).body();
    }

    /**
     * The whole op's code written into {@code f}, whose first parameters are the operands' offsets
     * (it may move them): how a split kernel computes one unit ({@link RangeEmitter}).
     */
    static void emitInto(MatMulPlan plan, FunctionBuilder f, LocalPool locals) {
        new MatMulEmitter(plan, f, locals).body();
    }

    private FunctionBuilder body() {
        Op op = plan.op();
        Loops.repeat(f, Trips.fixed(op.batch()), i32("batch.counter"), () -> {
            interior();
            if (plan.interiorEpilogueAfterwards()) {
                interiorEpilogue();
            }
            rightEdge();
            bottomEdge();
            Loops.add(f, PARAM_A, op.m() * plan.rowBytesA());
            Loops.add(f, PARAM_B, plan.bBatchBytes());
            Loops.add(f, PARAM_C, op.m() * plan.rowBytesC());
            if (op.fuses(Epilogue.Kind.RESIDUAL)) {
                Loops.add(f, plan.param("Residual"), op.m() * plan.rowBytesC());
            }
        });
        return f;
    }

    /**
     * One axis of the interior as the loop nest walks it: rows (bands of y0, moving A and C) or
     * columns (tiles of x0, moving B and C). {@code unitBytes} and {@code cUnitBytes} step the operand
     * and C pointers by one unit, {@code kBytes} steps the operand by one k step.
     */
    private record Axis(Blocking blocking, int operand, int unitBytes, int cUnitBytes, int kBytes, String role) {
    }

    /**
     * Whole register tiles, in cache blocks. Rows outside (default): row block, column block, k block,
     * band, tile; with {@code columnsOuter} the two axes trade places at both levels: column block,
     * row block, k block, tile, band.
     */
    private void interior() {
        Axis rows = new Axis(plan.rowBands(), PARAM_A, plan.schedule().y0() * plan.rowBytesA(),
                plan.schedule().y0() * plan.rowBytesC(), FLOAT_BYTES, "band");
        Axis columns = new Axis(plan.columnTiles(), PARAM_B, plan.bTileBytes(),
                plan.schedule().x0() * FLOAT_BYTES, plan.bRowBytes(plan.schedule().x0()), "tile");
        if (rows.blocking().units() == 0 || columns.blocking().units() == 0) {
            return;
        }
        boolean columnsOuter = plan.schedule().columnsOuter();
        Axis outer = columnsOuter ? columns : rows;
        Axis inner = columnsOuter ? rows : columns;
        Blocking reduction = plan.reduction();
        int outerBlock = i32(outer.role() + "Block.operand"), outerBlockC = i32("outerBlock.c");
        int innerBlock = i32(inner.role() + "Block.operand"), innerBlockC = i32("innerBlock.c");
        int outerK = i32(outer.role() + "KBlock.operand"), innerK = i32(inner.role() + "KBlock.operand");
        int outerUnit = i32(outer.role() + ".operand"), outerUnitC = i32(outer.role() + ".c");
        int innerUnit = i32(inner.role() + ".operand"), innerUnitC = i32(inner.role() + ".c");
        int a = columnsOuter ? innerUnit : outerUnit;
        int b = columnsOuter ? outerUnit : innerUnit;
        int rowBlock = columnsOuter ? innerBlock : outerBlock, rowK = columnsOuter ? innerK : outerK;
        Runnable firstKBlock = reduction.blocks() == 1 ? null
                : () -> f.localGet(rowK).localGet(rowBlock).op(Opcode.I32_EQ);

        f.localGet(outer.operand()).localSet(outerBlock);
        f.localGet(PARAM_C).localSet(outerBlockC);
        overBlocks(outer.blocking(), outer.role() + "Block", outerHere -> {
            f.localGet(inner.operand()).localSet(innerBlock);
            f.localGet(outerBlockC).localSet(innerBlockC);
            overBlocks(inner.blocking(), inner.role() + "Block", innerHere -> {
                f.localGet(outerBlock).localSet(outerK);
                f.localGet(innerBlock).localSet(innerK);
                overBlocks(reduction, "kBlock", kStepsHere -> {
                    f.localGet(outerK).localSet(outerUnit);
                    f.localGet(innerBlockC).localSet(outerUnitC);
                    Loops.repeat(f, outerHere, i32(outer.role() + ".counter"), () -> {
                        f.localGet(innerK).localSet(innerUnit);
                        f.localGet(outerUnitC).localSet(innerUnitC);
                        Loops.repeat(f, innerHere, i32(inner.role() + ".counter"), () -> {
                            tiles.emit(plan.interiorTile(), a, b, innerUnitC, kStepsHere, firstKBlock);
                            Loops.add(f, innerUnit, inner.unitBytes());
                            Loops.add(f, innerUnitC, inner.cUnitBytes());
                        });
                        Loops.add(f, outerUnit, outer.unitBytes());
                        Loops.add(f, outerUnitC, outer.cUnitBytes());
                    });
                }, () -> {
                    Loops.add(f, outerK, reduction.perBlock() * outer.kBytes());
                    Loops.add(f, innerK, reduction.perBlock() * inner.kBytes());
                });
            }, () -> advanceBlock(inner, innerBlock, innerBlockC));
        }, () -> advanceBlock(outer, outerBlock, outerBlockC));
    }

    private void advanceBlock(Axis axis, int operand, int c) {
        Loops.add(f, operand, axis.blocking().perBlock() * axis.unitBytes());
        Loops.add(f, c, axis.blocking().perBlock() * axis.cUnitBytes());
    }

    /**
     * The epilogue over the interior, after a split reduction left plain sums there: row by row,
     * four columns at a time when vectorized (the interior is then a multiple of 4 wide).
     */
    private void interiorEpilogue() {
        boolean vector = plan.schedule().vectorize();
        int step = vector ? MatMulPlan.LANES : 1;
        int row = i32("post.row"), at = i32("post.at"), bias = i32("post.bias"), residual = i32("post.residual");
        int value = locals.one("post.value", vector ? ValType.V128 : ValType.F32);
        Op op = plan.op();
        boolean hasBias = op.fuses(Epilogue.Kind.BIAS);
        boolean hasResidual = op.fuses(Epilogue.Kind.RESIDUAL);
        f.localGet(PARAM_C).localSet(row);
        Loops.repeat(f, Trips.fixed(plan.fullRows()), i32("post.rowCounter"), () -> {
            f.localGet(row).localSet(at);
            if (hasBias) {
                f.localGet(plan.param("Bias")).localSet(bias);
            }
            if (hasResidual) {
                f.localGet(row).localGet(PARAM_C).op(Opcode.I32_SUB).localGet(plan.param("Residual")).op(Opcode.I32_ADD)
                        .localSet(residual);
            }
            Loops.repeat(f, Trips.fixed(plan.fullColumns() / step), i32("post.columnCounter"), () -> {
                f.localGet(at).memory(vector ? SimdOpcode.V128_LOAD : Opcode.F32_LOAD, MemArg.floatAt(0)).localSet(value);
                EpilogueEmitter.apply(f, locals, op, vector, value, new EpilogueEmitter.Operands() {
                    @Override
                    public void pushBias() {
                        f.localGet(bias);
                    }

                    @Override
                    public void pushResidual() {
                        f.localGet(residual);
                    }
                });
                f.localGet(at).localGet(value).memory(vector ? SimdOpcode.V128_STORE : Opcode.F32_STORE, MemArg.floatAt(0));
                Loops.add(f, at, step * FLOAT_BYTES);
                if (hasBias) {
                    Loops.add(f, bias, step * FLOAT_BYTES);
                }
                if (hasResidual) {
                    Loops.add(f, residual, step * FLOAT_BYTES);
                }
            });
            Loops.add(f, row, plan.rowBytesC());
        });
    }

    /** The last N % x0 columns beside the interior, one narrow tile per band of y0 rows. */
    private void rightEdge() {
        int bands = plan.fullRows() / plan.schedule().y0();
        if (bands == 0 || plan.rightEdgeTile().isEmpty()) {
            return;
        }
        int bandA = i32("band.operand"), tileB = i32("tile.operand"), tileC = i32("tile.c");
        int fullTiles = plan.fullColumns() / plan.schedule().x0();
        f.localGet(PARAM_A).localSet(bandA);
        Loops.copyPlus(f, PARAM_B, fullTiles * plan.bTileBytes(), tileB);
        Loops.copyPlus(f, PARAM_C, plan.fullColumns() * FLOAT_BYTES, tileC);
        Loops.repeat(f, Trips.fixed(bands), i32("band.counter"), () -> {
            tiles.emit(plan.rightEdgeTile(), bandA, tileB, tileC, Trips.fixed(plan.op().k()), null);
            Loops.add(f, bandA, plan.schedule().y0() * plan.rowBytesA());
            Loops.add(f, tileC, plan.schedule().y0() * plan.rowBytesC());
        });
    }

    /** The last M % y0 rows across the full width: x0-wide tiles, then the corner. */
    private void bottomEdge() {
        if (plan.bottomEdgeTile().isEmpty()) {
            return;
        }
        int x0 = plan.schedule().x0();
        int bandA = i32("band.operand"), tileB = i32("tile.operand"), tileC = i32("tile.c");
        Trips allK = Trips.fixed(plan.op().k());
        Loops.copyPlus(f, PARAM_A, plan.fullRows() * plan.rowBytesA(), bandA);
        f.localGet(PARAM_B).localSet(tileB);
        Loops.copyPlus(f, PARAM_C, plan.fullRows() * plan.rowBytesC(), tileC);
        Loops.repeat(f, Trips.fixed(plan.fullColumns() / x0), i32("tile.counter"), () -> {
            tiles.emit(plan.bottomEdgeTile(), bandA, tileB, tileC, allK, null);
            Loops.add(f, tileB, plan.bTileBytes());
            Loops.add(f, tileC, x0 * FLOAT_BYTES);
        });
        // after the loop tileB and tileC stand at column fullColumns: the corner
        tiles.emit(plan.cornerTile(), bandA, tileB, tileC, allK, null);
    }

    /**
     * One pass over the blocks of an axis: {@code body} gets the units of the current block, then
     * {@code advance} moves the block pointers. Without blocking (one block) neither loop nor
     * advance is emitted; when blocks are all equal their length is a constant; otherwise it is
     * min(perBlock, units left), computed per block.
     */
    private void overBlocks(Blocking axis, String role, Consumer<Trips> body, Runnable advance) {
        if (axis.blocks() == 1) {
            body.accept(Trips.fixed(axis.units()));
            return;
        }
        int counter = i32(role + ".counter");
        if (!axis.ragged()) {
            Loops.repeat(f, Trips.fixed(axis.blocks()), counter, () -> {
                body.accept(Trips.fixed(axis.perBlock()));
                advance.run();
            });
            return;
        }
        int left = i32(role + ".left"), here = i32(role + ".here");
        Loops.set(f, left, axis.units());
        Loops.repeat(f, Trips.fixed(axis.blocks()), counter, () -> {
            Loops.minOf(f, axis.perBlock(), left, here);
            f.localGet(left).localGet(here).op(Opcode.I32_SUB).localSet(left);
            body.accept(Trips.inLocal(here));
            advance.run();
        });
    }

    private int i32(String role) {
        return locals.one(role, ValType.I32);
    }
}
