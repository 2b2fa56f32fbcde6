package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.passes.Pass;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Parameterized kernel tests' cases (every op with every schedule) and what the product kernels'
 * tests share: seeded floats, the epilogue in double, and the run in wasmtime with every pass and
 * none against the reference.
 */
final class KernelCases {

    private KernelCases() {
    }

    static Stream<Arguments> everyOpWithEverySchedule(List<Op> ops, List<Schedule> schedules) {
        return ops.stream().flatMap(op -> schedules.stream().map(schedule -> Arguments.of(op, schedule)));
    }

    private static final WasmCompiler COMPILER = new WasmCompiler();

    /** A product of each shape plain, with bias and erf GELU, and with a scale and a residual. */
    static List<Op> withEpilogues(OpKind kind, int[][] shapes) {
        List<Op> ops = new java.util.ArrayList<>();
        for (int[] mkn : shapes) {
            Op op = new Op(kind, mkn);
            ops.add(op);
            ops.add(op.withEpilogue(Epilogue.of(Epilogue.Kind.BIAS), Epilogue.of(Epilogue.Kind.GELU_ERF)));
            ops.add(op.withEpilogue(Epilogue.scale(0.5f), Epilogue.of(Epilogue.Kind.RESIDUAL)));
        }
        return ops;
    }

    /** Floats uniform in [-1, 1). */
    static float[] floats(Random random, int n) {
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = random.nextFloat() * 2 - 1;
        }
        return values;
    }

    /** A product's element (row i, column j) through the op's epilogue (scale, bias, residual, GELU erf), in double. */
    static double epilogue(Op op, double v, Map<String, Object> inputs, int i, int j) {
        float[] bias = (float[]) inputs.get("Bias"), residual = (float[]) inputs.get("Residual");
        for (Epilogue e : op.epilogue()) {
            v = switch (e.kind()) {
                case SCALE -> v * e.value();
                case BIAS -> v + bias[j];
                case RESIDUAL -> v + residual[i * op.n() + j];
                case GELU_ERF -> 0.5 * v * (1 + ReferenceKernels.erf(v / Math.sqrt(2)));
                default -> throw new IllegalArgumentException(e.toString());
            };
        }
        return v;
    }

    /**
     * The kernel on inputs seeded by the op and schedule ({@link TestSeeds}), with every pass and with
     * none, in wasmtime: C within {@code tolerance} of the reference on those inputs.
     */
    static void assertMatchesSeeded(Op op, Schedule schedule, java.util.function.BiFunction<Op, Random, Map<String, Object>> inputs,
                                    java.util.function.BiFunction<Op, Map<String, Object>, double[]> reference, double tolerance) {
        Map<String, Object> values = inputs.apply(op, new Random(TestSeeds.of(op, schedule)));
        assertMatches(op, schedule, values, reference.apply(op, values), tolerance);
    }

    /** The kernel, with every pass and with none, run in wasmtime: C within {@code tolerance} of {@code want}. */
    static void assertMatches(Op op, Schedule schedule, Map<String, Object> inputs, double[] want, double tolerance) {
        for (Set<Pass> passes : List.of(Pass.ALL, Set.<Pass>of())) {
            float[] got = WasmtimeRunner.run(COMPILER.compile(op, schedule, passes), op, inputs, 0);
            double error = relativeError(got, want);
            assertTrue(error <= tolerance, op + " " + schedule + " passes " + passes + ": relative error " + error);
        }
    }

    /** The largest difference over the largest reference magnitude (at least 1); NaN counts as infinite. */
    static double relativeError(float[] got, double[] want) {
        double diff = 0, scale = 1;
        for (int i = 0; i < want.length; i++) {
            double d = Math.abs(got[i] - want[i]);
            diff = Double.isNaN(d) ? Double.POSITIVE_INFINITY : Math.max(diff, d);
            scale = Math.max(scale, Math.abs(want[i]));
        }
        return diff / scale;
    }
}
