package dev.jitzoo.compiler.wgsl;

import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.Op;

/**
 * The math the WGSL kernels share with the Wasm ones, as WGSL functions in an f32 and a vec4 form:
 * GELU's tanh and erf forms, SiLU (through tanh) and softmax's exp. They are the Wasm backend's approximations
 * ({@code EpilogueEmitter}, {@code RowOpEmitter}), same constants and same order of operations, so
 * both backends compute the same function: GELU within 3e-7 of the exact one, exp within 2e-7
 * relative. WGSL's own {@code tanh} and {@code exp} are not used: their accuracy is left to the
 * implementation (and {@code erf} does not exist).
 */
final class WgslMath {

    static final float SQRT_2_OVER_PI = 0.7978845608028654f;
    static final float GELU_CUBIC = 0.044715f * SQRT_2_OVER_PI;
    static final float SQRT_HALF = 0.7071067811865476f;
    static final float TANH_CLAMP = 7.90531110763549805f;
    static final float[] TANH_P = {4.89352455891786e-03f, 6.37261928875436e-04f, 1.48572235717979e-05f,
        5.12229709037114e-08f, -8.60467152213735e-11f, 2.00018790482477e-13f, -2.76076847742355e-16f};
    static final float[] TANH_Q = {4.89352518554385e-03f, 2.26843463243900e-03f, 1.18534705686654e-04f,
        1.19825839466702e-06f};
    static final float ERF_CLAMP = 4f;
    static final float[] ERF_P = {-1.60960333262415e-02f, -2.95459980854025e-03f, -7.34990630326855e-04f,
        -5.69250639462346e-05f, -2.10102402082508e-06f, 2.77068142495902e-08f, -2.72614225801306e-10f};
    static final float[] ERF_Q = {-1.42647390514189e-02f, -7.37332916720468e-03f, -1.68282697438203e-03f,
        -2.13374055278905e-04f, -1.45660718464996e-05f};

    static final float LOG2E = 1.44269504088896341f;
    static final float LN2_HI = 0.693359375f;
    static final float LN2_LO = -2.12194440e-4f;
    static final float EXP_MIN = -87.33654f;
    static final float EXP_MAX = 88.0f;
    static final float[] EXP_TAYLOR = {1f, 1f, 1f / 2, 1f / 6, 1f / 24, 1f / 120, 1f / 720};
    /** The most negative finite f32: the start of a max (WGSL has no literal for -infinity). */
    static final float LOWEST = -Float.MAX_VALUE;

    static final String F32 = "f32";
    static final String VEC4 = "vec4<f32>";

    private WgslMath() {
    }

    /** A name's suffix for the f32 or vec4 form of a helper. */
    static String suffix(boolean vector) {
        return vector ? "4" : "1";
    }

    /** The activation functions (GELU's forms, SiLU) an op's epilogue calls, in the f32 or the vec4 form. */
    static void activationFunctions(WgslSource out, Op op, boolean vector) {
        for (Epilogue.Kind kind : new Epilogue.Kind[] {Epilogue.Kind.GELU_TANH, Epilogue.Kind.GELU_ERF, Epilogue.Kind.SILU}) {
            if (op.fuses(kind)) {
                halfPlusHalfTimes(out, kind, vector);
            }
        }
    }

    /**
     * {@code fn gelu_tanh1(x: f32) -> f32} (or {@code gelu_erf4}, {@code silu4} on vec4): 0.5x +
     * 0.5x * tanh(z) with z = x (sqrt(2/pi) + 0.044715 sqrt(2/pi) x^2), 0.5x + 0.5x * erf(x / sqrt 2),
     * or 0.5x + 0.5x * tanh(x / 2) (= x sigmoid(x)); tanh and erf as z P(z^2) / Q(z^2) on the clamped z.
     */
    private static void halfPlusHalfTimes(WgslSource out, Epilogue.Kind kind, boolean vector) {
        String t = vector ? VEC4 : F32;
        boolean tanh = kind != Epilogue.Kind.GELU_ERF;
        float clamp = tanh ? TANH_CLAMP : ERF_CLAMP;
        out.open("fn " + kind.label + suffix(vector) + "(x: " + t + ") -> " + t);
        out.line("let half = x * " + WgslSource.f(0.5f) + ";");
        if (kind == Epilogue.Kind.SILU) {
            out.line("let u = half;");
        } else if (tanh) {
            out.line("let u = (x * x * " + WgslSource.f(GELU_CUBIC) + " + " + WgslSource.f(SQRT_2_OVER_PI) + ") * x;");
        } else {
            out.line("let u = x * " + WgslSource.f(SQRT_HALF) + ";");
        }
        out.line("let z = clamp(u, " + t + "(" + WgslSource.f(-clamp) + "), " + t + "(" + WgslSource.f(clamp) + "));");
        out.line("let z2 = z * z;");
        horner(out, "p", tanh ? TANH_P : ERF_P, "z2", t);
        horner(out, "q", tanh ? TANH_Q : ERF_Q, "z2", t);
        out.line("return half + half * (p * z / q);");
        out.close().blank();
    }

    /** {@code exp1(x: f32) -> f32} and {@code exp4}: x clamped, reduced by ln 2, a degree-6 polynomial, times 2^n. */
    static void expFunction(WgslSource out, boolean vector) {
        String t = vector ? VEC4 : F32;
        out.open("fn exp" + suffix(vector) + "(v: " + t + ") -> " + t);
        out.line("let x = clamp(v, " + t + "(" + WgslSource.f(EXP_MIN) + "), " + t + "(" + WgslSource.f(EXP_MAX) + "));");
        out.line("let n = round(x * " + WgslSource.f(LOG2E) + ");");
        out.line("let r = x - n * " + WgslSource.f(LN2_HI) + " - n * " + WgslSource.f(LN2_LO) + ";");
        horner(out, "p", EXP_TAYLOR, "r", t);
        out.line("return ldexp(p, " + (vector ? "vec4<i32>" : "i32") + "(n));");
        out.close().blank();
    }

    /** {@code var name = c[last]; name = name * t + c[i]; ...} down to c[0]. */
    private static void horner(WgslSource out, String name, float[] c, String t, String type) {
        out.line("var " + name + " = " + type + "(" + WgslSource.f(c[c.length - 1]) + ");");
        for (int i = c.length - 2; i >= 0; i--) {
            out.line(name + " = " + name + " * " + t + " + " + WgslSource.f(c[i]) + ";");
        }
    }

    /**
     * The epilogue on the local {@code var} named {@code value} (f32 or, when {@code vector}, vec4),
     * step by step in the op's order; {@code bias} and {@code residual} are the WGSL expressions of
     * this value's Bias and Residual elements (of the same type).
     */
    static void epilogue(WgslSource out, Op op, String value, boolean vector, String bias, String residual) {
        for (Epilogue step : op.epilogue()) {
            switch (step.kind()) {
                case SCALE -> out.line(value + " = " + value + " * " + WgslSource.f(step.value()) + ";");
                case BIAS -> out.line(value + " = " + value + " + " + bias + ";");
                case RELU -> out.line(value + " = max(" + value + ", " + (vector ? VEC4 + "()" : "0.0f") + ");");
                case GELU_TANH, GELU_ERF, SILU -> out.line(value + " = " + step.kind().label + suffix(vector) + "(" + value + ");");
                case RESIDUAL -> out.line(value + " = " + value + " + " + residual + ";");
            }
        }
    }
}
