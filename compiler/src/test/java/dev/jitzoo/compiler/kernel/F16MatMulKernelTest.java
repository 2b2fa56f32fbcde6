package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * float16-weight matmul kernels in wasmtime: every float16 value widened exactly (all 65,536 bit
 * patterns, direct and staged), and products against the reference in double on odd shapes, tile
 * forms, both loop orders and the epilogues.
 */
class F16MatMulKernelTest {

    private static final double TOLERANCE = 1e-5;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    static Stream<Arguments> cases() {
        List<Schedule> schedules = new ArrayList<>();
        for (int[] tile : new int[][] {{4, 1}, {8, 3}, {12, 2}, {16, 1}, {4, 6}}) {
            for (int unroll : new int[] {0, 2, 3}) {
                Schedule direct = new Schedule(tile[0], tile[1], 0, 0, 0, 0, true, unroll);
                schedules.add(direct);
                schedules.add(direct.withColumnsOuter(true)); // staged where M >= x0, else direct
            }
        }
        return KernelCases.everyOpWithEverySchedule(KernelCases.withEpilogues(OpKind.MATMUL_F16, new int[][] {{1, 1, 1}, {1, 32, 4}, {3, 5, 7}, {7, 33, 17}, {17, 64, 36}, {12, 31, 9}}), schedules);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheReference(Op op, Schedule schedule) {
        KernelCases.assertMatchesSeeded(op, schedule, F16MatMulKernelTest::inputs, F16MatMulKernelTest::reference, TOLERANCE);
    }

    @Test
    void everyFloat16IsWidenedExactly() {
        // C = [1 ... 1]^T x B with B one row of all 65,536 bit patterns: C's rows are B widened
        int n = 1 << 16;
        Op op = new Op(OpKind.MATMUL_F16, 4, 1, n);
        byte[] b = new byte[2 * n];
        for (int h = 0; h < n; h++) {
            b[2 * h] = (byte) h;
            b[2 * h + 1] = (byte) (h >> 8);
        }
        Map<String, Object> inputs = Map.of("A", new float[] {1, 1, 1, 1}, "B", b);
        for (Schedule schedule : List.of(new Schedule(8, 2, 0, 0, 0, 0, true, 0), new Schedule(4, 1, 0, 0, 0, 0, true, 0).withColumnsOuter(true))) {
            float[] got = WasmtimeRunner.run(COMPILER.compile(op, schedule), op, inputs, 0);
            for (int h = 0; h < n; h++) {
                double want = 0.0 + half(h); // a sum from +0: -0 comes out +0
                if (Double.isNaN(want)) {
                    assertTrue(Float.isNaN(got[h]), "0x" + Integer.toHexString(h) + " " + schedule);
                } else {
                    assertEquals(Float.floatToRawIntBits((float) want), Float.floatToRawIntBits(got[h]), "0x" + Integer.toHexString(h) + " " + schedule);
                }
            }
        }
    }

    @Test
    void refusesSchedulesItCannotFollow() {
        Op op = new Op(OpKind.MATMUL_F16, 4, 64, 8);
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0, false, true))).getMessage().contains("packB"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(16, 6, 0, 0, 0, 0, true, 0))).getMessage().contains("accumulators"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(6, 1, 0, 0, 0, 0, true, 0))).getMessage().contains("multiple of 4"));
    }

    @Test
    void metadataNamesTheOperandTypes() {
        Op op = new Op(OpKind.MATMUL_F16, 3, 5, 7).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS));
        String meta = COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0)).metadataJson();
        assertTrue(meta.contains("\"operands\":[\"A\",\"B\",\"C\",\"Work\",\"Bias\"]"), meta);
        assertTrue(meta.contains("\"scratch\":[\"Work\"],\"operandTypes\":{\"B\":\"float16\"}"), meta);
        assertTrue(!meta.contains("\"pack\""), meta);
    }

    /** A, B (float16 bits of values of every binade from 2^-14 to 2^1, a few subnormals, both signs), Bias, Residual. */
    static Map<String, Object> inputs(Op op, Random random) {
        Map<String, Object> inputs = new HashMap<>();
        byte[] b = new byte[2 * op.k() * op.n()];
        for (int i = 0; i < op.k() * op.n(); i++) {
            int exponent = random.nextInt(20) == 0 ? 0 : 1 + random.nextInt(16);
            int h = (random.nextBoolean() ? 0x8000 : 0) | exponent << 10 | random.nextInt(1 << 10);
            b[2 * i] = (byte) h;
            b[2 * i + 1] = (byte) (h >> 8);
        }
        inputs.put("A", KernelCases.floats(random, op.m() * op.k()));
        inputs.put("B", b);
        if (op.fuses(Epilogue.Kind.BIAS)) {
            inputs.put("Bias", KernelCases.floats(random, op.n()));
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            inputs.put("Residual", KernelCases.floats(random, op.m() * op.n()));
        }
        return inputs;
    }

    /** A float16's value, by IEEE 754's definition. */
    static double half(int h) {
        int exponent = h >> 10 & 0x1F, mantissa = h & 0x3FF;
        double sign = (h & 0x8000) != 0 ? -1 : 1;
        if (exponent == 0x1F) {
            return mantissa == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        }
        return sign * (exponent == 0 ? mantissa * 0x1p-24 : (1 + mantissa / 1024.0) * Math.pow(2, exponent - 15));
    }

    static double[] reference(Op op, Map<String, Object> inputs) {
        float[] a = (float[]) inputs.get("A");
        byte[] b = (byte[]) inputs.get("B");
        double[] c = new double[op.m() * op.n()];
        for (int i = 0; i < op.m(); i++) {
            for (int j = 0; j < op.n(); j++) {
                double v = 0;
                for (int k = 0; k < op.k(); k++) {
                    int at = 2 * (k * op.n() + j);
                    v += a[i * op.k() + k] * half((b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8);
                }
                c[i * op.n() + j] = KernelCases.epilogue(op, v, inputs, i, j);
            }
        }
        return c;
    }
}
