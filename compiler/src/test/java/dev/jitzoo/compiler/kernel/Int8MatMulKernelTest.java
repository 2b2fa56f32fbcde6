package dev.jitzoo.compiler.kernel;

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

/** Int8 matmul kernels in wasmtime against the integer product in double, on odd shapes and every tile form. */
class Int8MatMulKernelTest {

    private static final double TOLERANCE = 1e-5;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    static Stream<Arguments> cases() {
        List<Schedule> schedules = new ArrayList<>();
        for (int[] tile : new int[][] {{4, 1}, {8, 2}, {12, 3}, {16, 3}, {4, 6}, {8, 1}}) {
            for (int unroll : new int[] {0, 2, 3}) {
                schedules.add(new Schedule(tile[0], tile[1], 0, 0, 0, 0, true, unroll, false, true));
            }
        }
        return KernelCases.everyOpWithEverySchedule(KernelCases.withEpilogues(OpKind.MATMUL_INT8, new int[][] {{1, 1, 1}, {1, 2, 4}, {3, 5, 7}, {7, 13, 17}, {5, 64, 36}, {12, 33, 20}}), schedules);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheReference(Op op, Schedule schedule) {
        KernelCases.assertMatchesSeeded(op, schedule, Int8MatMulKernelTest::inputs, Int8MatMulKernelTest::reference, TOLERANCE);
    }

    @Test
    void extremeValuesSumExactly() {
        // A's range all on one side (zero point 0 or 255) and every B byte -128: the largest sums an i32 lane holds here
        Op op = new Op(OpKind.MATMUL_INT8, 2, 301, 9);
        for (float sign : new float[] {1, -1}) {
            Map<String, Object> inputs = inputs(op, new Random(1));
            float[] a = (float[]) inputs.get("A");
            for (int i = 0; i < a.length; i++) {
                a[i] = sign * (i % 7 == 0 ? 3f : 2.5f);
            }
            java.util.Arrays.fill((byte[]) inputs.get("B"), (byte) -128);
            float[] got = WasmtimeRunner.run(COMPILER.compile(op, new Schedule(8, 2, 0, 0, 0, 0, true, 2, false, true)), op, inputs, 0);
            assertTrue(KernelCases.relativeError(got, reference(op, inputs)) <= TOLERANCE);
        }
    }

    @Test
    void aZeroActivationQuantizesToZero() {
        Op op = new Op(OpKind.MATMUL_INT8, 3, 10, 4);
        Map<String, Object> inputs = inputs(op, new Random(2));
        java.util.Arrays.fill((float[]) inputs.get("A"), 0f);
        float[] got = WasmtimeRunner.run(COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0, false, true)), op, inputs, 0);
        for (float v : got) {
            assertTrue(v == 0f, "C " + java.util.Arrays.toString(got));
        }
    }

    @Test
    void refusesSchedulesItCannotFollow() {
        Op op = new Op(OpKind.MATMUL_INT8, 4, 8, 8);
        assertTrue(assertThrows(InvalidKernelException.class, () -> COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0)))
                .getMessage().contains("packB"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(16, 4, 0, 0, 0, 0, true, 0, false, true))).getMessage().contains("accumulators"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(4, 1, 2, 0, 0, 0, true, 0, false, true))).getMessage().contains("r0"));
    }

    @Test
    void metadataNamesTheOperandTypesAndThePackedSize() {
        Op op = new Op(OpKind.MATMUL_INT8, 3, 5, 7).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS));
        String meta = COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0, false, true)).metadataJson();
        assertTrue(meta.contains("\"operands\":[\"A\",\"B\",\"BScale\",\"C\",\"Work\",\"Bias\"]"), meta);
        assertTrue(meta.contains("\"Work\":[3,8]"), meta);
        assertTrue(meta.contains("\"scratch\":[\"Work\"],\"operandTypes\":{\"B\":\"int8\",\"Work\":\"int16\"}"), meta);
        // 3 k pairs x 4 columns x 2 bytes per panel, 2 panels: 48 bytes
        assertTrue(meta.contains("\"pack\":{\"operand\":\"B\",\"entry\":\"pack_b\",\"floats\":12}"), meta);
    }

    static Map<String, Object> inputs(Op op, Random random) {
        Map<String, Object> inputs = new HashMap<>();
        byte[] b = new byte[op.k() * op.n()];
        random.nextBytes(b);
        float[] a = KernelCases.floats(random, op.m() * op.k());
        float shift = random.nextFloat() - 0.5f; // a range off centre: a zero point away from 128
        for (int i = 0; i < a.length; i++) {
            a[i] = 3 * (a[i] + shift);
        }
        inputs.put("A", a);
        inputs.put("B", b);
        float[] scales = new float[op.n()];
        for (int j = 0; j < scales.length; j++) {
            scales[j] = 0.001f + random.nextFloat() * 0.004f;
        }
        inputs.put("BScale", scales);
        if (op.fuses(Epilogue.Kind.BIAS)) {
            inputs.put("Bias", KernelCases.floats(random, op.n()));
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            inputs.put("Residual", KernelCases.floats(random, op.m() * op.n()));
        }
        return inputs;
    }

    /**
     * C in double: A quantized as DynamicQuantizeLinear does in onnxruntime (float32 range, scale and
     * zero point; each value x / scale rounded half to even, plus the zero point, saturated), the
     * integer sums exact, then the scales and the epilogue.
     */
    static double[] reference(Op op, Map<String, Object> inputs) {
        float[] a = (float[]) inputs.get("A");
        byte[] b = (byte[]) inputs.get("B");
        float low = 0, high = 0;
        for (float x : a) {
            low = Math.min(low, x);
            high = Math.max(high, x);
        }
        float scale = high == low ? 1f : (high - low) / 255f;
        float zero = (float) Math.rint(Math.max(0f, Math.min(255f, 0f - low / scale)));
        int[] q = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            q[i] = (int) Math.max(0, Math.min(255, Math.rint(a[i] / scale) + zero)) - (int) zero;
        }
        float[] bScale = (float[]) inputs.get("BScale");
        double[] c = new double[op.m() * op.n()];
        for (int i = 0; i < op.m(); i++) {
            for (int j = 0; j < op.n(); j++) {
                long sum = 0;
                for (int k = 0; k < op.k(); k++) {
                    sum += (long) q[i * op.k() + k] * b[k * op.n() + j];
                }
                double v = sum * (double) scale * bScale[j];
                c[i * op.n() + j] = KernelCases.epilogue(op, v, inputs, i, j);
            }
        }
        return c;
    }
}
