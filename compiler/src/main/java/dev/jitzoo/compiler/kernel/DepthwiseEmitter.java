package dev.jitzoo.compiler.kernel;

import static dev.jitzoo.compiler.kernel.MatMulPlan.FLOAT_BYTES;
import static dev.jitzoo.compiler.kernel.MatMulPlan.LANES;

import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;

/**
 * A depthwise convolution (one input and one output channel per group) read in place: for each
 * band of y0 output rows of an image and each channel, the input rows under the band are copied
 * once into the band's Work with the padding made real (zeros) — at a stride above 1 phase by
 * phase, so that the inputs of neighbouring outputs are neighbours — then every tile of x0 outputs
 * along the rows sums its taps straight from there — a broadcast filter value times a vector of
 * four inputs per tap, no bounds checks — and takes the epilogue (the channel's bias broadcast). Gathering each output's window, as the implicit GEMM does, would copy KH·KW values
 * per output for one multiply-add each; this copies the input once per band.
 *
 * <pre>
 * for band of y0 output rows (a single row where the call's rows or the image's run out)
 *   for channel c
 *     Work[r][0..W + pl + pr) = 0 | X[n, c, y·sh − pt + r, ·] | 0   for the rows the band's windows cover
 *     for tile of x0 outputs (then OW mod x0): sums[row][t] += W[c, i, j] · Work[row·sh + i·dh][(x + t)·sw + j·dw]
 * </pre>
 */
final class DepthwiseEmitter {

    private final Op op;
    private final Schedule schedule;
    private final FunctionBuilder f;
    private final LocalPool pool;
    private final ConvWindow window;
    private final ConvShape shape;
    /** Floats of one row of Work: the input row with its pads. */
    private final int paddedWidth;
    /**
     * Floats of each of a Work row's strideW phases: the padded row is stored phase by phase
     * (column c at (c mod sw)·phase + c / sw), so the inputs of neighbouring outputs are neighbours
     * at any stride. At stride 1 the row as it is.
     */
    private final int phase;

    DepthwiseEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = pool;
        this.window = op.window();
        this.shape = ConvShape.of(op);
        this.paddedWidth = shape.width() + window.padLeft() + window.padRight();
        this.phase = (paddedWidth + window.strideW() - 1) / window.strideW();
    }

    /** Floats of one row of Work: its phases. */
    private int rowFloats() {
        return phase * window.strideW();
    }

    /** Where in a Work row the input under output 0's tap j is, in bytes. */
    private long tapOffset(int j) {
        int c = j * window.dilationW(), sw = window.strideW();
        return ((long) (c % sw) * phase + c / sw) * FLOAT_BYTES;
    }

    /** Whether a conv is depthwise: every group one input channel and one output channel. */
    static boolean applies(Op op) {
        return op.window().group() == op.dims().get(1) && op.window().group() == op.dims().get(4);
    }

    /** Input rows under a band of {@code rows} output rows. */
    private int rowsUnder(int rows) {
        return (rows - 1) * window.strideH() + (shape.kernelH() - 1) * window.dilationH() + 1;
    }

    /** The output rows [row, end) of the call, in bands of y0 rows, a single row where a band would leave the call or the image. */
    void rows(int row, int end) {
        int y0 = Math.min(schedule.y0(), shape.outH()); // a band never spans two images
        f.block();
        f.localGet(row).localGet(end).op(Opcode.I32_LT_U).op(Opcode.I32_EQZ).brIf(0);
        f.loop();
        if (y0 == 1) {
            band(row, 1);
            Loops.add(f, row, 1);
        } else {
            // a whole band: y0 rows left in the call and in the image
            f.localGet(end).localGet(row).op(Opcode.I32_SUB).i32Const(y0 - 1).op(Opcode.I32_GT_U)
                    .localGet(row).i32Const(shape.outH()).op(Opcode.I32_REM_U).i32Const(shape.outH() - y0 + 1).op(Opcode.I32_LT_U)
                    .op(Opcode.I32_AND).ifThen();
            band(row, y0);
            Loops.add(f, row, y0);
            f.elseBranch();
            band(row, 1);
            Loops.add(f, row, 1);
            f.end();
        }
        f.localGet(row).localGet(end).op(Opcode.I32_LT_U).brIf(0);
        f.end();
        f.end();
    }

    /** Output rows [row, row + rows) of one image, every channel. */
    private void band(int row, int rows) {
        ConvEmitter.RowStart at = ConvEmitter.RowStart.emit(op, shape, f, pool, row);
        int x = at.x(), c = at.c(), work = at.work(), inTop = at.inTop(), filters = i32("dw.filters"), bias = i32("dw.bias");
        f.localGet(ConvEmitter.PARAM_W).localSet(filters);
        boolean biased = op.fuses(Epilogue.Kind.BIAS);
        if (biased) {
            f.localGet(AbiMetadata.param(op, "Bias")).localSet(bias);
        }
        Loops.repeat(f, Trips.fixed(shape.channels()), i32("dw.channel"), () -> {
            fill(rows, x, work, inTop);
            int column = i32("dw.column"), out = i32("dw.out");
            f.i32Const(0).localSet(column);
            f.localGet(c).localSet(out);
            int x0 = schedule.x0();
            Loops.repeat(f, Trips.fixed(shape.outW() / x0), i32("dw.tiles"), () -> {
                tile(rows, x0, work, filters, column, out, bias);
                Loops.add(f, column, x0 * FLOAT_BYTES);
                Loops.add(f, out, x0 * FLOAT_BYTES);
            });
            if (shape.outW() % x0 != 0) {
                tile(rows, shape.outW() % x0, work, filters, column, out, bias);
            }
            Loops.add(f, x, shape.plane() * FLOAT_BYTES);
            Loops.add(f, filters, shape.kernelH() * shape.kernelW() * FLOAT_BYTES);
            Loops.add(f, c, shape.outPlane() * FLOAT_BYTES);
            if (biased) {
                Loops.add(f, bias, FLOAT_BYTES);
            }
        });
    }

    /**
     * Work's rows = the input rows under the band, each with its pads as zeros (rows outside X all
     * zeros), phase by phase at a stride above 1.
     */
    private void fill(int rows, int x, int work, int inTop) {
        int ih = i32("fill.ih"), to = i32("fill.to"), from = i32("fill.from");
        f.localGet(inTop).localSet(ih);
        f.localGet(work).localSet(to);
        Loops.repeat(f, Trips.fixed(rowsUnder(rows)), i32("fill.row"), () -> {
            f.localGet(ih).i32Const(shape.height()).op(Opcode.I32_LT_U).ifThen();
            f.localGet(x).localGet(ih).i32Const(shape.width() * FLOAT_BYTES).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(from);
            if (window.strideW() == 1) {
                Loops.zeroFloats(f, to, 0, window.padLeft());
                Loops.copyFloats(f, from, 1, to, window.padLeft(), shape.width());
                Loops.zeroFloats(f, to, window.padLeft() + shape.width(), rowFloats() - window.padLeft() - shape.width());
            } else {
                Loops.zeroFloats(f, to, 0, rowFloats());
                phases(from, to);
            }
            f.elseBranch();
            Loops.zeroFloats(f, to, 0, rowFloats());
            f.end();
            Loops.add(f, ih, 1);
            Loops.add(f, to, rowFloats() * FLOAT_BYTES);
        });
    }

    /** An input row into its phases: input column t (padded column pl + t) at ((pl + t) mod sw)·phase + (pl + t) / sw. */
    private void phases(int from, int to) {
        int sw = window.strideW(), pl = window.padLeft();
        int src = i32("phase.src"), dst = i32("phase.dst");
        for (int p = 0; p < sw; p++) {
            int t0 = Math.floorMod(p - pl, sw);
            if (t0 >= shape.width()) {
                continue;
            }
            int count = (shape.width() - t0 + sw - 1) / sw;
            Loops.copyPlus(f, from, t0 * FLOAT_BYTES, src);
            Loops.copyPlus(f, to, (p * phase + (pl + t0) / sw) * FLOAT_BYTES, dst);
            Loops.repeat(f, Trips.fixed(count), i32("phase.counter"), () -> {
                f.localGet(dst);
                Loops.load(f, src, 0, Opcode.F32_LOAD, MemArg.floatAt(0));
                f.memory(Opcode.F32_STORE, MemArg.floatAt(0));
                Loops.add(f, src, sw * FLOAT_BYTES);
                Loops.add(f, dst, FLOAT_BYTES);
            });
        }
    }

    /**
     * A tile of {@code rows} output rows by {@code columns} outputs, whose first window starts
     * {@code column} bytes into Work's rows: the taps summed (window rows at run time, columns
     * unrolled), then the epilogue, stored at {@code out}.
     */
    private void tile(int rows, int columns, int work, int filters, int column, int out, int bias) {
        int vectors = columns / LANES, singles = columns % LANES;
        int[] sums = pool.group("dw.sums", ValType.V128, rows * vectors);
        int[] single = pool.group("dw.single", ValType.F32, rows * singles);
        int weight = pool.one("dw.weight", ValType.V128), rowAt = i32("dw.rowAt"), tap = i32("dw.tap");
        if (sums.length > 0) {
            f.f32x4Const(0f);
            for (int i = 0; i < sums.length - 1; i++) {
                f.localTee(sums[i]);
            }
            f.localSet(sums[sums.length - 1]);
        }
        for (int s : single) {
            f.f32Const(0f).localSet(s);
        }
        f.localGet(work).localGet(column).op(Opcode.I32_ADD).localSet(rowAt);
        f.localGet(filters).localSet(tap);
        int rowBytes = rowFloats() * FLOAT_BYTES;
        Loops.repeat(f, Trips.fixed(shape.kernelH()), i32("dw.i"), () -> {
            for (int j = 0; j < shape.kernelW(); j++) {
                Loops.load(f, tap, (long) j * FLOAT_BYTES, SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(0));
                f.localSet(weight);
                for (int r = 0; r < rows; r++) {
                    long at = (long) r * window.strideH() * rowBytes + tapOffset(j);
                    for (int v = 0; v < vectors; v++) {
                        int sum = sums[r * vectors + v];
                        long first = at + (long) v * LANES * FLOAT_BYTES;
                        if (schedule.relaxedSimd()) {
                            Loops.load(f, rowAt, first, SimdOpcode.V128_LOAD, MemArg.floatAt(0));
                            f.localGet(weight).localGet(sum).simd(SimdOpcode.F32X4_RELAXED_MADD).localSet(sum);
                        } else {
                            f.localGet(sum);
                            Loops.load(f, rowAt, first, SimdOpcode.V128_LOAD, MemArg.floatAt(0));
                            f.localGet(weight).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(sum);
                        }
                    }
                    for (int s = 0; s < singles; s++) {
                        int sum = single[r * singles + s];
                        f.localGet(sum);
                        Loops.load(f, rowAt, at + (long) (vectors * LANES + s) * FLOAT_BYTES, Opcode.F32_LOAD, MemArg.floatAt(0));
                        Loops.load(f, tap, (long) j * FLOAT_BYTES, Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum);
                    }
                }
            }
            Loops.add(f, rowAt, window.dilationH() * rowBytes);
            Loops.add(f, tap, shape.kernelW() * FLOAT_BYTES);
        });
        if (op.fuses(Epilogue.Kind.RESIDUAL)) { // Residual is shaped like C: the tile's at C's offset
            f.localGet(out).localGet(ConvEmitter.PARAM_C).op(Opcode.I32_SUB).localGet(AbiMetadata.param(op, "Residual"))
                    .op(Opcode.I32_ADD).localSet(i32("dw.residualAt"));
        }
        for (int r = 0; r < rows; r++) {
            for (int v = 0; v < vectors; v++) {
                store(sums[r * vectors + v], true, out, (long) r * shape.outW() * FLOAT_BYTES + (long) v * LANES * FLOAT_BYTES, bias);
            }
            for (int s = 0; s < singles; s++) {
                long at = (long) r * shape.outW() * FLOAT_BYTES + (long) (vectors * LANES + s) * FLOAT_BYTES;
                store(single[r * singles + s], false, out, at, bias);
            }
        }
    }

    /** The epilogue on one sum (the channel's bias broadcast; Residual at the tile's own, set before), then the store at {@code out + offset}. */
    private void store(int sum, boolean vector, int out, long offset, int bias) {
        if (!op.epilogue().isEmpty()) {
            int residualAt = i32("dw.residualAt");
            EpilogueEmitter.apply(f, pool, op, vector, sum, new EpilogueEmitter.Operands() {
                @Override
                public void pushBias() {
                    f.localGet(bias);
                }

                @Override
                public void pushResidual() {
                    Loops.address(f, residualAt, offset);
                }

                @Override
                public boolean biasBroadcast() {
                    return true;
                }
            });
        }
        Loops.address(f, out, offset);
        f.localGet(sum).memory(vector ? SimdOpcode.V128_STORE : Opcode.F32_STORE, MemArg.floatAt(0));
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
