package dev.jitzoo.codegen.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.codegen.wasm.passes.Pass;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
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
        }
        List<Arguments> cases = new ArrayList<>();
        for (Op op : ops) {
            for (Schedule schedule : schedules) {
                cases.add(Arguments.of(op, schedule));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void matchesTheReference(Op op, Schedule schedule) {
        for (Set<Pass> passes : List.of(Pass.ALL, Set.<Pass>of())) {
            Random random = new Random(op.hashCode() * 31L + schedule.hashCode());
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
            assertTrue(error <= TOLERANCE, op + " " + schedule + " passes " + passes + ": max relative error " + error);
        }
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
                    double scale = 1 / Math.sqrt(variance / op.cols() + RowOpEmitter.LAYER_NORM_EPSILON);
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
