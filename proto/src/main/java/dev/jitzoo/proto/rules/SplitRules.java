package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;

/**
 * The parallel primitive's rules for Wasm: on a device whose kernels run on T threads, every
 * schedule is split along rows (ABI v2) so that the T threads get equal work. Threads share a
 * dispatch statically (thread t takes units [U·t/T, U·(t+1)/T)), so the best split is T equal
 * units, each a whole number of the schedule's row blocks:
 * <ul>
 *   <li>batches enough (at least T, or a multiple of T): one unit per batch (grain = the rows), so
 *       no batch is cut;</li>
 *   <li>otherwise: the rows of a batch in T bands, each rounded up to whole row blocks (y1, else
 *       y0; for element-wise ops whole vectors of 4), so bands start on a block and the last band
 *       is the shortest.</li>
 * </ul>
 * A one-row matmul (a decode step's product, M = 1) has no rows to share out: with B packed in
 * panels it splits by columns instead, T bands of whole x0-wide panels (the last the narrowest).
 * On one thread no schedule is split (ABI v1). The space splits its candidates by these rules,
 * and the gateway its safe default, so a session's kernels are all split alike.
 */
public final class SplitRules {

    private SplitRules() {
    }

    /** {@code s} as it runs on {@code threads} threads: split for them, or unsplit on one. */
    public static Schedule forThreads(OpSpec op, Schedule s, int threads) {
        if (threads <= 1) {
            return s.toBuilder().clearSplitAxis().clearSplitGrain().build();
        }
        if (byColumns(op, s)) {
            return s.toBuilder().setSplitAxis(SplitAxis.SPLIT_AXIS_COLUMNS).setSplitGrain(columnGrain(op, s, threads)).build();
        }
        return s.toBuilder().setSplitAxis(SplitAxis.SPLIT_AXIS_ROWS).setSplitGrain(grain(op, s, threads)).build();
    }

    /**
     * Whether {@code s} splits {@code op} by columns: a one-row float matmul whose B the kernel packs
     * in panels, at least two of them.
     */
    public static boolean byColumns(OpSpec op, Schedule s) {
        return op.getKind() == OpKind.OP_KIND_MATMUL && rowsPerBatch(op) == 1 && s.getPackB() && s.getX0() > 0
                && op.getShape(op.getShapeCount() - 1) >= 2 * s.getX0();
    }

    /** Columns per unit of a split by columns: the N columns in T bands of whole x0-wide panels (fewer than N). */
    public static int columnGrain(OpSpec op, Schedule s, int threads) {
        int n = op.getShape(op.getShapeCount() - 1), x0 = s.getX0();
        int band = ((n + threads - 1) / threads + x0 - 1) / x0 * x0;
        return Math.min(band, n / x0 * x0);
    }

    /** Rows per unit for {@code threads} threads. */
    public static int grain(OpSpec op, Schedule s, int threads) {
        int rows = rowsPerBatch(op);
        boolean conv = op.getKind() == OpKind.OP_KIND_CONV;
        int batches = op.getKind() == OpKind.OP_KIND_BATCH_MATMUL || conv ? op.getShape(0) : 1;
        if (batches % threads == 0 || batches >= 4 * threads) {
            return rows;
        }
        int block = conv ? 1 : OpRules.takesEpilogue(op.getKind()) ? Math.max(1, s.getY1() > 0 ? s.getY1() : s.getY0())
                : rank(op) == 1 ? 4 : 1;
        int band = (rows + threads - 1) / threads;
        return Math.min(rows, (band + block - 1) / block * block);
    }

    /**
     * Rows of the split axis in one batch: a matmul's M, a row op's rows, an element-wise op's
     * elements, a convolution's output rows per image.
     */
    public static int rowsPerBatch(OpSpec op) {
        int dims = op.getShapeCount();
        if (op.getKind() == OpKind.OP_KIND_CONV) {
            return (int) OpRules.convOutputHeight(op);
        }
        return OpRules.isMatmul(op.getKind()) ? op.getShape(dims - 3) : op.getShape(0);
    }

    private static int rank(OpSpec op) {
        return op.getShapeCount();
    }
}
