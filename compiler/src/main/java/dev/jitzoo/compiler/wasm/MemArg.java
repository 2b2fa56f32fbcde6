package dev.jitzoo.compiler.wasm;

/**
 * The immediate of a load or store: an alignment hint (log2 bytes) and a constant byte offset
 * added to the address operand. Kernels put row and column strides in the offset so the inner
 * loops do no address arithmetic.
 */
public record MemArg(int alignLog2, long offset) {

    /** 4-byte alignment: all that ABI v1 guarantees for float operands. */
    public static final int ALIGN_FLOAT = 2;

    public MemArg {
        if (alignLog2 < 0 || alignLog2 > 4) {
            throw new IllegalArgumentException("alignment hint must be 0..4 (log2 bytes), got " + alignLog2);
        }
        if (offset < 0 || offset > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("memarg offset must fit a u32, got " + offset);
        }
    }

    /** A float-aligned access at {@code offset}. */
    public static MemArg floatAt(long offset) {
        return new MemArg(ALIGN_FLOAT, offset);
    }
}
