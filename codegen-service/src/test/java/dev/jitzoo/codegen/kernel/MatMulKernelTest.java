package dev.jitzoo.codegen.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every generated kernel runs in wasmtime (see {@link WasmtimeRunner} for the memory guards) and
 * must match the reference within 1e-4 relative error.
 */
class MatMulKernelTest {

    private static final double TOLERANCE = 1e-4;
    private static final WasmCompiler COMPILER = new WasmCompiler();

    static final List<Op> REQUIRED_SHAPES = List.of(
            Op.matmul(128, 256, 96), Op.matmul(1, 1, 1), Op.matmul(7, 13, 5), Op.matmul(17, 31, 29),
            Op.matmul(64, 3, 130), Op.batchMatmul(3, 7, 13, 5), Op.batchMatmul(2, 16, 16, 16));

    static Stream<Arguments> fixedCandidatesOnRequiredShapes() {
        return REQUIRED_SHAPES.stream()
                .flatMap(op -> FixedCandidates.all().stream().map(schedule -> Arguments.of(op, schedule)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("fixedCandidatesOnRequiredShapes")
    void fixedCandidatesMatchTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, 0);
    }

    /**
     * 40 seeded draws over the whole schedule space (cache tiles, r0 and unroll included) on shapes
     * that miss every tile: primes, 1, and small extents below the tile sizes.
     */
    static Stream<Arguments> seededSweep() {
        Random random = new Random(0x5EED_2026L);
        int[] extents = {1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 67, 97};
        List<Arguments> cases = new ArrayList<>();
        while (cases.size() < 40) {
            boolean vectorize = random.nextInt(4) != 0;
            int y0 = 1 + random.nextInt(4);
            int x0 = vectorize ? 4 * (1 + random.nextInt(4)) : 1 + random.nextInt(6);
            int r0 = random.nextInt(5);
            int unroll = new int[] {0, 1, 2, 3, 4}[random.nextInt(5)];
            int x1 = random.nextBoolean() ? 0 : x0 * (1 + random.nextInt(4));
            int y1 = random.nextBoolean() ? 0 : y0 * (1 + random.nextInt(4));
            int r1 = new int[] {0, 0, 1, 3, 5, 16, 64}[random.nextInt(7)];
            Schedule schedule = new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll);
            if (y0 * (vectorize ? x0 / 4 : x0) > WasmCompiler.MAX_ACCUMULATORS) {
                continue;
            }
            int m = extents[random.nextInt(extents.length)];
            int k = extents[random.nextInt(extents.length)];
            int n = extents[random.nextInt(extents.length)];
            Op op = random.nextInt(4) == 0 ? Op.batchMatmul(1 + random.nextInt(3), m, k, n) : Op.matmul(m, k, n);
            cases.add(Arguments.of(op, schedule));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("seededSweep")
    void seededSweepMatchesTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, 0);
    }

    /** ABI v1 requires only 4-byte alignment; 16 is a recommendation. */
    static Stream<Arguments> misalignedOperands() {
        Schedule cached = Schedule.registerTile(2, 8, true, 2).withCacheTile(16, 4, 8);
        return Stream.of(
                Arguments.of(Op.matmul(17, 31, 29), FixedCandidates.all().get(0), 4),
                Arguments.of(Op.matmul(9, 10, 11), cached, 8),
                Arguments.of(Op.batchMatmul(2, 5, 6, 7), Schedule.registerTile(1, 4, true, 0), 12));
    }

    @ParameterizedTest(name = "{0} {1} skew {2}")
    @MethodSource("misalignedOperands")
    void runsOnOperandsOffSixteenByteBoundaries(Op op, Schedule schedule, int skew) {
        assertMatches(op, schedule, skew);
    }

    private static void assertMatches(Op op, Schedule schedule, int skew) {
        Random random = new Random(op.hashCode() * 31L + schedule.hashCode());
        float[] a = randomFloats(random, op.batch() * op.m() * op.k());
        float[] b = randomFloats(random, op.batch() * op.k() * op.n());
        GeneratedKernel kernel = COMPILER.compile(op, schedule);
        float[] c = WasmtimeRunner.run(kernel, op, a, b, skew);
        double error = ReferenceKernels.maxRelativeError(c, ReferenceKernels.matmul(op, a, b));
        assertTrue(error <= TOLERANCE, op + " " + schedule + ": max relative error " + error);
    }

    private static float[] randomFloats(Random random, int count) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = random.nextFloat() * 2 - 1;
        }
        return values;
    }
}
