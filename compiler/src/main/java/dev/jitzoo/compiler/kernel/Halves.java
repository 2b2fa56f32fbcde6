package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;

/**
 * float16 to float32, exactly, in Wasm (which has no float16 arithmetic): the exponent and mantissa
 * bits moved to float32's places and multiplied by 2^112 (rebiasing the exponent, which also makes
 * float16's subnormals float32's normals), infinity and NaN given float32's all-ones exponent, the
 * sign or-ed back. Four values at a time from i32x4 lanes, or one from an i32.
 */
final class Halves {

    private static final int MAGNITUDE = 0x7FFF;
    private static final int EXPONENT = 0x7C00;
    private static final int SIGN = 0x8000;
    private static final int SHIFT = 13;
    private static final int FLOAT_EXPONENT = 0x7F800000;
    /** 2^112 = 2^(127 − 15): float32's exponent bias less float16's. */
    private static final float REBIAS = 0x1p112f;

    private Halves() {
    }

    /** Pushes the float32x4 of the float16 bits in the i32x4 lanes of {@code bits} (high halves zero). */
    static void widenVector(FunctionBuilder f, int bits) {
        f.localGet(bits).f32x4Const(i32(MAGNITUDE)).simd(SimdOpcode.V128_AND).i32Const(SHIFT).simd(SimdOpcode.I32X4_SHL)
                .f32x4Const(REBIAS).simd(SimdOpcode.F32X4_MUL);
        f.localGet(bits).f32x4Const(i32(EXPONENT)).simd(SimdOpcode.V128_AND).f32x4Const(i32(EXPONENT)).simd(SimdOpcode.I32X4_EQ)
                .f32x4Const(i32(FLOAT_EXPONENT)).simd(SimdOpcode.V128_AND).simd(SimdOpcode.V128_OR);
        f.localGet(bits).f32x4Const(i32(SIGN)).simd(SimdOpcode.V128_AND).i32Const(16).simd(SimdOpcode.I32X4_SHL)
                .simd(SimdOpcode.V128_OR);
    }

    /** Pushes the f32 of the float16 bits in the i32 {@code bits} (high half zero). */
    static void widenScalar(FunctionBuilder f, int bits) {
        f.localGet(bits).i32Const(MAGNITUDE).op(Opcode.I32_AND).i32Const(SHIFT).op(Opcode.I32_SHL).op(Opcode.F32_REINTERPRET_I32)
                .f32Const(REBIAS).op(Opcode.F32_MUL).op(Opcode.I32_REINTERPRET_F32);
        f.i32Const(FLOAT_EXPONENT).i32Const(0)
                .localGet(bits).i32Const(EXPONENT).op(Opcode.I32_AND).i32Const(EXPONENT).op(Opcode.I32_EQ).op(Opcode.SELECT)
                .op(Opcode.I32_OR);
        f.localGet(bits).i32Const(SIGN).op(Opcode.I32_AND).i32Const(16).op(Opcode.I32_SHL).op(Opcode.I32_OR)
                .op(Opcode.F32_REINTERPRET_I32);
    }

    /** A v128.const lane of these i32 bits, as the builder takes constants (four equal f32 lanes, bits kept). */
    private static float i32(int bits) {
        return Float.intBitsToFloat(bits);
    }
}
