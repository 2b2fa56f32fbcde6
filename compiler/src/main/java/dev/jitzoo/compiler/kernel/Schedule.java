package dev.jitzoo.compiler.kernel;

import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * A point in the kernel space, field for field the proto's {@code jitzoo.kernel.v1.Schedule}.
 *
 * <ul>
 *   <li>{@code y0 x x0}: the register tile, rows by columns of C whose sums stay in locals
 *       (x0 a multiple of 4 when vectorized: one v128 per 4 columns).</li>
 *   <li>{@code r0}: k steps per register-tile step; their A and B values are loaded together
 *       before the multiply-adds (paper, Table 1). 0 means not split (1).</li>
 *   <li>{@code x1, y1, r1}: the cache tile, columns, rows and k steps of one block, looped over
 *       outside the register tiles. 0 means not split (the whole extent).</li>
 *   <li>{@code unroll}: copies of the r0 step in one iteration of the innermost loop (0 or 1: none).</li>
 *   <li>{@code relaxedSimd}: multiply-add with {@code f32x4.relaxed_madd} (one instruction, fused on
 *       hardware with FMA) instead of {@code f32x4.mul} + {@code f32x4.add}.</li>
 *   <li>{@code packB}: B, the constant operand (weights), is packed once at load into x0-wide
 *       panels by the kernel's exported pack function, so the k loop reads it contiguously.</li>
 *   <li>{@code columnsOuter}: reorder; column blocks and column tiles are looped over outside row
 *       blocks and row bands, so one B panel stays in cache while A streams past it (default: rows
 *       outside, an A band stays while B streams).</li>
 *   <li>{@code split}: the parallel primitive ({@link Split}); a split kernel computes a range of its
 *       units per call, on a shared memory (ABI v2).</li>
 * </ul>
 * Validity against a kernel's limits is checked by the compiler; this record only refuses negatives
 * (a proto uint32 above 2^31 arrives here negative).
 */
public record Schedule(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll,
                       boolean relaxedSimd, boolean packB, boolean columnsOuter, Split split) {

    public Schedule {
        split = split == null ? Split.NONE : split;
        if (x0 < 0 || y0 < 0 || r0 < 0 || x1 < 0 || y1 < 0 || r1 < 0 || unroll < 0) {
            throw new InvalidKernelException("schedule fields must be 0 or positive (below 2^31), got " + describe(
                    x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, split));
        }
    }

    /** A schedule computed in one call (no split). */
    public Schedule(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll,
                    boolean relaxedSimd, boolean packB, boolean columnsOuter) {
        this(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, Split.NONE);
    }

    /** A schedule in the default loop order (rows outside columns). */
    public Schedule(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll,
                    boolean relaxedSimd, boolean packB) {
        this(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, false);
    }

    /** A schedule with plain multiply-adds and B read in place. */
    public Schedule(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll) {
        this(x0, y0, r0, x1, y1, r1, vectorize, unroll, false, false);
    }

    /** The schedule on the wire: the form {@link ScheduleRules} judges for every part of the suite. */
    public dev.jitzoo.proto.kernel.v1.Schedule wire() {
        return dev.jitzoo.proto.kernel.v1.Schedule.newBuilder().setX0(x0).setY0(y0).setR0(r0).setX1(x1).setY1(y1).setR1(r1)
                .setVectorize(vectorize).setUnroll(unroll).setRelaxedSimd(relaxedSimd).setPackB(packB).setColumnsOuter(columnsOuter)
                .setSplitAxis(switch (split.axis()) {
                    case ROWS -> SplitAxis.SPLIT_AXIS_ROWS;
                    case COLUMNS -> SplitAxis.SPLIT_AXIS_COLUMNS;
                    case NONE -> SplitAxis.SPLIT_AXIS_UNSPECIFIED;
                })
                .setSplitGrain(split.grain()).build();
    }

    /** Throws unless this schedules {@code op}, a softmax, layer norm, add or mul: vectorize and unroll only. */
    public void checkRowOp(Op op) {
        String problem = ScheduleRules.rowOpProblem(wire());
        if (problem != null) {
            throw new InvalidKernelException(op.kind().abiName + " is " + problem + "; got " + this);
        }
    }

    /** A register tile only: {@code y0} rows by {@code x0} columns (note the order: rows first). */
    public static Schedule registerTile(int y0, int x0, boolean vectorize, int unroll) {
        return new Schedule(x0, y0, 0, 0, 0, 0, vectorize, unroll);
    }

    public Schedule withReductionTile(int r0) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, split);
    }

    public Schedule withCacheTile(int x1, int y1, int r1) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, split);
    }

    public Schedule withRelaxedSimd(boolean relaxed) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxed, packB, columnsOuter, split);
    }

    public Schedule withPackB(boolean pack) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, pack, columnsOuter, split);
    }

    public Schedule withColumnsOuter(boolean columnsFirst) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsFirst, split);
    }

    public Schedule withSplit(Split parts) {
        return new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, parts);
    }

    @Override
    public String toString() {
        return describe(x0, y0, r0, x1, y1, r1, vectorize, unroll, relaxedSimd, packB, columnsOuter, split);
    }

    private static String describe(int x0, int y0, int r0, int x1, int y1, int r1, boolean vectorize, int unroll,
                                   boolean relaxedSimd, boolean packB, boolean columnsOuter, Split split) {
        return "Schedule[x0=" + x0 + ", y0=" + y0 + ", r0=" + r0 + ", x1=" + x1 + ", y1=" + y1 + ", r1=" + r1
                + ", vectorize=" + vectorize + ", unroll=" + unroll
                + (relaxedSimd ? ", relaxedSimd" : "") + (packB ? ", packB" : "")
                + (columnsOuter ? ", columnsOuter" : "") + (split.isSplit() ? ", split=" + split : "") + "]";
    }
}
