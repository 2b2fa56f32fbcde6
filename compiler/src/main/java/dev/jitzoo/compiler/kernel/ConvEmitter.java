package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.ScheduleRules;
import java.util.List;

/**
 * The convolution ({@code conv}, docs/kernel-abi.md) as an implicit GEMM: per output row of an
 * image and per group, C's rows are the group's output channels, its columns the row's outputs,
 * A the group's filters as stored ({@code [M/G, C/G·KH·KW]}, row-major) and B the windows under
 * the outputs. For each tile of x0 output columns the windows are gathered once into Work as a
 * packed float panel ({@code C/G·KH·KW} rows of the tile's width, zeros where the window hangs
 * over the padding), then the float matmul's register tile ({@link RegisterTileEmitter}) runs y0
 * channels at a time over it, the epilogue (bias per channel) fused. A window row wholly inside
 * the input is copied (v128 at a time for stride 1); one that touches the padding is gathered
 * value by value.
 *
 * <pre>
 * for r in the call's output rows (image n = r / OH, row y = r mod OH)
 *   for g in groups
 *     for tile of x0 output columns (then the OW mod x0 left)
 *       Work[(c, i, j)][0..w) = X[n, g·C/G + c, y·sh − pt + i·dh, (x0 + t)·sw − pl + j·dw], 0 outside
 *       for band of y0 channels of the group: register tile over Work, epilogue, store into C[n, m, y, tile]
 * </pre>
 *
 * Split (ABI v2): a unit is {@code grain} output rows of one image, so a call's units are a run of
 * output rows; each output row has a Work row of its own, so calls on other threads never share one.
 * A depthwise conv (one channel per group) reads its input in place instead ({@link DepthwiseEmitter}).
 */
final class ConvEmitter {

    static final int PARAM_X = 0;
    static final int PARAM_W = 1;
    static final int PARAM_C = 2;
    static final int PARAM_WORK = 3;

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool pool;
    private final ConvWindow window;
    private final ConvShape shape;
    /** A group's product: its [M/G, taps] filters by a tile's [taps, columns] panel, into rows of C OH·OW apart. */
    private final RegisterTileEmitter product;

    private ConvEmitter(Op op, Schedule schedule, FunctionBuilder f) {
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = new LocalPool(f);
        this.window = op.window();
        this.shape = ConvShape.of(op);
        Op matmul = new Op(OpKind.MATMUL, List.of(shape.groupOutChannels(), shape.taps(), shape.outPlane()), false, false, op.epilogue(), 0f);
        this.product = new RegisterTileEmitter(f, new MatMulPlan(matmul, schedule.withSplit(Split.NONE).withPackB(true), op), pool);
    }

    /** Floats of one output row's Work ({@link OpRules#convWorkRow}). */
    static int workRow(Op op) {
        return (int) OpRules.convWorkRow(op.wire());
    }

    /**
     * The entry {@code (A, B, C, Work[, Bias][, Residual])} over every output row, or, split,
     * {@code (..., first, end)} over the rows of units [first, end).
     */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        InvalidKernelException.refuse(op, schedule, ScheduleRules.convProblem(schedule.wire()));
        int operands = AbiMetadata.operandCount(op);
        boolean split = schedule.split().isSplit();
        if (split) {
            RangeEmitter.check(op, schedule.split());
        }
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(operands + (split ? 2 : 0)));
        new ConvEmitter(op, schedule, f).entry(operands, split);
        return f;
    }

    private void entry(int operands, boolean split) {
        int row = i32("conv.row"), end = i32("conv.end");
        if (split) {
            rowOf(operands, row);
            rowOf(operands + 1, end);
        } else {
            f.i32Const(0).localSet(row);
            f.i32Const(op.batch() * shape.outH()).localSet(end);
        }
        if (DepthwiseEmitter.applies(op)) {
            new DepthwiseEmitter(op, schedule, f, pool).rows(row, end);
            return;
        }
        f.block();
        f.localGet(row).localGet(end).op(Opcode.I32_LT_U).op(Opcode.I32_EQZ).brIf(0);
        f.loop();
        outputRow(row);
        f.localGet(row).i32Const(1).op(Opcode.I32_ADD).localTee(row).localGet(end).op(Opcode.I32_LT_U).brIf(0);
        f.end();
        f.end();
    }

    /** {@code to} = the first output row of unit {@code unitParam}: image u / bands, row min(OH, (u mod bands)·grain). */
    private void rowOf(int unitParam, int to) {
        int grain = schedule.split().grain(), bands = (shape.outH() + grain - 1) / grain;
        int image = i32("conv.unitImage");
        f.localGet(unitParam).i32Const(bands).op(Opcode.I32_DIV_U).localSet(image);
        f.localGet(unitParam).localGet(image).i32Const(bands).op(Opcode.I32_MUL).op(Opcode.I32_SUB).i32Const(grain).op(Opcode.I32_MUL)
                .localSet(to);
        // image·OH + min(OH, band·grain): only the last band's grain can pass OH
        Loops.minOf(f, shape.outH(), to, to);
        f.localGet(image).i32Const(shape.outH()).op(Opcode.I32_MUL).localGet(to).op(Opcode.I32_ADD).localSet(to);
    }

    /**
     * Where output row {@code row} (of all images' rows) starts, set in locals: its image's X, C at
     * its image, channel 0 and row, its Work row, and the first input row under its windows (y·sh −
     * pt, negative in the top padding). The depthwise form starts its bands the same way.
     */
    record RowStart(int x, int c, int work, int inTop) {

        static RowStart emit(Op op, ConvShape shape, FunctionBuilder f, LocalPool pool, int row) {
            int image = pool.one("row.image", ValType.I32), y = pool.one("row.y", ValType.I32);
            RowStart at = new RowStart(pool.one("row.x", ValType.I32), pool.one("row.c", ValType.I32), pool.one("row.work", ValType.I32),
                    pool.one("row.inTop", ValType.I32));
            f.localGet(row).i32Const(shape.outH()).op(Opcode.I32_DIV_U).localSet(image);
            f.localGet(row).localGet(image).i32Const(shape.outH()).op(Opcode.I32_MUL).op(Opcode.I32_SUB).localSet(y);
            f.localGet(PARAM_X).localGet(image).i32Const(shape.image() * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                    .localSet(at.x);
            f.localGet(PARAM_C).localGet(image).i32Const(shape.outImage() * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                    .localGet(y).i32Const(shape.outW() * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(at.c);
            f.localGet(PARAM_WORK).localGet(row).i32Const(workRow(op) * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                    .localSet(at.work);
            f.localGet(y).i32Const(shape.window().strideH()).op(Opcode.I32_MUL).i32Const(shape.window().padTop()).op(Opcode.I32_SUB)
                    .localSet(at.inTop);
            return at;
        }
    }

    /** Output row {@code row} (of all images' rows) for every group and channel. */
    private void outputRow(int row) {
        RowStart at = RowStart.emit(op, shape, f, pool, row);
        int filters = i32("row.filters"), group = i32("row.group");
        f.localGet(PARAM_W).localSet(filters);
        Loops.repeat(f, Trips.fixed(window.group()), group, () -> {
            tiles(at.x(), filters, at.c(), at.work(), at.inTop());
            Loops.add(f, at.x(), shape.groupChannels() * shape.plane() * FLOAT_BYTES);
            Loops.add(f, filters, shape.groupOutChannels() * shape.taps() * FLOAT_BYTES);
            Loops.add(f, at.c(), shape.groupOutChannels() * shape.outPlane() * FLOAT_BYTES);
        });
    }

    /** One group's output row: every tile of x0 columns, then the OW mod x0 left. */
    private void tiles(int x, int filters, int cRow, int work, int inRow) {
        int x0 = schedule.x0();
        int column = i32("tile.column"), c = i32("tile.c");
        f.i32Const(0).localSet(column);
        f.localGet(cRow).localSet(c);
        Loops.repeat(f, Trips.fixed(shape.outW() / x0), i32("tile.counter"), () -> {
            tile(x0, x, filters, c, work, inRow, column);
            Loops.add(f, column, x0);
            Loops.add(f, c, x0 * FLOAT_BYTES);
        });
        if (shape.outW() % x0 != 0) {
            tile(shape.outW() % x0, x, filters, c, work, inRow, column);
        }
    }

    /** One tile of {@code columns} outputs from output column {@code column}: windows gathered, then every band of channels. */
    private void tile(int columns, int x, int filters, int c, int work, int inRow, int column) {
        gather(columns, x, work, inRow, column);
        product.overBands(filters, work, c, columns);
    }

    /**
     * Work[(c, i, j)][0..columns) = the windows' taps: for each input channel c of the group, window
     * row i (input row inRow + i·dh) and column j, the inputs at (column + t)·sw − pl + j·dw for
     * each output t of the tile.
     */
    private void gather(int columns, int x, int work, int inRow, int column) {
        int plane = i32("gather.plane"), ih = i32("gather.ih"), rowOk = i32("gather.rowOk"), src = i32("gather.src");
        int ix = i32("gather.ix"), firstIx = i32("gather.firstIx"), to = i32("gather.to");
        f.localGet(x).localSet(plane);
        f.localGet(work).localSet(to);
        // the first input column under the tile's first window: column·sw − pl
        f.localGet(column).i32Const(window.strideW()).op(Opcode.I32_MUL).i32Const(window.padLeft()).op(Opcode.I32_SUB).localSet(firstIx);
        // a window row is interior when its first input column is at least 0 and its last (columns − 1)·sw further is below W
        int lastInteriorStart = shape.width() - 1 - (columns - 1) * window.strideW();
        Loops.repeat(f, Trips.fixed(shape.groupChannels()), i32("gather.channel"), () -> {
            f.localGet(inRow).localSet(ih);
            Loops.repeat(f, Trips.fixed(shape.kernelH()), i32("gather.i"), () -> {
                f.localGet(ih).i32Const(shape.height()).op(Opcode.I32_LT_U).localSet(rowOk);
                f.localGet(plane).localGet(ih).i32Const(shape.width() * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(src);
                f.localGet(firstIx).localSet(ix);
                Loops.repeat(f, Trips.fixed(shape.kernelW()), i32("gather.j"), () -> {
                    if (lastInteriorStart >= 0) {
                        f.localGet(rowOk).localGet(ix).i32Const(lastInteriorStart + 1).op(Opcode.I32_LT_U).op(Opcode.I32_AND).ifThen();
                        copy(columns, src, ix, to);
                        f.elseBranch();
                        edge(columns, x, src, ix, rowOk, to);
                        f.end();
                    } else {
                        edge(columns, x, src, ix, rowOk, to);
                    }
                    Loops.add(f, to, columns * FLOAT_BYTES);
                    Loops.add(f, ix, window.dilationW());
                });
                Loops.add(f, ih, window.dilationH());
            });
            Loops.add(f, plane, shape.plane() * FLOAT_BYTES);
        });
    }

    /** A window row wholly inside the input: stride 1 a v128 at a time, else value by value. */
    private void copy(int columns, int src, int ix, int to) {
        int from = i32("copy.from");
        f.localGet(src).localGet(ix).i32Const(FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(from);
        Loops.copyFloats(f, from, window.strideW(), to, 0, columns);
    }

    /**
     * A window row touching the padding: each value read where it is inside the input (the row
     * valid and 0 ≤ column &lt; W), else 0; an outside read is redirected to X's first value, so
     * no address leaves the operand.
     */
    private void edge(int columns, int x, int src, int ix, int rowOk, int to) {
        int at = i32("edge.ix"), ok = i32("edge.ok");
        for (int t = 0; t < columns; t++) {
            f.localGet(ix);
            Loops.offset(f, (long) t * window.strideW());
            f.localSet(at);
            f.localGet(at).i32Const(shape.width()).op(Opcode.I32_LT_U).localGet(rowOk).op(Opcode.I32_AND).localSet(ok);
            Loops.address(f, to, (long) t * FLOAT_BYTES);
            f.localGet(src).localGet(at).i32Const(FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD)
                    .localGet(x).localGet(ok).op(Opcode.SELECT);
            f.memory(Opcode.F32_LOAD, MemArg.floatAt(0));
            f.f32Const(0f).localGet(ok).op(Opcode.SELECT);
            f.memory(Opcode.F32_STORE, MemArg.floatAt(0));
        }
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
