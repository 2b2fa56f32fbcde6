package dev.jitzoo.compiler.wasm;

/**
 * The core (single-byte) instructions the kernels use, with their byte values and stack effects
 * (pops, pushes). Memory accesses carry their natural alignment (log2 of the access width), the
 * largest alignment hint allowed. Control and local instructions take immediates and are written
 * by the encoder from the IR's statements; they appear here for their byte values.
 */
public enum Opcode implements Instruction {
    BLOCK(0x02), LOOP(0x03), IF(0x04), ELSE(0x05), END(0x0B), BR(0x0C), BR_IF(0x0D),
    DROP(0x1A, 1, false), SELECT(0x1B, 3, true),
    LOCAL_GET(0x20), LOCAL_SET(0x21), LOCAL_TEE(0x22),
    I32_LOAD(0x28, ValType.I32), F32_LOAD(0x2A, ValType.F32), I32_STORE(0x36, 2), F32_STORE(0x38, 2),
    /** One byte, zero-extended; one byte or two stored (int8 weights packed, an int8 matmul's Work). */
    I32_LOAD8_U(0x2D, 1, true, 0, ValType.I32), I32_LOAD16_U(0x2F, 1, true, 1, ValType.I32), I32_STORE8(0x3A, 2, false, 0, null), I32_STORE16(0x3B, 2, false, 1, null),
    I32_CONST(0x41), F32_CONST(0x43),
    I32_EQZ(0x45, 1, true), F32_EQ(0x5B, 2, true), I32_EQ(0x46, 2, true), I32_NE(0x47, 2, true), I32_LT_S(0x48, 2, true),
    I32_LT_U(0x49, 2, true), I32_GT_U(0x4B, 2, true),
    I32_ADD(0x6A, 2, true), I32_SUB(0x6B, 2, true), I32_MUL(0x6C, 2, true), I32_DIV_U(0x6E, 2, true),
    I32_REM_U(0x70, 2, true), I32_AND(0x71, 2, true), I32_OR(0x72, 2, true), I32_SHL(0x74, 2, true), I32_SHR_U(0x76, 2, true),
    F32_ABS(0x8B, 1, true), F32_NEG(0x8C, 1, true), F32_NEAREST(0x90, 1, true), F32_SQRT(0x91, 1, true),
    F32_ADD(0x92, 2, true), F32_SUB(0x93, 2, true), F32_MUL(0x94, 2, true), F32_DIV(0x95, 2, true),
    F32_MIN(0x96, 2, true), F32_MAX(0x97, 2, true), F32_COPYSIGN(0x98, 2, true),
    F32_NE(0x5C, 2, true), F32_LT(0x5D, 2, true), F32_GT(0x5E, 2, true),
    I32_TRUNC_F32_S(0xA8, 1, true), F32_CONVERT_I32_S(0xB2, 1, true),
    I32_REINTERPRET_F32(0xBC, 1, true), F32_REINTERPRET_I32(0xBE, 1, true);

    public final int code;
    private final int pops;
    private final boolean pushes;
    private final int naturalAlignment;
    private final ValType loads;

    /** An instruction with immediates, written by the encoder itself. */
    Opcode(int code) {
        this(code, 0, false, -1, null);
    }

    Opcode(int code, int pops, boolean pushes) {
        this(code, pops, pushes, -1, null);
    }

    /** A 4-byte load of {@code type}. */
    Opcode(int code, ValType type) {
        this(code, 1, true, 2, type);
    }

    /** A 4-byte store: address and value. */
    Opcode(int code, int pops) {
        this(code, pops, false, 2, null);
    }

    Opcode(int code, int pops, boolean pushes, int naturalAlignment, ValType loads) {
        this.code = code;
        this.pops = pops;
        this.pushes = pushes;
        this.naturalAlignment = naturalAlignment;
        this.loads = loads;
    }

    @Override
    public void writeOpcode(ByteWriter out) {
        out.u8(code);
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
        return loads;
    }

    /** Whether the IR builder takes it as a plain instruction (no immediates of its own). */
    boolean isPlain() {
        return pops > 0 && !accessesMemory();
    }
}
