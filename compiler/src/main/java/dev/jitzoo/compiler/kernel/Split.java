package dev.jitzoo.compiler.kernel;

/**
 * The parallel primitive: how a kernel's work splits into units that workers compute side by side
 * over one shared memory (ABI v2, docs/kernel-abi.md). {@link Axis#ROWS}: a unit is {@code grain}
 * consecutive rows of C within one batch (a matmul's M, a row op's rows, an element-wise op's
 * elements); the last unit of a batch holds what is left. No two units write the same byte, so any
 * partition of the units among workers computes C exactly once. {@link Axis#COLUMNS}: a unit is
 * {@code grain} consecutive columns of a one-row matmul's C (B packed in panels), the last unit what
 * is left. {@link #NONE}: one call computes everything (ABI v1).
 */
public record Split(Axis axis, int grain) {

    public enum Axis {
        NONE("none"),
        ROWS("rows"),
        COLUMNS("columns");

        public final String label;

        Axis(String label) {
            this.label = label;
        }
    }

    public static final Split NONE = new Split(Axis.NONE, 0);

    public Split {
        if (axis == null) {
            axis = Axis.NONE;
        }
        if (axis == Axis.NONE && grain != 0) {
            throw new InvalidKernelException("a split grain needs a split axis (rows), got grain " + grain);
        }
        if (axis != Axis.NONE && grain < 1) {
            throw new InvalidKernelException("a split along " + axis.label + " needs a grain of at least 1, got " + grain);
        }
    }

    /** Units of {@code grain} rows. */
    public static Split rows(int grain) {
        return new Split(Axis.ROWS, grain);
    }

    /** Units of {@code grain} columns of a one-row matmul. */
    public static Split columns(int grain) {
        return new Split(Axis.COLUMNS, grain);
    }

    public boolean isSplit() {
        return axis != Axis.NONE;
    }

    @Override
    public String toString() {
        return axis.label + ":" + grain;
    }
}
