package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wgsl.WgslCompiler;
import dev.jitzoo.compiler.wgsl.WgslLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The round_half epilogue in wasmtime: C = [1] × B rounded to float16 is every B value rounded as
 * IEEE 754 rounds to binary16 (ties to even), checked against a rounding written from the
 * definition: every float16 and every midpoint between neighbours, around each binade, the
 * subnormals, past the largest (to infinity), infinities and NaN, in vectors and single columns.
 */
class RoundHalfEpilogueTest {

    private static final WasmCompiler COMPILER = new WasmCompiler();

    @Test
    void roundsEveryValueToItsNearestFloat16TiesToEven() {
        List<Float> values = new ArrayList<>();
        for (int h = 0; h < 0x7C00; h += 7) { // finite halves, a sample of each binade, and the midpoints after them
            double here = F16MatMulKernelTest.half(h), next = F16MatMulKernelTest.half(h + 1);
            for (double v : new double[] {here, (here + next) / 2, Math.nextUp((float) ((here + next) / 2)), here + (next - here) / 4}) {
                values.add((float) v);
                values.add((float) -v);
            }
        }
        Random random = new Random(5);
        for (int i = 0; i < 2000; i++) {
            values.add((float) (random.nextGaussian() * Math.pow(2, random.nextInt(40) - 30)));
        }
        for (float v : new float[] {65504f, 65519.99f, 65520f, 1e6f, -70000f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
            Float.NaN, 0f, -0f, 0x1p-25f, 0x1.8p-25f, 0x1p-24f, 0x1.fffffep-15f, Float.MIN_VALUE}) {
            values.add(v);
        }
        values.add(1f);
        values.add(2f); // 4k + 3 columns: three single ones at the end
        float[] b = new float[values.size()];
        for (int i = 0; i < b.length; i++) {
            b[i] = values.get(i);
        }
        Op op = Op.matmul(1, 1, b.length).withEpilogue(Epilogue.of(Epilogue.Kind.ROUND_HALF));
        float[] got = WasmtimeRunner.run(COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0)), op, new float[] {1f}, b);
        for (int i = 0; i < b.length; i++) {
            float want = roundToHalf(0f + b[i]);
            if (Float.isNaN(want)) {
                assertTrue(Float.isNaN(got[i]), "NaN stays NaN");
            } else {
                assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(got[i]), b[i] + " (column " + i + ")");
            }
        }
    }

    @Test
    void hasNoWgslForm() {
        Op op = Op.matmul(4, 4, 4).withEpilogue(Epilogue.of(Epilogue.Kind.ROUND_HALF));
        assertTrue(assertThrows(InvalidKernelException.class, () -> new WgslCompiler().compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0),
                WgslLimits.WEBGPU_DEFAULTS)).getMessage().contains("round_half"));
    }

    /** x rounded to binary16 by the definition: the nearest representable, ties to the even significand. */
    static float roundToHalf(float x) {
        if (Float.isNaN(x) || Float.isInfinite(x)) {
            return x;
        }
        double a = Math.abs(x);
        if (a >= 65520) {
            return Math.copySign(Float.POSITIVE_INFINITY, x);
        }
        double ulp = a < 0x1p-14 ? 0x1p-24 : Math.pow(2, Math.getExponent(a) - 10);
        double q = a / ulp, floor = Math.floor(q);
        double r = q - floor > 0.5 || q - floor == 0.5 && floor % 2 == 1 ? floor + 1 : floor;
        return (float) Math.copySign(r * ulp, x);
    }
}
