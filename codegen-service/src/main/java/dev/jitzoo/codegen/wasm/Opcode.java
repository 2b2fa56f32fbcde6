package dev.jitzoo.codegen.wasm;

/** The core Wasm instructions the kernels use, with their byte values. */
public enum Opcode {
    BLOCK(0x02), LOOP(0x03), END(0x0B), BR_IF(0x0D),
    LOCAL_GET(0x20), LOCAL_SET(0x21), LOCAL_TEE(0x22),
    F32_LOAD(0x2A), F32_STORE(0x38),
    I32_CONST(0x41), F32_CONST(0x43),
    I32_EQZ(0x45), I32_NE(0x47),
    I32_ADD(0x6A), I32_SUB(0x6B),
    F32_ADD(0x92), F32_MUL(0x94),
    SIMD_PREFIX(0xFD);

    public final int code;

    Opcode(int code) {
        this.code = code;
    }
}
