package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.Instruction;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;

/**
 * Emits an op's epilogue on one value held in a local: a v128 of four adjacent outputs or a single
 * f32, rewritten in place, step by step. GELU's tanh and erf are rational approximations (the ones
 * Eigen uses for float: inputs clamped, then an odd polynomial over an even one), within 3e-7 of
 * the exact functions, written with mul/add/div/min/max only so both widths share one code path.
 * SiLU is the same form: x sigmoid(x) = 0.5x + 0.5x tanh(x / 2).
 */
final class EpilogueEmitter {

    /** Where the epilogue's operands are: pushes the address of this value's Bias or Residual element. */
    interface Operands {
        void pushBias();

        void pushResidual();

        /** Whether the bias is one value for the whole local (a convolution's, per output channel), broadcast to its lanes. */
        default boolean biasBroadcast() {
            return false;
        }
    }

    private static final float SQRT_2_OVER_PI = 0.7978845608028654f;
    private static final float GELU_CUBIC = 0.044715f * SQRT_2_OVER_PI;
    private static final float SQRT_HALF = 0.7071067811865476f;
    private static final float TANH_CLAMP = 7.90531110763549805f;
    private static final float[] TANH_P = {4.89352455891786e-03f, 6.37261928875436e-04f, 1.48572235717979e-05f,
        5.12229709037114e-08f, -8.60467152213735e-11f, 2.00018790482477e-13f, -2.76076847742355e-16f};
    private static final float[] TANH_Q = {4.89352518554385e-03f, 2.26843463243900e-03f, 1.18534705686654e-04f,
        1.19825839466702e-06f};
    private static final float ERF_CLAMP = 4f;
    private static final float[] ERF_P = {-1.60960333262415e-02f, -2.95459980854025e-03f, -7.34990630326855e-04f,
        -5.69250639462346e-05f, -2.10102402082508e-06f, 2.77068142495902e-08f, -2.72614225801306e-10f};
    private static final float[] ERF_Q = {-1.42647390514189e-02f, -7.37332916720468e-03f, -1.68282697438203e-03f,
        -2.13374055278905e-04f, -1.45660718464996e-05f};

    private final FunctionBuilder f;
    private final LocalPool pool;
    private final boolean vector;

    private EpilogueEmitter(FunctionBuilder f, LocalPool pool, boolean vector) {
        this.f = f;
        this.pool = pool;
        this.vector = vector;
    }

    /** {@code value = epilogue(value)} for the local {@code value} (v128 when {@code vector}, else f32). */
    static void apply(FunctionBuilder f, LocalPool pool, Op op, boolean vector, int value, Operands operands) {
        EpilogueEmitter e = new EpilogueEmitter(f, pool, vector);
        for (Epilogue step : op.epilogue()) {
            switch (step.kind()) {
                case SCALE -> {
                    f.localGet(value);
                    e.constant(step.value());
                    e.op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
                }
                case BIAS -> {
                    f.localGet(value);
                    operands.pushBias();
                    if (vector && operands.biasBroadcast()) {
                        f.memory(SimdOpcode.V128_LOAD32_SPLAT, dev.jitzoo.compiler.wasm.MemArg.floatAt(0));
                    } else {
                        e.load();
                    }
                    e.op(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
                }
                case RESIDUAL -> {
                    f.localGet(value);
                    operands.pushResidual();
                    e.load();
                    e.op(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
                }
                case RELU -> {
                    f.localGet(value);
                    e.constant(0f);
                    e.op(SimdOpcode.F32X4_MAX, Opcode.F32_MAX);
                }
                case GELU_TANH, GELU_ERF, SILU -> e.halfPlusHalfTimes(value, step.kind());
                case ROUND_HALF -> e.roundToHalf(value);
            }
            f.localSet(value);
        }
    }

    /**
     * Pushes 0.5x + 0.5x * t(z) for x in {@code value}: GELU's tanh form (t = tanh, z =
     * sqrt(2/pi) (x + 0.044715 x^3)), its erf form (t = erf, z = x / sqrt 2), or SiLU (t = tanh,
     * z = x / 2).
     */
    private void halfPlusHalfTimes(int value, Epilogue.Kind kind) {
        boolean tanh = kind != Epilogue.Kind.GELU_ERF;
        int z = temp("epi.z"), z2 = temp("epi.z2"), half = temp("epi.half");
        f.localGet(value);
        constant(0.5f);
        op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        f.localSet(half);
        if (kind == Epilogue.Kind.SILU) {
            f.localGet(half);
        } else if (tanh) {
            // z = x (sqrt(2/pi) + 0.044715 sqrt(2/pi) x^2)
            f.localGet(value).localGet(value);
            op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
            constant(GELU_CUBIC);
            op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
            constant(SQRT_2_OVER_PI);
            op(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
            f.localGet(value);
            op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        } else {
            f.localGet(value);
            constant(SQRT_HALF);
            op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        }
        float clamp = tanh ? TANH_CLAMP : ERF_CLAMP;
        constant(clamp);
        op(SimdOpcode.F32X4_MIN, Opcode.F32_MIN);
        constant(-clamp);
        op(SimdOpcode.F32X4_MAX, Opcode.F32_MAX);
        f.localTee(z).localGet(z);
        op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        f.localSet(z2);
        // rational: z * P(z^2) / Q(z^2), then 0.5x + 0.5x * that
        f.localGet(half).localGet(half);
        horner(tanh ? TANH_P : ERF_P, z2);
        f.localGet(z);
        op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        horner(tanh ? TANH_Q : ERF_Q, z2);
        op(SimdOpcode.F32X4_DIV, Opcode.F32_DIV);
        op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
        op(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
    }

    /**
     * Pushes x in {@code value} rounded to the nearest float16, ties to even, as float32: from 2^-14
     * up, 13 mantissa bits dropped with integer arithmetic (adding 0xFFF plus the last kept bit, a
     * carry moving into the exponent as it should), past 65504 infinity of x's sign; below 2^-14 (a
     * float16 subnormal) nearest(x · 2^24) · 2^-24; NaN as it is.
     */
    private void roundToHalf(int value) {
        int rounded = temp("epi.rounded");
        if (vector) {
            f.localGet(value).localGet(value).i32Const(MANTISSA_DROPPED).simd(SimdOpcode.I32X4_SHR_U).f32x4Const(i32(1))
                    .simd(SimdOpcode.V128_AND).simd(SimdOpcode.I32X4_ADD).f32x4Const(i32(ROUND_UP)).simd(SimdOpcode.I32X4_ADD)
                    .f32x4Const(i32(~DROPPED_BITS)).simd(SimdOpcode.V128_AND).localSet(rounded);
            // past the largest half: infinity with x's sign
            f.f32x4Const(i32(SIGN_BIT)).localGet(value).simd(SimdOpcode.V128_AND).f32x4Const(Float.POSITIVE_INFINITY)
                    .simd(SimdOpcode.V128_OR).localGet(rounded)
                    .localGet(rounded).simd(SimdOpcode.F32X4_ABS).f32x4Const(HALF_MAX).simd(SimdOpcode.F32X4_GT)
                    .simd(SimdOpcode.V128_BITSELECT).localSet(rounded);
            // a float16 subnormal: to a multiple of 2^-24
            f.localGet(value).f32x4Const(0x1p24f).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_NEAREST)
                    .f32x4Const(0x1p-24f).simd(SimdOpcode.F32X4_MUL).localGet(rounded)
                    .localGet(value).simd(SimdOpcode.F32X4_ABS).f32x4Const(HALF_MIN_NORMAL).simd(SimdOpcode.F32X4_LT)
                    .simd(SimdOpcode.V128_BITSELECT);
            // NaN: itself
            f.localSet(rounded);
            f.localGet(value).localGet(rounded).localGet(value).localGet(value).simd(SimdOpcode.F32X4_NE).simd(SimdOpcode.V128_BITSELECT);
            return;
        }
        f.localGet(value).op(Opcode.I32_REINTERPRET_F32).localGet(value).op(Opcode.I32_REINTERPRET_F32)
                .i32Const(MANTISSA_DROPPED).op(Opcode.I32_SHR_U).i32Const(1).op(Opcode.I32_AND).op(Opcode.I32_ADD)
                .i32Const(ROUND_UP).op(Opcode.I32_ADD).i32Const(~DROPPED_BITS).op(Opcode.I32_AND).op(Opcode.F32_REINTERPRET_I32)
                .localSet(rounded);
        f.f32Const(Float.POSITIVE_INFINITY).localGet(value).op(Opcode.F32_COPYSIGN).localGet(rounded)
                .localGet(rounded).op(Opcode.F32_ABS).f32Const(HALF_MAX).op(Opcode.F32_GT).op(Opcode.SELECT).localSet(rounded);
        f.localGet(value).f32Const(0x1p24f).op(Opcode.F32_MUL).op(Opcode.F32_NEAREST).f32Const(0x1p-24f).op(Opcode.F32_MUL)
                .localGet(rounded).localGet(value).op(Opcode.F32_ABS).f32Const(HALF_MIN_NORMAL).op(Opcode.F32_LT).op(Opcode.SELECT)
                .localSet(rounded);
        f.localGet(value).localGet(rounded).localGet(value).localGet(value).op(Opcode.F32_NE).op(Opcode.SELECT);
    }

    private static final int MANTISSA_DROPPED = 13;
    private static final int ROUND_UP = 0xFFF;
    private static final int DROPPED_BITS = 0x1FFF;
    private static final int SIGN_BIT = 0x80000000;
    private static final float HALF_MAX = 65504f;
    private static final float HALF_MIN_NORMAL = 0x1p-14f;

    /** A v128.const lane of these i32 bits (the builder takes four equal f32 lanes, bits kept). */
    private static float i32(int bits) {
        return Float.intBitsToFloat(bits);
    }

    /** Pushes c[0] + c[1] t + c[2] t^2 + ... for t in the local {@code t}. */
    private void horner(float[] c, int t) {
        constant(c[c.length - 1]);
        for (int i = c.length - 2; i >= 0; i--) {
            f.localGet(t);
            op(SimdOpcode.F32X4_MUL, Opcode.F32_MUL);
            constant(c[i]);
            op(SimdOpcode.F32X4_ADD, Opcode.F32_ADD);
        }
    }

    private void constant(float value) {
        if (vector) {
            f.f32x4Const(value);
        } else {
            f.f32Const(value);
        }
    }

    private void op(SimdOpcode wide, Opcode narrow) {
        if (vector) {
            f.simd(wide);
        } else {
            f.op(narrow);
        }
    }

    private void load() {
        Instruction load = vector ? SimdOpcode.V128_LOAD : Opcode.F32_LOAD;
        f.memory(load, dev.jitzoo.compiler.wasm.MemArg.floatAt(0));
    }

    private int temp(String role) {
        return pool.one(role, vector ? ValType.V128 : ValType.F32);
    }
}
