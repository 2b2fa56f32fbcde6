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
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * The 4-bit matmul ({@code matmul_q4}, docs/kernel-abi.md): onnxruntime's {@code MatMulNBits}
 * (bits 4, blocks of 32 along K) with its weights kept 4-bit in memory and widened in registers.
 * B arrives as the file stores it, {@code [N, blocks, 16]} bytes, two k per byte; {@code pack_b}
 * reorders each block's 32 nibbles (same size) so that lane L of the block's v128 holds k = 4t + L
 * in bits 4t: one {@code i32x4.shr_u} and one {@code v128.and} give four consecutive k of a column,
 * which {@code f32x4.convert}, less the block's zero point, × its scale, makes the float weights
 * onnxruntime dequantizes to, exactly. Each column's sums run along K in f32x4 (A read as it lies,
 * four k per load, one load per row shared by the tile's columns) and are summed across lanes at
 * the end, where the matmul epilogue runs on four columns at a time.
 *
 * <p>Two loop orders. Direct (rows outer): every tile widens its columns' weights as it goes, each
 * widened vector serving the tile's y0 rows: the form for few rows (a decode step, M = 1), where
 * every weight is read once anyway. Staged ({@code columnsOuter}, when the call has at least x0
 * rows; fewer take a direct tile of at most 3 × 4): each tile of x0 columns is widened once into Work, laid out as a packed float B's panel
 * (K rows of x0 floats, within the first x0 rows of Work), then every band of rows runs over it as
 * the float matmul's register tile does ({@link RegisterTileEmitter}: A broadcast, x0/4 vectors of
 * sums per row): the widening is paid once per call instead of once per band, and the inner loop
 * is the float kernel's.
 *
 * <pre>
 * direct:  for band of y0 rows (then the M % y0 rows left)
 *            for tile of x0 columns (then the N % x0 left)
 *              y0 × x0 f32x4 sums; per block: each column's scale and zero point, then 8 groups of 4 k
 *                w = (f32(B >> 4t & 15) - zero) * scale;  sum[r][c] += A[r][4t..] * w
 *              the last block's k past a multiple of 4 one by one
 *              sums across lanes, epilogue, store (four columns a vector, the rest one by one)
 * staged:  for tile of x0 columns: Work = its weights widened, [K][x0]; then for band of y0 rows:
 *            the float register tile over Work (epilogue and store included)
 * </pre>
 */
final class Q4MatMulEmitter {

    static final int PARAM_A = 0;
    static final int PARAM_B = 1;
    static final int PARAM_B_SCALE = 2;
    static final int PARAM_B_ZERO = 3;
    static final int PARAM_C = 4;
    static final int PARAM_WORK = 5;

    static final int BLOCK = OpRules.Q4_BLOCK;
    /** Bytes of one block of one column: 32 nibbles. */
    static final int BLOCK_BYTES = BLOCK / 2;
    /** k per group: one f32x4 of a column's weights. */
    private static final int GROUP = LANES;
    private static final int BITS = 4;
    private static final MemArg BYTES = new MemArg(0, 0);
    /** The direct tile a staged schedule falls back to for a call of fewer than x0 rows (a split's last band). */
    private static final int FALLBACK_ROWS = 3;
    private static final int FALLBACK_COLUMNS = 4;

    private final Op op;
    private final FunctionBuilder f;
    private final LocalPool pool;
    private final int x0;
    private final int y0;
    private final int unroll;
    private final int blocks;
    private final Schedule schedule;
    private final boolean staged;

    private Q4MatMulEmitter(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        InvalidKernelException.refuse(op, schedule, ScheduleRules.q4Problem(schedule.wire()));
        this.op = op;
        this.schedule = schedule;
        this.f = f;
        this.pool = pool;
        this.blocks = blocks(op);
        this.staged = schedule.columnsOuter() && op.m() >= schedule.x0();
        boolean fallback = schedule.columnsOuter() && !staged; // too few rows to stage: a small direct tile
        this.x0 = fallback ? Math.min(schedule.x0(), FALLBACK_COLUMNS) : schedule.x0();
        this.y0 = fallback ? Math.min(schedule.y0(), FALLBACK_ROWS) : schedule.y0();
        this.unroll = fallback ? 1 : Math.max(1, schedule.unroll());
    }

    /** The entry {@code (A, B, BScale, BZero, C[, Bias][, Residual])}. */
    static FunctionBuilder emit(Op op, Schedule schedule) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(AbiMetadata.operandCount(op)));
        emitInto(op, schedule, f, new LocalPool(f));
        return f;
    }

    /** The rows of {@code op} at the operand parameters as set (a split kernel's unit, {@link RangeEmitter}). */
    static void emitInto(Op op, Schedule schedule, FunctionBuilder f, LocalPool pool) {
        Q4MatMulEmitter e = new Q4MatMulEmitter(op, schedule, f, pool);
        if (e.staged) {
            e.stagedTiles();
        } else {
            e.rows();
        }
    }

    /** Blocks of 32 k per column, the last one padded. */
    static int blocks(Op op) {
        return Math.toIntExact(OpRules.q4Blocks(op.k()));
    }

    /** Bytes of one column's zero points: two blocks a byte, the first in the low nibble. */
    static int zeroRowBytes(Op op) {
        return (blocks(op) + 1) / 2;
    }

    /** Floats per row of Work: K padded to whole blocks (a staged tile's column of weights). */
    static int workRow(Op op) {
        return blocks(op) * BLOCK;
    }

    /** Bytes of B, as stored and as packed: N columns of {@code blocks} × 16. */
    static long packedBytes(Op op) {
        return (long) op.n() * blocks(op) * BLOCK_BYTES;
    }

    private int param(String name) {
        return AbiMetadata.param(op, name);
    }

    private int rowBytesA() {
        return op.k() * FLOAT_BYTES;
    }

    private int rowBytesC() {
        return op.n() * FLOAT_BYTES;
    }

    private int columnBytesB() {
        return blocks * BLOCK_BYTES;
    }

    /** Bands of y0 rows, then the rows left. */
    private void rows() {
        int bandA = i32("bandA"), bandC = i32("bandC");
        f.localGet(PARAM_A).localSet(bandA);
        f.localGet(PARAM_C).localSet(bandC);
        Loops.repeat(f, Trips.fixed(op.m() / y0), i32("band.counter"), () -> {
            tiles(y0, bandA, bandC);
            Loops.add(f, bandA, y0 * rowBytesA());
            Loops.add(f, bandC, y0 * rowBytesC());
        });
        if (op.m() % y0 != 0) {
            tiles(op.m() % y0, bandA, bandC);
        }
    }

    /** One band across N: tiles of x0 columns in a loop, then the narrow last one. */
    private void tiles(int rows, int bandA, int bandC) {
        Columns at = columns(bandC);
        Loops.repeat(f, Trips.fixed(op.n() / x0), i32("tile.counter"), () -> {
            tile(rows, x0, bandA, at);
            nextColumns(at);
        });
        if (op.n() % x0 != 0) {
            tile(rows, op.n() % x0, bandA, at);
        }
    }

    /** Pointers at the first column of B, BScale, BZero, Bias and of C at {@code c}. */
    private Columns columns(int c) {
        Columns at = new Columns(i32("tile.b"), i32("tile.scale"), i32("tile.zero"), i32("tile.c"), i32("tile.bias"));
        f.localGet(PARAM_B).localSet(at.b);
        f.localGet(PARAM_B_SCALE).localSet(at.scale);
        f.localGet(PARAM_B_ZERO).localSet(at.zero);
        f.localGet(c).localSet(at.c);
        if (op.fuses(Epilogue.Kind.BIAS)) {
            f.localGet(param("Bias")).localSet(at.bias);
        }
        return at;
    }

    /** The pointers x0 columns on. */
    private void nextColumns(Columns at) {
        Loops.add(f, at.b, x0 * columnBytesB());
        Loops.add(f, at.scale, x0 * blocks * FLOAT_BYTES);
        Loops.add(f, at.zero, x0 * zeroRowBytes(op));
        Loops.add(f, at.c, x0 * FLOAT_BYTES);
        Loops.add(f, at.bias, op.fuses(Epilogue.Kind.BIAS) ? x0 * FLOAT_BYTES : 0);
    }

    /** Tiles of x0 columns outer, each widened once into Work, then every band of rows over it. */
    private void stagedTiles() {
        Columns at = columns(PARAM_C);
        Loops.repeat(f, Trips.fixed(op.n() / x0), i32("tile.counter"), () -> {
            stagedTile(x0, at);
            nextColumns(at);
        });
        if (op.n() % x0 != 0) {
            stagedTile(op.n() % x0, at);
        }
    }

    private void stagedTile(int width, Columns at) {
        widen(width, at);
        new RegisterTileEmitter(f, new MatMulPlan(op, schedule), pool).overBands(PARAM_A, PARAM_WORK, at.c, width);
    }

    /**
     * Work = the tile's weights as floats in the layout of a packed float B's panel: k by k, the
     * tile's {@code width} columns side by side ((q − zero) × scale, widened four k at a time as the
     * direct tile widens them, every block whole).
     */
    private void widen(int width, Columns at) {
        int b = i32("widen.b"), scale = i32("widen.scale"), zero = i32("widen.zero"), work = i32("widen.work");
        int block = i32("widen.block"), column = i32("widen.column"), counter = i32("widen.counter");
        int scaleV = pool.one("widen.scaleV", ValType.V128), zeroV = pool.one("widen.zeroV", ValType.V128);
        int weights = pool.one("widen.weights", ValType.V128);
        f.localGet(at.b).localSet(b);
        f.localGet(at.scale).localSet(scale);
        f.localGet(at.zero).localSet(zero);
        f.localGet(PARAM_WORK).localSet(column);
        Loops.repeat(f, Trips.fixed(width), counter, () -> {
            f.localGet(column).localSet(work);
            f.i32Const(0).localSet(block);
            Loops.repeat(f, Trips.fixed(blocks), i32("widen.blockCounter"), () -> {
                load(scale, 0, SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(0));
                f.localSet(scaleV);
                zeroPoint(zero, block, 0);
                f.localSet(zeroV);
                for (int t = 0; t < BLOCK / GROUP; t++) {
                    widened(b, 0, t, zeroV, scaleV);
                    f.localSet(weights);
                    for (int lane = 0; lane < LANES; lane++) {
                        address(work, (long) (t * GROUP + lane) * width * FLOAT_BYTES);
                        f.localGet(weights).f32x4ExtractLane(lane).memory(Opcode.F32_STORE, MemArg.floatAt(0));
                    }
                }
                Loops.add(f, b, BLOCK_BYTES);
                Loops.add(f, scale, FLOAT_BYTES);
                Loops.add(f, work, BLOCK * width * FLOAT_BYTES);
                Loops.add(f, block, 1);
            });
            Loops.add(f, zero, zeroRowBytes(op));
            Loops.add(f, column, FLOAT_BYTES);
        });
    }

    /** Where a tile's first column is in B, BScale, BZero, C and Bias. */
    private record Columns(int b, int scale, int zero, int c, int bias) {
    }

    /** Rows × width sums over K, then the store. */
    private void tile(int rows, int width, int bandA, Columns at) {
        int[] sums = zeroedSums(rows, width);
        Cursor k = new Cursor(i32("k.a"), i32("k.b"), i32("k.scale"), i32("k.block"));
        f.localGet(bandA).localSet(k.a);
        f.localGet(at.b).localSet(k.b);
        f.localGet(at.scale).localSet(k.scale);
        f.i32Const(0).localSet(k.block);
        int whole = op.k() / BLOCK, rest = op.k() % BLOCK;
        Loops.repeat(f, Trips.fixed(whole / unroll), i32("k.counter"), () -> {
            for (int u = 0; u < unroll; u++) {
                block(rows, width, sums, k, at, u, BLOCK);
            }
            step(k, unroll);
        });
        for (int u = 0; u < whole % unroll; u++) {
            block(rows, width, sums, k, at, u, BLOCK);
        }
        if (rest > 0) {
            step(k, whole % unroll);
            block(rows, width, sums, k, at, 0, rest);
        }
        store(rows, width, sums, at.c, at.bias);
    }

    /** A tile's f32x4 sums, row by row, set to zero. */
    private int[] zeroedSums(int rows, int width) {
        int[] sums = pool.group("tile.sums", ValType.V128, rows * width);
        f.f32x4Const(0f);
        for (int i = 0; i < sums.length - 1; i++) {
            f.localTee(sums[i]);
        }
        f.localSet(sums[sums.length - 1]);
        return sums;
    }

    /** A tile's place along K: in A (its first row), in the tile's B and BScale, and the block's index. */
    private record Cursor(int a, int b, int scale, int block) {
    }

    private void step(Cursor k, int blocksPassed) {
        Loops.add(f, k.a, blocksPassed * BLOCK * FLOAT_BYTES);
        Loops.add(f, k.b, blocksPassed * BLOCK_BYTES);
        Loops.add(f, k.scale, blocksPassed * FLOAT_BYTES);
        Loops.add(f, k.block, blocksPassed);
    }

    /**
     * Block {@code u} past the cursor, its first {@code ks} k (32, or what the last block has): each
     * column's scale and zero point in every lane, then groups of four k, then the k left one by one.
     */
    private void block(int rows, int width, int[] sums, Cursor k, Columns at, int u, int ks) {
        int[] scales = pool.group("block.scale", ValType.V128, width);
        int[] zeros = pool.group("block.zero", ValType.V128, width);
        for (int c = 0; c < width; c++) {
            load(k.scale, ((long) c * blocks + u) * FLOAT_BYTES, SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(0));
            f.localSet(scales[c]);
            zeroPoint(at.zero, k.block, u, (long) c * zeroRowBytes(op));
            f.localSet(zeros[c]);
        }
        int a = pool.one("block.a", ValType.V128), w = pool.one("block.w", ValType.V128);
        int[] as = pool.group("block.as", ValType.V128, rows);
        long blockA = (long) u * BLOCK * FLOAT_BYTES, blockB = (long) u * BLOCK_BYTES;
        for (int t = 0; t < ks / GROUP; t++) {
            for (int r = 0; r < rows; r++) {
                load(k.a, (long) r * rowBytesA() + blockA + (long) t * GROUP * FLOAT_BYTES, SimdOpcode.V128_LOAD, MemArg.floatAt(0));
                f.localSet(as[r]);
            }
            for (int c = 0; c < width; c++) {
                widened(k.b, (long) c * columnBytesB() + blockB, t, zeros[c], scales[c]);
                f.localSet(w);
                for (int r = 0; r < rows; r++) {
                    int sum = sums[r * width + c];
                    f.localGet(sum).localGet(as[r]).localGet(w).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(sum);
                }
            }
        }
        int scalar = pool.one("block.scalarW", ValType.F32);
        for (int kk = ks / GROUP * GROUP; kk < ks; kk++) {
            int t = kk / GROUP, lane = kk % GROUP;
            for (int c = 0; c < width; c++) {
                // k = 4t + lane sits in byte 4·lane + t/2 of the packed block, nibble t % 2
                load(k.b, (long) c * columnBytesB() + blockB + (long) lane * 4 + t / 2, Opcode.I32_LOAD8_U, BYTES);
                f.i32Const(BITS * (t % 2)).op(Opcode.I32_SHR_U).i32Const(0xF).op(Opcode.I32_AND).op(Opcode.F32_CONVERT_I32_S)
                        .localGet(zeros[c]).f32x4ExtractLane(0).op(Opcode.F32_SUB)
                        .localGet(scales[c]).f32x4ExtractLane(0).op(Opcode.F32_MUL).localSet(scalar);
                for (int r = 0; r < rows; r++) {
                    addToLaneZero(sums[r * width + c], k.a, (long) r * rowBytesA() + blockA + (long) kk * FLOAT_BYTES, scalar);
                }
            }
        }
    }

    /**
     * Pushes the block's zero point, in every lane: block {@code block + u}'s nibble of the column's
     * zero points at {@code zero + columnOffset} (byte (block + u) / 2, the high nibble for odd blocks).
     */
    private void zeroPoint(int zero, int block, int u, long columnOffset) {
        f.localGet(zero).localGet(block);
        offset(u);
        f.i32Const(1).op(Opcode.I32_SHR_U).op(Opcode.I32_ADD);
        offset(columnOffset);
        f.memory(Opcode.I32_LOAD8_U, BYTES).localGet(block);
        offset(u);
        f.i32Const(1).op(Opcode.I32_AND).i32Const(2).op(Opcode.I32_SHL).op(Opcode.I32_SHR_U)
                .i32Const(0xF).op(Opcode.I32_AND).op(Opcode.F32_CONVERT_I32_S).simd(SimdOpcode.F32X4_SPLAT);
    }

    private void zeroPoint(int zero, int block, int u) {
        zeroPoint(zero, block, u, 0);
    }

    /** Pushes group t (k = 4t..4t + 3) of the packed block at {@code b + offset} as floats: (q − zero) × scale. */
    private void widened(int b, long offset, int t, int zero, int scale) {
        load(b, offset, SimdOpcode.V128_LOAD, BYTES);
        if (t > 0) {
            f.i32Const(BITS * t).simd(SimdOpcode.I32X4_SHR_U);
        }
        f.f32x4Const(Float.intBitsToFloat(0xF)).simd(SimdOpcode.V128_AND).simd(SimdOpcode.F32X4_CONVERT_I32X4_S)
                .localGet(zero).simd(SimdOpcode.F32X4_SUB).localGet(scale).simd(SimdOpcode.F32X4_MUL);
    }

    /** sum += (A at {@code a + offset}) × w in lane 0 only: a k past the last whole group of 4. */
    private void addToLaneZero(int sum, int a, long offset, int w) {
        f.localGet(sum).f32x4Const(0f);
        load(a, offset, Opcode.F32_LOAD, MemArg.floatAt(0));
        f.localGet(w).op(Opcode.F32_MUL).f32x4ReplaceLane(0).simd(SimdOpcode.F32X4_ADD).localSet(sum);
    }

    /**
     * Each sum across its lanes, the epilogue, stored at C from {@code c} (Bias from {@code bias}):
     * four columns as one vector where the tile has them, the rest one by one.
     */
    private void store(int rows, int width, int[] sums, int c, int bias) {
        int vector = pool.one("store.vector", ValType.V128), scalar = pool.one("store.scalar", ValType.F32);
        for (int r = 0; r < rows; r++) {
            long rowC = (long) r * rowBytesC();
            int j = 0;
            for (; j + LANES <= width; j += LANES) {
                for (int lane = 0; lane < LANES; lane++) {
                    across(sums[r * width + j + lane]);
                    if (lane == 0) {
                        f.simd(SimdOpcode.F32X4_SPLAT).localSet(vector);
                    } else {
                        f.localSet(scalar);
                        f.localGet(vector).localGet(scalar).f32x4ReplaceLane(lane).localSet(vector);
                    }
                }
                long column = (long) j * FLOAT_BYTES;
                epilogue(true, vector, c, bias, column, rowC + column);
                address(c, rowC + column);
                f.localGet(vector).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
            }
            for (; j < width; j++) {
                across(sums[r * width + j]);
                f.localSet(scalar);
                long column = (long) j * FLOAT_BYTES;
                epilogue(false, scalar, c, bias, column, rowC + column);
                address(c, rowC + column);
                f.localGet(scalar).memory(Opcode.F32_STORE, MemArg.floatAt(0));
            }
        }
    }

    /** Pushes (l0 + l1) + (l2 + l3) of a sum. */
    private void across(int sum) {
        f.localGet(sum).f32x4ExtractLane(0).localGet(sum).f32x4ExtractLane(1).op(Opcode.F32_ADD)
                .localGet(sum).f32x4ExtractLane(2).localGet(sum).f32x4ExtractLane(3).op(Opcode.F32_ADD).op(Opcode.F32_ADD);
    }

    /** Bias at the tile's column, Residual at C's place. */
    private void epilogue(boolean isVector, int value, int c, int bias, long column, long cOffset) {
        EpilogueEmitter.apply(f, pool, op, isVector, value, new EpilogueEmitter.Operands() {
            @Override
            public void pushBias() {
                f.localGet(bias);
                offset(column);
            }

            @Override
            public void pushResidual() {
                f.localGet(c).localGet(PARAM_C).op(Opcode.I32_SUB).localGet(param("Residual")).op(Opcode.I32_ADD);
                offset(cOffset);
            }
        });
    }

    /**
     * Emits {@code pack_b(src, dst)}: B as MatMulNBits stores it (byte i of a block: k = 2i low,
     * 2i + 1 high) into the kernel's order, block by block in place of size: byte 4L + j of a block
     * holds k = 8j + L (low nibble) and k = 8j + 4 + L (high), so that lane L of the block's v128
     * has k = 4t + L in bits 4t.
     */
    static FunctionBuilder emitPack(Op op) {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(2));
        LocalPool pool = new LocalPool(f);
        int src = 0, dst = 1, counter = pool.one("counter", ValType.I32);
        Loops.repeat(f, Trips.fixed(Math.toIntExact(packedBytes(op) / BLOCK_BYTES)), counter, () -> {
            for (int lane = 0; lane < LANES; lane++) {
                for (int j = 0; j < BLOCK_BYTES / LANES; j++) {
                    f.localGet(dst);
                    if (lane * 4 + j != 0) {
                        f.i32Const(lane * 4 + j).op(Opcode.I32_ADD);
                    }
                    nibble(f, src, 8 * j + lane);
                    nibble(f, src, 8 * j + 4 + lane);
                    f.i32Const(BITS).op(Opcode.I32_SHL).op(Opcode.I32_OR);
                    f.memory(Opcode.I32_STORE8, BYTES);
                }
            }
            Loops.add(f, src, BLOCK_BYTES);
            Loops.add(f, dst, BLOCK_BYTES);
        });
        return f;
    }

    /** Pushes the stored block's k-th nibble: byte k / 2, low for even k. */
    private static void nibble(FunctionBuilder f, int src, int k) {
        f.localGet(src);
        if (k / 2 != 0) {
            f.i32Const(k / 2).op(Opcode.I32_ADD);
        }
        f.memory(Opcode.I32_LOAD8_U, BYTES);
        if (k % 2 == 1) {
            f.i32Const(BITS).op(Opcode.I32_SHR_U);
        }
        f.i32Const(0xF).op(Opcode.I32_AND);
    }

    private void load(int pointer, long offset, Instruction op, MemArg arg) {
        Loops.load(f, pointer, offset, op, arg);
    }

    private void address(int pointer, long offset) {
        Loops.address(f, pointer, offset);
    }

    private void offset(long offset) {
        Loops.offset(f, offset);
    }

    private int i32(String role) {
        return pool.one(role, ValType.I32);
    }
}
