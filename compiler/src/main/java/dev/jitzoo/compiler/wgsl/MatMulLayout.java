package dev.jitzoo.compiler.wgsl;

import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.proto.rules.ScheduleRules;

/**
 * How a (batch) matmul maps onto WebGPU for one schedule, decided and checked before any text is
 * written. Each invocation computes a {@code y0 x x0} register tile of C; a workgroup of
 * {@code (x1/x0) x (y1/y0)} invocations covers a {@code y1 x x1} block; the dispatch covers C with
 * blocks, batches along z. With {@code r1 > 0} the workgroup stages A (block rows x r1) and B
 * (r1 x block columns) in workgroup memory, one k tile at a time.
 *
 * @param threadsX     invocations per workgroup along x (columns): x1 / x0
 * @param threadsY     invocations per workgroup along y (rows): y1 / y0
 * @param depth        k steps of one staged tile: min(r1, K); 0 when operands are read from storage
 * @param dispatch     workgroups along x, y, z
 * @param storageBytes workgroup memory of the staged tiles
 */
record MatMulLayout(Op op, Schedule schedule, int threadsX, int threadsY, int depth, int[] dispatch, int storageBytes) {

    /** Invocations along an axis the schedule leaves open (x1 or y1 = 0), before the limits and the shape cut it. */
    static final int DEFAULT_THREADS = 16;
    static final int FLOAT_BYTES = 4;
    static final int LANES = ScheduleRules.LANES;

    static MatMulLayout of(Op op, Schedule s, WgslLimits limits) {
        checkTile(s);
        int tilesX = ceilDiv(op.n(), s.x0()), tilesY = ceilDiv(op.m(), s.y0());
        int tx = s.x1() > 0 ? s.x1() / s.x0() : Math.min(Math.min(DEFAULT_THREADS, powerOfTwoAtLeast(tilesX)),
                limits.maxComputeWorkgroupSizeX());
        int ty = s.y1() > 0 ? s.y1() / s.y0() : Math.min(Math.min(DEFAULT_THREADS, powerOfTwoAtLeast(tilesY)),
                limits.maxComputeWorkgroupSizeY());
        int depth = s.r1() == 0 ? 0 : Math.min(s.r1(), op.k());
        // open axes give way, the wider first, until the workgroup fits the limits
        while ((long) tx * ty > limits.maxComputeInvocationsPerWorkgroup()
                || storage(s, tx, ty, depth) > limits.maxComputeWorkgroupStorageSize()) {
            boolean openX = s.x1() == 0 && tx > 1, openY = s.y1() == 0 && ty > 1;
            if (openX && (tx >= ty || !openY)) {
                tx /= 2;
            } else if (openY) {
                ty /= 2;
            } else {
                break;
            }
        }
        if (tx > limits.maxComputeWorkgroupSizeX()) {
            throw new InvalidKernelException("workgroup size x = x1/x0 = " + tx + " exceeds maxComputeWorkgroupSizeX "
                    + limits.maxComputeWorkgroupSizeX() + "; choose a smaller x1 or a larger x0");
        }
        if (ty > limits.maxComputeWorkgroupSizeY()) {
            throw new InvalidKernelException("workgroup size y = y1/y0 = " + ty + " exceeds maxComputeWorkgroupSizeY "
                    + limits.maxComputeWorkgroupSizeY() + "; choose a smaller y1 or a larger y0");
        }
        if ((long) tx * ty > limits.maxComputeInvocationsPerWorkgroup()) {
            throw new InvalidKernelException("a workgroup of (x1/x0) x (y1/y0) = " + tx + " x " + ty + " = " + (long) tx * ty
                    + " invocations exceeds maxComputeInvocationsPerWorkgroup " + limits.maxComputeInvocationsPerWorkgroup()
                    + "; choose smaller x1, y1 or larger x0, y0");
        }
        long storage = storage(s, tx, ty, depth);
        if (storage > limits.maxComputeWorkgroupStorageSize()) {
            throw new InvalidKernelException("cache_read tiles need " + storage + " bytes of workgroup memory (A "
                    + ty * s.y0() + "x" + depth + " + B " + depth + "x" + tx * s.x0() + " floats), over "
                    + "maxComputeWorkgroupStorageSize " + limits.maxComputeWorkgroupStorageSize() + "; lower r1, x1 or y1");
        }
        int[] dispatch = {ceilDiv(op.n(), tx * s.x0()), ceilDiv(op.m(), ty * s.y0()), op.batch()};
        String[] axes = {"x (columns: N / x1)", "y (rows: M / y1)", "z (batch)"};
        for (int axis = 0; axis < 3; axis++) {
            if (dispatch[axis] > limits.maxComputeWorkgroupsPerDimension()) {
                throw new InvalidKernelException("the dispatch needs " + dispatch[axis] + " workgroups along " + axes[axis]
                        + ", over maxComputeWorkgroupsPerDimension " + limits.maxComputeWorkgroupsPerDimension()
                        + (axis < 2 ? "; choose larger tiles" : ""));
            }
        }
        checkBindings(op, limits);
        return new MatMulLayout(op, s, tx, ty, depth, dispatch, (int) storage);
    }

    /** Throws unless the register tile, r0 and unroll make a kernel of reasonable size. */
    static void checkTile(Schedule s) {
        InvalidKernelException.refuse(ScheduleRules.wgslTileProblem(s.wire()));
    }

    private static long storage(Schedule s, int tx, int ty, int depth) {
        return (long) FLOAT_BYTES * depth * ((long) ty * s.y0() + (long) tx * s.x0());
    }

    /** Throws when an operand is larger than one storage buffer binding may be. */
    private static void checkBindings(Op op, WgslLimits limits) {
        long a = (long) op.batch() * op.m() * op.k();
        long b = (long) (op.broadcastB() ? 1 : op.batch()) * op.k() * op.n();
        long c = (long) op.batch() * op.m() * op.n();
        long largest = Math.max(a, Math.max(b, c));
        if (largest * FLOAT_BYTES > limits.maxStorageBufferBindingSize()) {
            throw new InvalidKernelException("an operand of " + largest * FLOAT_BYTES + " bytes exceeds "
                    + "maxStorageBufferBindingSize " + limits.maxStorageBufferBindingSize());
        }
    }

    static int ceilDiv(int a, int b) {
        return (int) (((long) a + b - 1) / b);
    }

    static int powerOfTwoAtLeast(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    int lanes() {
        return schedule.vectorize() ? LANES : 1;
    }

    /** Columns of C one workgroup covers (x1). */
    int blockColumns() {
        return threadsX * schedule.x0();
    }

    /** Rows of C one workgroup covers (y1). */
    int blockRows() {
        return threadsY * schedule.y0();
    }

    int invocations() {
        return threadsX * threadsY;
    }

    boolean staged() {
        return depth > 0;
    }

    /** k tiles staged one after the other: ceil(K / depth). */
    int kTiles() {
        return ceilDiv(op.k(), depth);
    }

    /** B is read as vec4 straight from its buffer: 4 adjacent columns of a row, and rows of whole vec4s (not a 4-bit B's). */
    boolean vectorB() {
        return schedule.vectorize() && op.n() % LANES == 0 && !op.transposeB() && op.kind() != OpKind.MATMUL_Q4; // 4-bit columns are apart
    }

    /** C (and Bias, Residual) are bound and written as vec4. */
    boolean vectorC() {
        return schedule.vectorize() && op.n() % LANES == 0;
    }

    /** Some workgroups reach past the last row of C. */
    boolean rowOverhang() {
        return op.m() % blockRows() != 0;
    }

    /** Some workgroups reach past the last column of C. */
    boolean columnOverhang() {
        return op.n() % blockColumns() != 0;
    }

    /** k steps per register step (r0; 0 means 1). */
    int steps() {
        return Math.max(1, schedule.r0());
    }

    /** Register steps per trip of the k loop (unroll; 0 means 1). */
    int copies() {
        return Math.max(1, schedule.unroll());
    }

    boolean fuses(Epilogue.Kind kind) {
        return op.fuses(kind);
    }
}
