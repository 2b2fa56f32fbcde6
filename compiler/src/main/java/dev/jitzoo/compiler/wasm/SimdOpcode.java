package dev.jitzoo.compiler.wasm;

/**
 * SIMD128 instructions: the prefix byte 0xFD, then the sub-opcode below as an unsigned LEB128
 * (so {@code f32x4.add}, 228, is written FD E4 01). Numbering from the final SIMD spec, which
 * renumbered everything the pre-standard drafts used; relaxed SIMD from its final spec.
 */
public enum SimdOpcode implements Instruction {
    V128_LOAD(0x00, 1, true, 4),
    /** Eight bytes, each sign-extended to an i16 lane (int8 weights, widened as they load). */
    V128_LOAD8X8_S(0x01, 1, true, 3),
    /** Four u16 (float16 bits), each zero-extended to an i32 lane. */
    V128_LOAD16X4_U(0x04, 1, true, 3),
    V128_LOAD32_SPLAT(0x09, 1, true, 2), V128_STORE(0x0B, 2, false, 4),
    V128_CONST(0x0C, 0, true, -1),
    F32X4_SPLAT(0x13, 1, true, -1), F32X4_EXTRACT_LANE(0x1F, 1, true, -1), F32X4_REPLACE_LANE(0x20, 2, true, -1),
    V128_LOAD32_ZERO(0x5C, 1, true, 2),
    /** Bitwise and (a 4-bit weight's nibble masked out of its lane). */
    V128_AND(0x4E, 2, true, -1),
    F32X4_NEAREST(0x6A, 1, true, -1),
    /** Eight i32 lanes of two vectors saturated to i16, the first vector's in the low half. */
    I16X8_NARROW_I32X4_S(0x85, 2, true, -1),
    I32X4_EQ(0x37, 2, true, -1), F32X4_NE(0x42, 2, true, -1), F32X4_LT(0x43, 2, true, -1), F32X4_GT(0x44, 2, true, -1),
    V128_OR(0x50, 2, true, -1),
    /** (a & mask) | (b & ~mask), for a, b, mask in that order. */
    V128_BITSELECT(0x52, 3, true, -1),
    I32X4_SHL(0xAB, 2, true, -1), I32X4_SHR_U(0xAD, 2, true, -1), I32X4_ADD(0xAE, 2, true, -1),
    F32X4_ABS(0xE0, 1, true, -1), F32X4_SQRT(0xE3, 1, true, -1),
    F32X4_ADD(0xE4, 2, true, -1), F32X4_SUB(0xE5, 2, true, -1), F32X4_MUL(0xE6, 2, true, -1),
    F32X4_DIV(0xE7, 2, true, -1), F32X4_MIN(0xE8, 2, true, -1), F32X4_MAX(0xE9, 2, true, -1),
    /** Products of eight i16 pairs, adjacent pairs summed: four i32 lanes (the int8 matmul's step). */
    I32X4_DOT_I16X8_S(0xBA, 2, true, -1),
    I32X4_TRUNC_SAT_F32X4_S(0xF8, 1, true, -1), F32X4_CONVERT_I32X4_S(0xFA, 1, true, -1),
    /** a * b + c with or without an intermediate rounding; not every engine enables it yet (Node 20 needs a flag). */
    F32X4_RELAXED_MADD(0x105, 3, true, -1);

    public static final int PREFIX = 0xFD;

    public final int code;
    private final int pops;
    private final boolean pushes;
    private final int naturalAlignment;

    SimdOpcode(int code, int pops, boolean pushes, int naturalAlignment) {
        this.code = code;
        this.pops = pops;
        this.pushes = pushes;
        this.naturalAlignment = naturalAlignment;
    }

    @Override
    public void writeOpcode(ByteWriter out) {
        out.u8(PREFIX).varU32(code);
    }

    @Override
    public int pops() {
        return pops;
    }

    @Override
    public boolean pushes() {
        return pushes;
    }

    @Override
    public int naturalAlignment() {
        return naturalAlignment;
    }

    @Override
    public ValType loads() {
        return accessesMemory() && pushes ? ValType.V128 : null;
    }

    /** Whether the IR builder takes it as a plain instruction (no immediates of its own). */
    boolean isPlain() {
        return pops > 0 && !accessesMemory() && this != F32X4_EXTRACT_LANE && this != F32X4_REPLACE_LANE;
    }
}
