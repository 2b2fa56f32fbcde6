package dev.jitzoo.codegen.wasm;

/**
 * SIMD128 instructions: the prefix byte 0xFD, then the sub-opcode below as an unsigned LEB128
 * (so {@code f32x4.add}, 228, is written FD E4 01). Numbering from the final SIMD spec, which
 * renumbered everything the pre-standard drafts used.
 */
public enum SimdOpcode {
    V128_LOAD(0x00, 4), V128_LOAD32_SPLAT(0x09, 2), V128_STORE(0x0B, 4), V128_CONST(0x0C),
    F32X4_SPLAT(0x13), F32X4_EXTRACT_LANE(0x1F), F32X4_REPLACE_LANE(0x20),
    V128_LOAD32_ZERO(0x5C, 2),
    F32X4_ADD(0xE4), F32X4_SUB(0xE5), F32X4_MUL(0xE6), F32X4_DIV(0xE7), F32X4_MIN(0xE8), F32X4_MAX(0xE9),
    /** Relaxed SIMD; not every engine enables it yet (Node 20 needs a flag). */
    F32X4_RELAXED_MADD(0x105);

    public static final int PREFIX = 0xFD;

    public final int code;
    /** log2 of the access width in bytes for loads and stores; -1 for every other instruction. */
    public final int naturalAlignment;

    SimdOpcode(int code) {
        this(code, -1);
    }

    SimdOpcode(int code, int naturalAlignment) {
        this.code = code;
        this.naturalAlignment = naturalAlignment;
    }

    public boolean accessesMemory() {
        return naturalAlignment >= 0;
    }
}
