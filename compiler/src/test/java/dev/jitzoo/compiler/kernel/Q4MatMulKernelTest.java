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
 * 4-bit matmul kernels in wasmtime against MatMulNBits' definition in double (B as the file stores
 * it, dequantized block by block), on odd shapes (K past a block, past a group of four), every tile
 * form and the epilogues.
 */
class Q4MatMulKernelTest {

    private static final double TOLERANCE = 1e-5;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    static Stream<Arguments> cases() {
        List<Schedule> schedules = new ArrayList<>();
        for (int[] tile : new int[][] {{1, 1}, {4, 1}, {3, 2}, {2, 4}, {4, 3}, {8, 1}, {1, 6}}) {
            for (int unroll : new int[] {0, 2, 3}) {
                schedules.add(new Schedule(tile[0], tile[1], 0, 0, 0, 0, true, unroll, false, true));
            }
        }
        // staged (the float register tile over widened weights) where M >= x0, else direct
        for (int[] tile : new int[][] {{4, 1}, {8, 3}, {12, 2}, {4, 5}}) {
            for (int unroll : new int[] {0, 2, 3}) {
                schedules.add(new Schedule(tile[0], tile[1], 0, 0, 0, 0, true, unroll, false, true).withColumnsOuter(true));
            }
        }
        return KernelCases.everyOpWithEverySchedule(KernelCases.withEpilogues(OpKind.MATMUL_Q4, new int[][] {{1, 1, 1}, {1, 32, 4}, {3, 5, 7}, {7, 33, 17}, {5, 64, 36}, {12, 131, 9}, {2, 100, 5}}), schedules);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheReference(Op op, Schedule schedule) {
        KernelCases.assertMatchesSeeded(op, schedule, Q4MatMulKernelTest::inputs, Q4MatMulKernelTest::reference, TOLERANCE);
    }

    @Test
    void everyNibbleAndZeroPointLandsOnItsK() {
        // one 1 among zeros, at every k of two blocks and a column's both zero-point nibbles: C is that A
        Op op = new Op(OpKind.MATMUL_Q4, 1, 64, 2);
        Schedule schedule = new Schedule(2, 1, 0, 0, 0, 0, true, 0, false, true);
        for (int k = 0; k < op.k(); k++) {
            Map<String, Object> inputs = inputs(op, new Random(k));
            byte[] b = (byte[]) inputs.get("B");
            byte[] zeros = (byte[]) inputs.get("BZero");
            java.util.Arrays.fill(zeros, (byte) 0x75); // block 0's zero point 5, block 1's 7
            for (int i = 0; i < b.length; i++) {
                int column = i / 32, at = i % 32, block = at / 16;
                int zero = block == 0 ? 5 : 7;
                int low = column == 1 && 2 * at == k ? zero + 1 : zero; // byte at of a column holds k = 2·at and 2·at + 1
                int high = column == 1 && 2 * at + 1 == k ? zero + 1 : zero;
                b[i] = (byte) (low | high << 4);
            }
            java.util.Arrays.fill((float[]) inputs.get("BScale"), 1f);
            float[] got = WasmtimeRunner.run(COMPILER.compile(op, schedule), op, inputs, 0);
            float[] a = (float[]) inputs.get("A");
            assertEquals(0f, got[0], "k " + k);
            assertEquals(a[k], got[1], "k " + k);
        }
    }

    @Test
    void refusesSchedulesItCannotFollow() {
        Op op = new Op(OpKind.MATMUL_Q4, 4, 64, 8);
        assertTrue(assertThrows(InvalidKernelException.class, () -> COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0)))
                .getMessage().contains("packB"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(8, 2, 0, 0, 0, 0, true, 0, false, true))).getMessage().contains("accumulators"));
        assertTrue(assertThrows(InvalidKernelException.class,
                () -> COMPILER.compile(op, new Schedule(4, 1, 2, 0, 0, 0, true, 0, false, true))).getMessage().contains("r0"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> COMPILER.compile(op,
                new Schedule(6, 2, 0, 0, 0, 0, true, 0, false, true).withColumnsOuter(true))).getMessage().contains("multiple of 4"));
    }

    @Test
    void metadataNamesTheOperandTypesAndThePackedSize() {
        Op op = new Op(OpKind.MATMUL_Q4, 3, 40, 7).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS));
        String meta = COMPILER.compile(op, new Schedule(4, 1, 0, 0, 0, 0, true, 0, false, true)).metadataJson();
        assertTrue(meta.contains("\"operands\":[\"A\",\"B\",\"BScale\",\"BZero\",\"C\",\"Work\",\"Bias\"]"), meta);
        assertTrue(meta.contains("\"B\":[7,32],\"BScale\":[7,2],\"BZero\":[7,1],\"C\":[3,7],\"Work\":[3,64]"), meta);
        assertTrue(meta.contains("\"scratch\":[\"Work\"],\"operandTypes\":{\"B\":\"uint8\",\"BZero\":\"uint8\"}"), meta);
        // 7 columns x 2 blocks x 16 bytes, as stored
        assertTrue(meta.contains("\"pack\":{\"operand\":\"B\",\"entry\":\"pack_b\",\"floats\":56}"), meta);
    }

    /** A, B as MatMulNBits stores it (random nibbles), scales, zero points (random nibbles), Bias, Residual. */
    static Map<String, Object> inputs(Op op, Random random) {
        int blocks = Q4MatMulEmitter.blocks(op);
        Map<String, Object> inputs = new HashMap<>();
        byte[] b = new byte[op.n() * blocks * 16];
        random.nextBytes(b);
        byte[] zeros = new byte[op.n() * Q4MatMulEmitter.zeroRowBytes(op)];
        random.nextBytes(zeros);
        inputs.put("A", KernelCases.floats(random, op.m() * op.k()));
        inputs.put("B", b);
        float[] scales = new float[op.n() * blocks];
        for (int j = 0; j < scales.length; j++) {
            scales[j] = (0.01f + random.nextFloat() * 0.04f) * (random.nextBoolean() ? 1 : -1);
        }
        inputs.put("BScale", scales);
        inputs.put("BZero", zeros);
        if (op.fuses(Epilogue.Kind.BIAS)) {
            inputs.put("Bias", KernelCases.floats(random, op.n()));
        }
        if (op.fuses(Epilogue.Kind.RESIDUAL)) {
            inputs.put("Residual", KernelCases.floats(random, op.m() * op.n()));
        }
        return inputs;
    }

    /** C in double: each weight (q − zero) × scale of its column's block, as MatMulNBits dequantizes, then the epilogue. */
    static double[] reference(Op op, Map<String, Object> inputs) {
        int blocks = Q4MatMulEmitter.blocks(op), zeroRow = Q4MatMulEmitter.zeroRowBytes(op);
        float[] a = (float[]) inputs.get("A"), scales = (float[]) inputs.get("BScale");
        byte[] b = (byte[]) inputs.get("B"), zeros = (byte[]) inputs.get("BZero");
        double[] c = new double[op.m() * op.n()];
        for (int j = 0; j < op.n(); j++) {
            double[] w = new double[op.k()];
            for (int k = 0; k < op.k(); k++) {
                int block = k / 32;
                int q = (b[j * blocks * 16 + k / 2] >> (k % 2 * 4)) & 0xF;
                int zero = (zeros[j * zeroRow + block / 2] >> (block % 2 * 4)) & 0xF;
                w[k] = (q - zero) * (double) scales[j * blocks + block];
            }
            for (int i = 0; i < op.m(); i++) {
                double v = 0;
                for (int k = 0; k < op.k(); k++) {
                    v += a[i * op.k() + k] * w[k];
                }
                c[i * op.n() + j] = KernelCases.epilogue(op, v, inputs, i, j);
            }
        }
        return c;
    }
}
