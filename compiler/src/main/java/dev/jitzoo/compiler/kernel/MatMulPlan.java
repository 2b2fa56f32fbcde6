package dev.jitzoo.compiler.kernel;

import dev.jitzoo.proto.rules.ScheduleRules;
import java.util.List;

/**
 * What a (batch) matmul kernel looks like for one op and schedule, decided before any byte is
 * emitted: the register tile, the cache blocks over each axis, the edge tiles, the strides.
 * {@link #of} refuses schedules no correct or reasonable kernel exists for.
 *
 * <p>C splits into an interior of whole register tiles, {@code fullRows() x fullColumns()}, a right
 * edge (the last {@code N % x0} columns beside the interior) and a bottom edge (the last
 * {@code M % y0} rows, full width). Cache blocks apply to the interior; edges run the whole reduction.
 */
record MatMulPlan(Op op, Schedule schedule, Op abi) {

    static final int FLOAT_BYTES = 4;
    static final int HALF_BYTES = 2;
    static final int LANES = ScheduleRules.LANES;
    static final int MAX_ACCUMULATORS = ScheduleRules.WASM_MAX_ACCUMULATORS;

    /** Units of one axis (row bands, column tiles or k steps) grouped into blocks of {@code perBlock}. */
    record Blocking(int units, int perBlock) {

        int blocks() {
            return units == 0 ? 0 : (units + perBlock - 1) / perBlock;
        }

        /** Whether the last block is shorter than the others, so a block's length is known only at run time. */
        boolean ragged() {
            return units % perBlock != 0;
        }

        static Blocking of(int units, int cacheTileUnits) {
            int perBlock = cacheTileUnits == 0 ? units : Math.min(units, cacheTileUnits);
            return new Blocking(units, Math.max(1, perBlock));
        }
    }

    /** A register tile: {@code rows} x ({@code vectors} v128 columns of 4, then {@code scalars} single columns). */
    record TileShape(int rows, int vectors, int scalars) {

        int width() {
            return vectors * LANES + scalars;
        }

        boolean isEmpty() {
            return rows == 0 || width() == 0;
        }
    }

    /** The plan of an op whose own ABI names the entry's parameters. */
    MatMulPlan(Op op, Schedule schedule) {
        this(op, schedule, op);
    }

    static MatMulPlan of(Op op, Schedule schedule) {
        InvalidKernelException.refuse(ScheduleRules.wasmProblem(schedule.wire(), op.transposeB()));
        MatMulPlan plan = new MatMulPlan(op, schedule);
        long innerStride = (long) plan.copies() * plan.depth() * plan.bRowBytes(schedule.x0());
        if (innerStride > Integer.MAX_VALUE) {
            throw new InvalidKernelException("one trip of the k loop would span " + innerStride
                    + " bytes of B; lower unroll or r0 for N=" + op.n());
        }
        return plan;
    }

    /** Throws {@link InvalidKernelException} unless a correct kernel of any shape can follow this schedule. */
    static void check(Schedule s) {
        InvalidKernelException.refuse(ScheduleRules.wasmProblem(s.wire(), false));
    }

    int lanes() {
        return schedule.vectorize() ? LANES : 1;
    }

    /** k steps whose B values one register step loads together (r0; 0 means 1). */
    int depth() {
        return Math.max(1, schedule.r0());
    }

    /** Register steps per trip of the innermost loop (unroll; 0 means 1). */
    int copies() {
        return Math.max(1, schedule.unroll());
    }

    int fullRows() {
        return op.m() - op.m() % schedule.y0();
    }

    int fullColumns() {
        return op.n() - op.n() % schedule.x0();
    }

    /** Row bands of y0 in the interior, blocked by y1. */
    Blocking rowBands() {
        return Blocking.of(op.m() / schedule.y0(), schedule.y1() / schedule.y0());
    }

    /** Column tiles of x0 in the interior, blocked by x1. */
    Blocking columnTiles() {
        return Blocking.of(op.n() / schedule.x0(), schedule.x1() / schedule.x0());
    }

    /** k steps, blocked by r1. */
    Blocking reduction() {
        return Blocking.of(op.k(), schedule.r1());
    }

    TileShape interiorTile() {
        return tile(schedule.y0(), schedule.x0());
    }

    TileShape rightEdgeTile() {
        return tile(schedule.y0(), op.n() % schedule.x0());
    }

    TileShape bottomEdgeTile() {
        return tile(op.m() % schedule.y0(), schedule.x0());
    }

    TileShape cornerTile() {
        return tile(op.m() % schedule.y0(), op.n() % schedule.x0());
    }

    /** Columns go in v128s of 4 when vectorized, the leftover (< 4) as single floats. */
    private TileShape tile(int rows, int columns) {
        return schedule.vectorize()
                ? new TileShape(rows, columns / LANES, columns % LANES)
                : new TileShape(rows, 0, columns);
    }

    int rowBytesA() {
        return op.k() * FLOAT_BYTES;
    }

    /**
     * Bytes between consecutive k rows of B as a tile {@code width} wide reads them: its panel's
     * width when packed, one float when B is transposed, else N floats.
     */
    int bRowBytes(int width) {
        return (schedule.packB() ? width : op.transposeB() ? 1 : op.n()) * bElementBytes();
    }

    /** Whether B is read as stored in float16 and widened as it is read (a float16-weight matmul; packed, it is floats). */
    boolean widensB() {
        return op.kind() == OpKind.MATMUL_F16 && !schedule.packB();
    }

    /** Bytes of one element of B as the tile reads it. */
    int bElementBytes() {
        return widensB() ? HALF_BYTES : FLOAT_BYTES;
    }

    /** Bytes between adjacent columns of B as the kernel reads them: K floats in a transposed B read in place. */
    int bColumnBytes() {
        return (!schedule.packB() && op.transposeB() ? op.k() : 1) * bElementBytes();
    }

    /** Bytes from one x0-wide column tile of B to the next: a whole K-deep panel when packed. */
    int bTileBytes() {
        return schedule.packB() ? op.k() * schedule.x0() * FLOAT_BYTES : schedule.x0() * bColumnBytes();
    }

    /** Bytes of one batch's B, packed or not (packing keeps every element, only reorders); 0 when shared. */
    int bBatchBytes() {
        return op.broadcastB() ? 0 : op.k() * op.n() * bElementBytes();
    }

    /** Entry parameters: A, B, C, then Bias and Residual when the epilogue reads them. */
    List<String> operands() {
        return List.copyOf(AbiMetadata.operandShapes(op).keySet());
    }

    /**
     * The entry's parameter index of an operand, by the ABI of {@code abi}: the op itself, or the
     * convolution whose product per group this plan's matmul is.
     */
    int param(String operand) {
        return AbiMetadata.param(abi, operand);
    }

    /** Whether the bias is per row of C (a convolution's output channel) rather than per column. */
    boolean biasPerRow() {
        return abi.kind() == OpKind.CONV;
    }

    /**
     * Whether interior tiles store partial sums per k block: then the epilogue runs over the interior
     * in a pass of its own after the reduction; tiles that see the whole reduction apply it as they store.
     */
    boolean interiorEpilogueAfterwards() {
        return !op.epilogue().isEmpty() && reduction().blocks() > 1 && rowBands().units() > 0 && columnTiles().units() > 0;
    }

    int rowBytesC() {
        return op.n() * FLOAT_BYTES;
    }
}
