package dev.jitzoo.codegen.wasm;

/** SIMD128 instructions (after the 0xFD prefix), with their LEB128-encoded sub-opcodes. */
public enum SimdOpcode {
    V128_LOAD(0x00), V128_LOAD32_SPLAT(0x09), V128_STORE(0x0B), V128_CONST(0x0C),
    F32X4_SPLAT(0x13), F32X4_ADD(0xE4), F32X4_MUL(0xE6);

    public final int code;

    SimdOpcode(int code) {
        this.code = code;
    }
}
