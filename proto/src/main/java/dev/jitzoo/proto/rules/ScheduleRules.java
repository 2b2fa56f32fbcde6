package dev.jitzoo.proto.rules;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;

/**
 * What a schedule must be for the compiler to make a kernel of it, whatever the shape: the
 * compiler's plans refuse schedules by these rules, the Wasm and WebGPU spaces keep only the
 * schedules they allow, and the gateway starts a session on {@link #safeDefault}, which passes them.
 * What depends on a device (its SIMD, its WebGPU limits) stays with whoever knows the device.
 */
public final class ScheduleRules {

    /** f32 lanes of one SIMD vector (Wasm v128, WGSL vec4). */
    public static final int LANES = 4;
    /** Accumulators one Wasm register tile may hold: x86-64 has 16 SIMD registers, and V8 spills beyond them. */
    public static final int WASM_MAX_ACCUMULATORS = 16;
    /** Deepest Wasm r0: its B vectors (r0 x x0/4) are live at once. */
    public static final int WASM_MAX_REDUCTION_TILE = 8;
    /** i32x4 sums an int8 register tile may hold. */
    public static final int WASM_MAX_INTEGER_ACCUMULATORS = 12;
    /** f32x4 sums a 4-bit register tile may hold (one per row and column: a column's sums run along K). */
    public static final int WASM_MAX_Q4_ACCUMULATORS = 12;
    /** Accumulators (floats) one WGSL invocation's register tile may hold. */
    public static final int WGSL_MAX_ACCUMULATORS = 128;
    public static final int WGSL_MAX_REDUCTION_TILE = 16;
    /** Multiply-adds one trip of a WGSL k loop may write out: y0 * x0/lanes * r0 * unroll. */
    public static final int WGSL_MAX_UNROLLED_MADDS = 1024;
    public static final int MAX_UNROLL = 16;

    /** The matmul default when nothing better is known: one row, one SIMD vector; runs for any shape. */
    private static final Schedule MATMUL_DEFAULT = Schedule.newBuilder().setY0(1).setX0(LANES).setVectorize(true).build();
    /** The default of the ops a schedule only vectorizes (softmax, layer norm, add, mul). */
    private static final Schedule ROW_OP_DEFAULT = Schedule.newBuilder().setVectorize(true).build();

    private ScheduleRules() {
    }

    /**
     * The schedule an op starts on where the zoo knows nothing: {@code 1 x 4} vectorized for
     * matmuls (on Wasm a transposed B read packed, the only way a SIMD vector reads it; WGSL reads
     * it in place), plain vectors for the other ops.
     */
    public static Schedule safeDefault(OpSpec op, Backend backend) {
        if (OpRules.isQuantized(op.getKind()) && backend == Backend.BACKEND_WASM) {
            return MATMUL_DEFAULT.toBuilder().setPackB(true).build(); // on WGSL a 4-bit B is read in place
        }
        if (OpRules.hasCompactWeights(op.getKind()) || op.getKind() == OpKind.OP_KIND_CONV) {
            return MATMUL_DEFAULT; // float16 weights read in place; a conv's 1 x 4 tile
        }
        if (!OpRules.isMatmul(op.getKind())) {
            return ROW_OP_DEFAULT;
        }
        return op.getTransposeB() && backend == Backend.BACKEND_WASM ? MATMUL_DEFAULT.toBuilder().setPackB(true).build() : MATMUL_DEFAULT;
    }

    /**
     * Why an int8 matmul schedule cannot make a Wasm kernel, or null: a register tile of y0 rows by x0
     * columns (x0 a multiple of 4: one i32x4 of sums per 4 columns, at most
     * {@value #WASM_MAX_INTEGER_ACCUMULATORS}), {@code unroll} k pairs per trip, B always packed into
     * panels of k pairs ({@code i32x4.dot_i16x8_s} reads two k steps of four columns), vectorized.
     */
    public static String int8Problem(Schedule s) {
        String tile = tileProblem(s, "i32x4");
        if (tile != null) {
            return tile;
        }
        if (!s.getVectorize() || !s.getPackB()) {
            return "an int8 matmul is vectorized and reads B packed: set vectorize and packB";
        }
        long accumulators = (long) s.getY0() * s.getX0() / LANES;
        if (accumulators > WASM_MAX_INTEGER_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + accumulators + " i32x4 accumulators; at most "
                    + WASM_MAX_INTEGER_ACCUMULATORS + " leave registers for A's pairs and B's vectors";
        }
        if (s.getR0() != 0 || s.getX1() != 0 || s.getY1() != 0 || s.getR1() != 0 || s.getRelaxedSimd() || s.getColumnsOuter()) {
            return "an int8 matmul is scheduled by x0, y0 and unroll (with vectorize and packB); r0, x1, y1, r1, "
                    + "relaxedSimd and columnsOuter stay 0";
        }
        return unrollProblem(s);
    }

    /**
     * Why a 4-bit matmul schedule cannot make a Wasm kernel, or null: a register tile of y0 rows by
     * x0 columns (any x0: each column's f32x4 sums run along K, four k at a time, summed across lanes
     * at the end; at most {@value #WASM_MAX_Q4_ACCUMULATORS}), {@code unroll} blocks of 32 k per trip,
     * B always packed (pack_b reorders each block's nibbles so that one shift and mask give four
     * consecutive k), vectorized; {@code columnsOuter} widens each tile's weights once into Work and
     * runs the float register tile (x0 a multiple of 4, {@code unroll} k steps a trip) over them for
     * every band of rows (where the call has at least x0 rows).
     */
    public static String q4Problem(Schedule s) {
        if (s.getY0() < 1 || s.getX0() < 1) {
            return "the register tile needs y0 >= 1 rows and x0 >= 1 columns, got y0=" + s.getY0() + ", x0=" + s.getX0();
        }
        if (!s.getVectorize() || !s.getPackB()) {
            return "a 4-bit matmul is vectorized and reads B packed: set vectorize and packB";
        }
        if (s.getColumnsOuter()) {
            // staged: the float register tile over the widened weights, a v128 of sums per 4 columns
            if (s.getX0() % LANES != 0) {
                return "a staged 4-bit tile (columnsOuter) runs the float register tile: x0 must be a multiple of 4, got " + s.getX0();
            }
            long vectors = (long) s.getY0() * s.getX0() / LANES;
            if (vectors > WASM_MAX_ACCUMULATORS) {
                return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + vectors + " v128 accumulators; at most "
                        + WASM_MAX_ACCUMULATORS + " fit the registers";
            }
        } else if ((long) s.getY0() * s.getX0() > WASM_MAX_Q4_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + (long) s.getY0() * s.getX0()
                    + " f32x4 accumulators; at most " + WASM_MAX_Q4_ACCUMULATORS + " leave registers for A's and B's vectors";
        }
        if (s.getR0() != 0 || s.getX1() != 0 || s.getY1() != 0 || s.getR1() != 0 || s.getRelaxedSimd() && !s.getColumnsOuter()) {
            return "a 4-bit matmul is scheduled by x0, y0, unroll and columnsOuter (with vectorize and packB; relaxedSimd "
                    + "with columnsOuter, for the float tile); r0, x1, y1 and r1 stay 0";
        }
        return unrollProblem(s);
    }

    /**
     * Why a convolution schedule cannot make a Wasm kernel, or null: per output row and group, each
     * tile of x0 output columns (a multiple of 4, at most {@value OpRules#MAX_CONV_TILE_COLUMNS}) has
     * its windows gathered into Work once, then the float register tile runs y0 output channels at a
     * time over them (y0·x0/4 v128 sums), {@code unroll} window taps a trip, relaxed madd where the
     * device has it. Vectorized; r0, x1, y1, r1, packB and columnsOuter stay unset.
     */
    public static String convProblem(Schedule s) {
        String tile = tileProblem(s, "v128");
        if (tile != null) {
            return tile;
        }
        if (!s.getVectorize()) {
            return "a conv is vectorized: set vectorize";
        }
        if (s.getX0() > OpRules.MAX_CONV_TILE_COLUMNS) {
            return "a conv's tile is at most " + OpRules.MAX_CONV_TILE_COLUMNS + " output columns wide, got x0=" + s.getX0();
        }
        long vectors = (long) s.getY0() * s.getX0() / LANES;
        if (vectors > WASM_MAX_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + vectors + " v128 accumulators; at most "
                    + WASM_MAX_ACCUMULATORS + " fit the registers";
        }
        if (s.getR0() != 0 || s.getX1() != 0 || s.getY1() != 0 || s.getR1() != 0 || s.getPackB() || s.getColumnsOuter()) {
            return "a conv is scheduled by x0, y0, unroll and relaxedSimd (with vectorize); r0, x1, y1, r1, packB and "
                    + "columnsOuter stay unset";
        }
        return unrollProblem(s);
    }

    /** Most sums one invocation of a WGSL conv holds. */
    public static final int WGSL_MAX_CONV_SUMS = 32;

    /**
     * Why a convolution schedule cannot make a WGSL kernel, or null: one invocation's tile of y0
     * output channels by x0 outputs along a row (y0·x0 ≤ {@value #WGSL_MAX_CONV_SUMS} sums), a
     * workgroup of x1/x0 tiles along a row by y1 output rows (0: 8 each; x1 a multiple of x0).
     * vectorize, r0, r1, unroll and the Wasm primitives stay unset.
     */
    public static String wgslConvProblem(Schedule s) {
        if (s.getX0() < 1 || s.getY0() < 1 || (long) s.getX0() * s.getY0() > WGSL_MAX_CONV_SUMS) {
            return "a WGSL conv's tile is y0 >= 1 channels by x0 >= 1 outputs, at most " + WGSL_MAX_CONV_SUMS + " sums, got "
                    + s.getY0() + "x" + s.getX0();
        }
        if (s.getVectorize() || s.getR0() != 0 || s.getR1() != 0 || s.getUnroll() != 0 || s.getX1() % s.getX0() != 0
                || s.getRelaxedSimd() || s.getPackB() || s.getColumnsOuter() || s.getSplitGrain() != 0) {
            return "a WGSL conv is scheduled by its tile (x0, y0) and workgroup (x1 a multiple of x0 outputs along a row, y1 "
                    + "output rows); vectorize, r0, r1, unroll and the Wasm primitives stay unset";
        }
        return null;
    }

    /**
     * Why a float16-weight matmul schedule cannot make a Wasm kernel, or null: the float matmul's
     * register tile (x0 a multiple of 4, y0·x0/4 sums), B read in place as float16 (no packB) and
     * widened as it is read, or with {@code columnsOuter} each tile of x0 columns widened once into
     * Work and the float tile run over it for every band of rows; {@code unroll} k steps a trip.
     */
    public static String f16Problem(Schedule s) {
        String tile = tileProblem(s, "v128");
        if (tile != null) {
            return tile;
        }
        if (!s.getVectorize() || s.getPackB()) {
            return "a float16-weight matmul is vectorized and reads B in place (widening it): set vectorize, not packB";
        }
        long vectors = (long) s.getY0() * s.getX0() / LANES;
        if (vectors > WASM_MAX_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + vectors + " v128 accumulators; at most "
                    + WASM_MAX_ACCUMULATORS + " fit the registers";
        }
        if (s.getR0() != 0 || s.getX1() != 0 || s.getY1() != 0 || s.getR1() != 0 || s.getRelaxedSimd() && !s.getColumnsOuter()) {
            return "a float16-weight matmul is scheduled by x0, y0, unroll and columnsOuter (with vectorize; relaxedSimd with "
                    + "columnsOuter, for the float tile); r0, x1, y1 and r1 stay 0";
        }
        return unrollProblem(s);
    }

    /** Why a softmax, layer norm, add or mul schedule cannot be compiled, or null: they take vectorize and unroll only. */
    public static String rowOpProblem(Schedule s) {
        if (s.getX0() != 0 || s.getY0() != 0 || s.getR0() != 0 || s.getX1() != 0 || s.getY1() != 0 || s.getR1() != 0
                || s.getRelaxedSimd() || s.getPackB() || s.getColumnsOuter()) {
            return "scheduled by vectorize and unroll only";
        }
        return unrollProblem(s);
    }

    /** Why a matmul schedule cannot make a Wasm kernel, or null; a transposed B read by vectors needs packB. */
    public static String wasmProblem(Schedule s, boolean transposedB) {
        String tile = tileProblem(s, "v128");
        if (tile != null) {
            return tile;
        }
        long accumulators = (long) s.getY0() * (s.getVectorize() ? s.getX0() / LANES : s.getX0());
        if (accumulators > WASM_MAX_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + accumulators
                    + (s.getVectorize() ? " v128" : " f32") + " accumulators; at most " + WASM_MAX_ACCUMULATORS + " fit the registers";
        }
        if (s.getR0() > WASM_MAX_REDUCTION_TILE) {
            return "r0 must be 0 to " + WASM_MAX_REDUCTION_TILE + ", got " + s.getR0();
        }
        String rest = unrollProblem(s);
        if (rest == null) {
            rest = cacheTileProblem(s, "cache tile");
        }
        if (rest == null && s.getRelaxedSimd() && !s.getVectorize()) {
            rest = "relaxedSimd needs vectorize: f32x4.relaxed_madd works on v128 columns";
        }
        if (rest == null && transposedB && s.getVectorize() && !s.getPackB()) {
            rest = "a transposed B has no 4 adjacent columns to load as a v128; "
                    + "with vectorize, also set packB (the pack function transposes it into panels)";
        }
        return rest;
    }

    /**
     * Why a matmul schedule's invocation tile cannot make a WGSL kernel, or null. Whether its
     * workgroup fits an adapter is the adapter's question (its limits).
     */
    public static String wgslTileProblem(Schedule s) {
        String tile = tileProblem(s, "vec4<f32>");
        if (tile != null) {
            return tile;
        }
        long accumulators = (long) s.getY0() * s.getX0();
        if (accumulators > WGSL_MAX_ACCUMULATORS) {
            return "register tile " + s.getY0() + "x" + s.getX0() + " needs " + accumulators
                    + " accumulators per invocation; at most " + WGSL_MAX_ACCUMULATORS;
        }
        if (s.getR0() > WGSL_MAX_REDUCTION_TILE) {
            return "r0 must be 0 to " + WGSL_MAX_REDUCTION_TILE + ", got " + s.getR0();
        }
        String unroll = unrollProblem(s);
        if (unroll != null) {
            return unroll;
        }
        long madds = (long) s.getY0() * (s.getX0() / (s.getVectorize() ? LANES : 1)) * Math.max(1, s.getR0())
                * Math.max(1, s.getUnroll());
        if (madds > WGSL_MAX_UNROLLED_MADDS) {
            return "one trip of the k loop would write out " + madds + " multiply-adds "
                    + "(y0 * x0" + (s.getVectorize() ? "/4" : "") + " * r0 * unroll); at most " + WGSL_MAX_UNROLLED_MADDS
                    + ": choose a smaller tile, r0 or unroll";
        }
        if (s.getRelaxedSimd() || s.getPackB() || s.getColumnsOuter()) {
            return "relaxedSimd, packB and columnsOuter are Wasm's; a WGSL schedule sets none of them";
        }
        return cacheTileProblem(s, "workgroup");
    }

    private static String tileProblem(Schedule s, String vector) {
        if (s.getY0() < 1 || s.getX0() < 1) {
            return "the register tile needs y0 >= 1 rows and x0 >= 1 columns, got y0=" + s.getY0() + ", x0=" + s.getX0();
        }
        if (s.getVectorize() && s.getX0() % LANES != 0) {
            return "a vectorized x0 must be a multiple of 4 (one " + vector + " per 4 columns), got " + s.getX0();
        }
        return null;
    }

    private static String unrollProblem(Schedule s) {
        return s.getUnroll() > MAX_UNROLL ? "unroll must be 0 to " + MAX_UNROLL + ", got " + s.getUnroll() : null;
    }

    private static String cacheTileProblem(Schedule s, String per) {
        if (s.getX1() % s.getX0() != 0) {
            return "x1 must be 0 or a multiple of x0 (whole register tiles per " + per + "), got x1=" + s.getX1() + ", x0=" + s.getX0();
        }
        if (s.getY1() % s.getY0() != 0) {
            return "y1 must be 0 or a multiple of y0 (whole register tiles per " + per + "), got y1=" + s.getY1() + ", y0=" + s.getY0();
        }
        return null;
    }
}
