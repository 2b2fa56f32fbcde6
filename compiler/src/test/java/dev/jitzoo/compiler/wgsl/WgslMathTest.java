package dev.jitzoo.compiler.wgsl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.ReferenceKernels;
import org.junit.jupiter.api.Test;

/**
 * The approximations the shaders compute, evaluated here in float exactly as the emitted WGSL
 * writes them, against the exact functions; and the literals they are written with.
 */
class WgslMathTest {

    /** What {@code gelu_tanh1} / {@code gelu_erf1} compute, step by step in f32, without the 0.5x + 0.5x * t. */
    private static float rational(float x, boolean tanh) {
        return rationalOf(tanh ? (x * x * WgslMath.GELU_CUBIC + WgslMath.SQRT_2_OVER_PI) * x : x * WgslMath.SQRT_HALF, tanh);
    }

    /** tanh(u) or erf(u) as the shaders approximate them. */
    private static float rationalOf(float u, boolean tanh) {
        float clamp = tanh ? WgslMath.TANH_CLAMP : WgslMath.ERF_CLAMP;
        float z = Math.max(-clamp, Math.min(clamp, u));
        float z2 = z * z;
        float p = horner(tanh ? WgslMath.TANH_P : WgslMath.ERF_P, z2);
        float q = horner(tanh ? WgslMath.TANH_Q : WgslMath.ERF_Q, z2);
        return p * z / q;
    }

    private static float horner(float[] c, float t) {
        float p = c[c.length - 1];
        for (int i = c.length - 2; i >= 0; i--) {
            p = p * t + c[i];
        }
        return p;
    }

    /** What {@code exp1} computes. */
    private static float exp(float v) {
        float x = Math.max(WgslMath.EXP_MIN, Math.min(WgslMath.EXP_MAX, v));
        float n = (float) Math.rint(x * WgslMath.LOG2E);
        float r = x - n * WgslMath.LN2_HI - n * WgslMath.LN2_LO;
        return Math.scalb(horner(WgslMath.EXP_TAYLOR, r), (int) n);
    }

    @Test
    void tanhErfAndSiluAreWithinTheirBoundOfTheExactFunctions() {
        double worstTanh = 0, worstErf = 0;
        for (int i = -200_000; i <= 200_000; i++) {
            float x = i * 6e-5f;
            double z = (x * x * WgslMath.GELU_CUBIC + WgslMath.SQRT_2_OVER_PI) * (double) x;
            worstTanh = Math.max(worstTanh, Math.abs(rational(x, true) - Math.tanh(Math.max(-WgslMath.TANH_CLAMP,
                    Math.min(WgslMath.TANH_CLAMP, z)))));
            worstErf = Math.max(worstErf, Math.abs(rational(x, false) - ReferenceKernels.erf(x * (double) WgslMath.SQRT_HALF)));
        }
        assertTrue(worstTanh < 5e-7, "tanh " + worstTanh);
        assertTrue(worstErf < 5e-7, "erf " + worstErf);
        assertEquals(1f, rational(1e6f, true), 1e-6f, "clamped, no overflow");
        double worstSilu = 0;
        for (int i = -200_000; i <= 200_000; i++) {
            float x = i * 2e-4f;
            float half = x * 0.5f, silu = half + half * rationalOf(half, true); // what silu1 computes
            worstSilu = Math.max(worstSilu, Math.abs(silu - x / (1 + Math.exp(-x))));
        }
        assertTrue(worstSilu < 1e-5, "silu " + worstSilu);
        assertEquals(-1f, rational(-1e6f, false), 1e-6f);
    }

    @Test
    void expIsWithinItsRelativeBound() {
        double worst = 0;
        for (int i = 0; i <= 400_000; i++) {
            float x = -87f + i * (87f + 88f) / 400_000;
            double exact = Math.exp(x);
            worst = Math.max(worst, Math.abs(exp(x) - exact) / exact);
        }
        assertTrue(worst < 3e-7, "exp relative error " + worst);
        assertEquals(0f, exp(-1e9f), 1e-37f, "clamped below");
    }

    @Test
    void literalsReadBackExactly() {
        assertEquals("0.125f", WgslSource.f(0.125f));
        assertEquals("(-0.5f)", WgslSource.f(-0.5f));
        assertEquals("1.0e-5f", WgslSource.f(1e-5f));
        assertEquals("0x1.fffffep127f", WgslSource.f(Float.MAX_VALUE), "3.4028235e38 is above the largest f32 as a decimal");
        assertEquals("(-0x1.fffffep127f)", WgslSource.f(-Float.MAX_VALUE));
        for (float value : new float[] {0.1f, 1f / 3, 0.7978846f, 1.4E-45f, 1.17549435E-38f, 123456.79f, 2.76076847742355e-16f}) {
            String literal = WgslSource.f(value);
            String body = literal.replace("(-", "").replace(")", "");
            body = body.substring(0, body.length() - 1);
            float read = body.startsWith("0x") ? (float) Double.parseDouble(body + (body.contains("p") ? "" : "p0"))
                    : (float) Double.parseDouble(body);
            assertEquals(value, read, 0f, literal);
        }
        assertThrows(IllegalArgumentException.class, () -> WgslSource.f(Float.NEGATIVE_INFINITY));
        assertEquals("7u", WgslSource.u(7));
    }

    @Test
    void onlyTheGeluFormsAnEpilogueCallsAreWritten() {
        WgslSource out = new WgslSource();
        WgslMath.activationFunctions(out, Op.matmul(2, 2, 2).withEpilogue(Epilogue.of(Epilogue.Kind.GELU_TANH)), true);
        String text = out.toString();
        assertTrue(text.contains("fn gelu_tanh4(x: vec4<f32>) -> vec4<f32>") && !text.contains("gelu_erf"), text);
        assertTrue(text.contains("clamp(u, vec4<f32>((-7.905311f)), vec4<f32>(7.905311f))"), text);
        WgslSource silu = new WgslSource();
        WgslMath.activationFunctions(silu, Op.matmul(2, 2, 2).withEpilogue(Epilogue.of(Epilogue.Kind.SILU)), false);
        assertTrue(silu.toString().contains("fn silu1(x: f32) -> f32") && silu.toString().contains("let u = half;")
                && !silu.toString().contains("gelu"), silu.toString());
    }
}
