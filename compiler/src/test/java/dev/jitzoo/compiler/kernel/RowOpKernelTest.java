package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.passes.Pass;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Add, mul, softmax and layer norm kernels in wasmtime against references in double, on odd shapes. */
class RowOpKernelTest {

    private static final double TOLERANCE = 1e-4;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    static Stream<Arguments> cases() {
        List<Schedule> schedules = List.of(new Schedule(0, 0, 0, 0, 0, 0, false, 0), new Schedule(0, 0, 0, 0, 0, 0, true, 0),
                new Schedule(0, 0, 0, 0, 0, 0, true, 3), new Schedule(0, 0, 0, 0, 0, 0, false, 2),
                new Schedule(0, 0, 0, 0, 0, 0, true, 8));
        List<Op> ops = new ArrayList<>();
        for (int n : new int[] {1, 3, 4, 7, 33, 1000}) {
            ops.add(new Op(OpKind.ADD, n));
            ops.add(new Op(OpKind.MUL, n));
        }
        for (int[] rc : new int[][] {{1, 1}, {3, 5}, {7, 13}, {4, 64}, {2, 100}, {12, 384}, {5, 3072}}) {
            ops.add(new Op(OpKind.SOFTMAX, rc));
            ops.add(new Op(OpKind.LAYER_NORM, rc));
            ops.add(new Op(OpKind.LAYER_NORM, rc).withEpsilon(1e-12f));
        }
        return KernelCases.everyOpWithEverySchedule(ops, schedules);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheReference(Op op, Schedule schedule) {
        for (Set<Pass> passes : List.of(Pass.ALL, Set.<Pass>of())) {
            long seed = TestSeeds.of(op, schedule);
            Random random = new Random(seed);
            int elements = op.dims().stream().reduce(1, (x, y) -> x * y);
            float[] a = values(random, elements, op.kind() == OpKind.SOFTMAX ? 30 : 3);
            float[] b = values(random, elements, 3);
            float[] gamma = values(random, op.kind() == OpKind.LAYER_NORM ? op.cols() : 1, 2);
            float[] beta = values(random, op.kind() == OpKind.LAYER_NORM ? op.cols() : 1, 2);
            Map<String, float[]> inputs = switch (op.kind()) {
                case ADD, MUL -> Map.of("A", a, "B", b);
                case LAYER_NORM -> Map.of("A", a, "Gamma", gamma, "Beta", beta);
                default -> Map.of("A", a);
            };
            float[] c = WasmtimeRunner.run(COMPILER.compile(op, schedule, passes), op, inputs, 0);
            double error = ReferenceKernels.maxRelativeError(c, reference(op, a, b, gamma, beta));
            assertTrue(error <= TOLERANCE, op + " " + schedule + " passes " + passes + " (inputs of seed " + seed + "): max relative error " + error);
        }
    }

    @Test
    void layerNormAddsItsOwnEpsilon() {
        // rows of variance about 3e-7: an epsilon of 1e-5 or 1e-12 changes the result by several times
        Op bert = new Op(OpKind.LAYER_NORM, 2, 64).withEpsilon(1e-12f);
        Schedule schedule = new Schedule(0, 0, 0, 0, 0, 0, true, 2);
        Random random = new Random(7);
        float[] a = values(random, 128, 1e-3f), gamma = values(random, 64, 2), beta = values(random, 64, 2);
        Map<String, float[]> inputs = Map.of("A", a, "Gamma", gamma, "Beta", beta);
        float[] own = WasmtimeRunner.run(COMPILER.compile(bert, schedule, Pass.ALL), bert, inputs, 0);
        assertTrue(ReferenceKernels.maxRelativeError(own, reference(bert, a, a, gamma, beta)) <= TOLERANCE);
        Op plain = new Op(OpKind.LAYER_NORM, 2, 64);
        float[] other = WasmtimeRunner.run(COMPILER.compile(plain, schedule, Pass.ALL), plain, inputs, 0);
        assertTrue(ReferenceKernels.maxRelativeError(other, reference(bert, a, a, gamma, beta)) > 0.1);
        assertNotEquals(KernelIds.of(bert, schedule, Backend.WASM, 1), KernelIds.of(plain, schedule, Backend.WASM, 1));
        assertEquals(KernelIds.of(plain, schedule, Backend.WASM, 1),
                KernelIds.of(plain.withEpsilon(Op.DEFAULT_EPSILON), schedule, Backend.WASM, 1));
        assertTrue(AbiMetadata.wasm(bert, schedule, 1, Pass.ALL).contains(",\"epsilon\":1.0E-12"));
        assertFalse(AbiMetadata.wasm(plain, schedule, 1, Pass.ALL).contains("epsilon"));
    }

    private static float[] reference(Op op, float[] a, float[] b, float[] gamma, float[] beta) {
        float[] c = new float[a.length];
        switch (op.kind()) {
            case ADD -> {
                for (int i = 0; i < a.length; i++) {
                    c[i] = a[i] + b[i];
                }
            }
            case MUL -> {
                for (int i = 0; i < a.length; i++) {
                    c[i] = a[i] * b[i];
                }
            }
            case SOFTMAX -> {
                for (int r = 0; r < op.rows(); r++) {
                    int base = r * op.cols();
                    double max = Double.NEGATIVE_INFINITY, sum = 0;
                    for (int j = 0; j < op.cols(); j++) {
                        max = Math.max(max, a[base + j]);
                    }
                    for (int j = 0; j < op.cols(); j++) {
                        sum += Math.exp(a[base + j] - max);
                    }
                    for (int j = 0; j < op.cols(); j++) {
                        c[base + j] = (float) (Math.exp(a[base + j] - max) / sum);
                    }
                }
            }
            case LAYER_NORM -> {
                for (int r = 0; r < op.rows(); r++) {
                    int base = r * op.cols();
                    double mean = 0, variance = 0;
                    for (int j = 0; j < op.cols(); j++) {
                        mean += a[base + j];
                    }
                    mean /= op.cols();
                    for (int j = 0; j < op.cols(); j++) {
                        variance += (a[base + j] - mean) * (a[base + j] - mean);
                    }
                    double scale = 1 / Math.sqrt(variance / op.cols() + op.layerNormEpsilon());
                    for (int j = 0; j < op.cols(); j++) {
                        c[base + j] = (float) ((a[base + j] - mean) * scale * gamma[j] + beta[j]);
                    }
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
        return c;
    }

    private static float[] values(Random random, int count, float range) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = (random.nextFloat() * 2 - 1) * range;
        }
        return values;
    }
}
