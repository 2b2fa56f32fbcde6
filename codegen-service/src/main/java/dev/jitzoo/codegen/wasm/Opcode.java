package dev.jitzoo.codegen.wasm;

/**
 * The core (single-byte) instructions the kernels use, with their byte values. Memory accesses
 * carry their natural alignment (log2 of the access width), the largest alignment hint allowed.
 */
public enum Opcode {
    UNREACHABLE(0x00), NOP(0x01),
    BLOCK(0x02), LOOP(0x03), IF(0x04), ELSE(0x05), END(0x0B), BR(0x0C), BR_IF(0x0D), RETURN(0x0F),
    DROP(0x1A), SELECT(0x1B),
    LOCAL_GET(0x20), LOCAL_SET(0x21), LOCAL_TEE(0x22),
    I32_LOAD(0x28, 2), F32_LOAD(0x2A, 2), I32_STORE(0x36, 2), F32_STORE(0x38, 2),
    I32_CONST(0x41), F32_CONST(0x43),
    I32_EQZ(0x45), I32_EQ(0x46), I32_NE(0x47), I32_LT_S(0x48), I32_LT_U(0x49), I32_GT_U(0x4B),
    I32_ADD(0x6A), I32_SUB(0x6B), I32_MUL(0x6C), I32_DIV_U(0x6E), I32_REM_U(0x70),
    I32_AND(0x71), I32_SHL(0x74), I32_SHR_U(0x76),
    F32_ADD(0x92), F32_SUB(0x93), F32_MUL(0x94), F32_DIV(0x95), F32_MIN(0x96), F32_MAX(0x97);

    public final int code;
    /** log2 of the access width in bytes for loads and stores; -1 for every other instruction. */
    public final int naturalAlignment;

    Opcode(int code) {
        this(code, -1);
    }

    Opcode(int code, int naturalAlignment) {
        this.code = code;
        this.naturalAlignment = naturalAlignment;
    }

    public boolean accessesMemory() {
        return naturalAlignment >= 0;
    }
}
