package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.passes.Pass;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
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
     * The sweep's seed, in every case's name: {@code -Djitzoo.seed=N} draws another 40 cases, or
     * replays a run.
     */
    private static final long SWEEP_SEED = Long.getLong("jitzoo.seed", 0x5EED_2026L);

    /**
     * 40 seeded draws over the whole schedule space (cache tiles, r0 and unroll included) on shapes
     * that miss every tile: primes, 1, and small extents below the tile sizes.
     */
    static Stream<Arguments> seededSweep() {
        Random random = new Random(SWEEP_SEED);
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
            Schedule schedule = new Schedule(x0, y0, r0, x1, y1, r1, vectorize, unroll, false, random.nextInt(3) == 0,
                    random.nextBoolean());
            if (y0 * (vectorize ? x0 / 4 : x0) > WasmCompiler.MAX_ACCUMULATORS) {
                continue;
            }
            int m = extents[random.nextInt(extents.length)];
            int k = extents[random.nextInt(extents.length)];
            int n = extents[random.nextInt(extents.length)];
            Op op = random.nextInt(4) == 0 ? Op.batchMatmul(1 + random.nextInt(3), m, k, n) : Op.matmul(m, k, n);
            Set<Pass> passes = EnumSet.noneOf(Pass.class);
            for (Pass pass : Pass.values()) {
                if (random.nextInt(4) != 0) {
                    passes.add(pass);
                }
            }
            cases.add(Arguments.of(op, schedule, passes, SWEEP_SEED));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2} (-Djitzoo.seed={3})")
    @MethodSource("seededSweep")
    void seededSweepMatchesTheReference(Op op, Schedule schedule, Set<Pass> passes, long seed) {
        try {
            assertMatches(op, schedule, passes, 0);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(e.getMessage() + " (a case of the sweep drawn from seed " + seed
                    + "; -Djitzoo.seed=" + seed + " replays it)", e);
        }
    }

    /** Every subset of the passes gives the same results; each pass makes the kernel smaller. */
    static Stream<Arguments> passSubsets() {
        List<Arguments> cases = new ArrayList<>();
        for (int bits = 0; bits < 8; bits++) {
            Set<Pass> passes = EnumSet.noneOf(Pass.class);
            for (Pass pass : Pass.values()) {
                if ((bits & (1 << pass.ordinal())) != 0) {
                    passes.add(pass);
                }
            }
            cases.add(Arguments.of(Op.matmul(19, 23, 37), Schedule.registerTile(3, 8, true, 2).withReductionTile(2)
                    .withCacheTile(16, 6, 7), passes));
            cases.add(Arguments.of(Op.batchMatmul(2, 9, 11, 13), Schedule.registerTile(2, 5, false, 0).withPackB(true),
                    passes));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("passSubsets")
    void everySubsetOfPassesMatchesTheReference(Op op, Schedule schedule, Set<Pass> passes) {
        assertMatches(op, schedule, passes, 0);
    }

    @Test
    void eachPassShrinksTheKernel() {
        Op op = Op.matmul(64, 64, 64);
        Schedule schedule = Schedule.registerTile(4, 16, true, 2);
        int none = COMPILER.compile(op, schedule, Set.of()).wasm().length;
        int offset = COMPILER.compile(op, schedule, Set.of(Pass.OFFSET)).wasm().length;
        int offsetSplat = COMPILER.compile(op, schedule, Set.of(Pass.OFFSET, Pass.SPLAT)).wasm().length;
        int all = COMPILER.compile(op, schedule, Pass.ALL).wasm().length;
        assertTrue(none > offset && offset > offsetSplat && offsetSplat > all,
                "sizes none " + none + ", offset " + offset + ", +splat " + offsetSplat + ", all " + all);
    }

    /**
     * wasmtime-java cannot run relaxed SIMD, so here only the instruction choice is checked; the
     * kernels themselves run in V8 through the harness's case check in {@code ./jitzoo test}.
     */
    @Test
    void relaxedSimdReplacesMulAndAddWithOneMadd() {
        Op op = Op.matmul(17, 31, 29);
        Schedule plain = Schedule.registerTile(2, 8, true, 2);
        byte[] relaxed = COMPILER.compile(op, plain.withRelaxedSimd(true)).wasm();
        byte[] mulAdd = COMPILER.compile(op, plain).wasm();
        byte[] madd = {(byte) 0xFD, (byte) 0x85, 0x02};
        byte[] mul = {(byte) 0xFD, (byte) 0xE6, 0x01};
        assertTrue(count(relaxed, madd) >= 2 * 2 && count(relaxed, mul) == 0, "relaxed kernel uses madd only");
        assertTrue(count(mulAdd, madd) == 0 && count(mulAdd, mul) >= 2 * 2, "plain kernel uses mul + add");
    }

    private static int count(byte[] haystack, byte[] needle) {
        int found = 0;
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (java.util.Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                found++;
            }
        }
        return found;
    }

    /** B transposed, B shared by the batches, and every epilogue step, fused at store or after a split reduction. */
    static Stream<Arguments> layoutsAndEpilogues() {
        Schedule vector = Schedule.registerTile(3, 8, true, 2);
        Schedule scalar = Schedule.registerTile(2, 3, false, 0);
        Schedule split = Schedule.registerTile(2, 8, true, 1).withCacheTile(16, 4, 7);
        Epilogue bias = Epilogue.of(Epilogue.Kind.BIAS), residual = Epilogue.of(Epilogue.Kind.RESIDUAL);
        Epilogue relu = Epilogue.of(Epilogue.Kind.RELU), tanh = Epilogue.of(Epilogue.Kind.GELU_TANH);
        Epilogue erf = Epilogue.of(Epilogue.Kind.GELU_ERF), scale = Epilogue.scale(0.125f);
        Epilogue silu = Epilogue.of(Epilogue.Kind.SILU);
        Op plain = Op.matmul(19, 23, 37);
        return Stream.of(
                Arguments.of(plain.withTransposedB(true), scalar),
                Arguments.of(plain.withTransposedB(true), vector.withPackB(true)),
                Arguments.of(plain.withTransposedB(true), split.withPackB(true)),
                Arguments.of(Op.batchMatmul(3, 7, 13, 9).withBroadcastB(true), vector),
                Arguments.of(Op.batchMatmul(3, 7, 13, 9).withBroadcastB(true).withTransposedB(true), vector.withPackB(true)),
                Arguments.of(plain.withEpilogue(bias), vector),
                Arguments.of(plain.withEpilogue(scale, bias, relu), scalar),
                Arguments.of(plain.withEpilogue(bias, tanh), vector),
                Arguments.of(plain.withEpilogue(erf), scalar),
                Arguments.of(plain.withEpilogue(silu), scalar),
                Arguments.of(plain.withEpilogue(bias, silu, residual), split.withPackB(true)),
                Arguments.of(Op.batchMatmul(2, 9, 11, 13).withEpilogue(silu), vector),
                Arguments.of(plain.withEpilogue(scale, bias, erf, residual), vector),
                Arguments.of(plain.withEpilogue(bias, tanh, residual), split),
                Arguments.of(plain.withEpilogue(residual, relu), split.withPackB(true)),
                Arguments.of(Op.batchMatmul(2, 9, 11, 13).withEpilogue(bias, erf, residual), vector),
                Arguments.of(Op.batchMatmul(2, 9, 11, 13).withEpilogue(scale, residual),
                        Schedule.registerTile(2, 4, false, 0).withCacheTile(8, 4, 3)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("layoutsAndEpilogues")
    void layoutsAndEpiloguesMatchTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, 0);
    }

    @Test
    void theReferenceErfAgreesWithAnIndependentApproximation() {
        for (double x = -6; x <= 6; x += 0.01) {
            assertTrue(Math.abs(ReferenceKernels.erf(x) - erfSeriesCheck(x)) < 2e-7, "erf at " + x);
        }
        assertEquals(0.8427007929497149, ReferenceKernels.erf(1), 1e-15);
    }

    /** An independent erf (Abramowitz and Stegun 7.1.26, within 1.5e-7) to check the reference's own. */
    private static double erfSeriesCheck(double x) {
        double t = 1 / (1 + 0.3275911 * Math.abs(x));
        double y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592)
                * t * Math.exp(-x * x);
        return Math.signum(x) * y;
    }

    /** Packing B: the pack function's panels, read by tiles of every width, edges included. */
    static Stream<Arguments> packedB() {
        return Stream.of(
                Arguments.of(Op.matmul(17, 31, 29), Schedule.registerTile(2, 8, true, 2).withPackB(true)),
                Arguments.of(Op.matmul(33, 70, 45), Schedule.registerTile(4, 12, true, 0).withReductionTile(2)
                        .withCacheTile(24, 8, 16).withPackB(true)),
                Arguments.of(Op.batchMatmul(3, 7, 13, 5), Schedule.registerTile(1, 4, true, 3).withPackB(true)),
                Arguments.of(Op.matmul(1, 1, 1), Schedule.registerTile(4, 16, true, 0).withPackB(true)),
                Arguments.of(Op.matmul(5, 9, 7), Schedule.registerTile(3, 3, false, 2).withPackB(true)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("packedB")
    void packedBMatchesTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, 0);
    }

    /**
     * Reorder: column tiles outside row bands, at the cache-block level too, with ragged blocks on
     * every axis, a split reduction (partial sums reloaded per k block), edges, batches and packing.
     */
    static Stream<Arguments> columnsOuter() {
        return Stream.of(
                Arguments.of(Op.matmul(37, 29, 43), Schedule.registerTile(2, 8, true, 2).withColumnsOuter(true)),
                Arguments.of(Op.matmul(45, 70, 61), Schedule.registerTile(4, 8, true, 1).withReductionTile(2)
                        .withCacheTile(24, 12, 16).withColumnsOuter(true)),
                Arguments.of(Op.batchMatmul(3, 19, 23, 40), Schedule.registerTile(2, 16, true, 2)
                        .withCacheTile(16, 6, 7).withPackB(true).withColumnsOuter(true)),
                Arguments.of(Op.matmul(13, 11, 17).withEpilogue(Epilogue.of(Epilogue.Kind.BIAS),
                        Epilogue.of(Epilogue.Kind.RELU)), Schedule.registerTile(3, 2, false, 2)
                        .withCacheTile(4, 6, 5).withColumnsOuter(true)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("columnsOuter")
    void columnsOuterMatchesTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, 0);
    }

    @Test
    void columnsOuterIsAnotherKernelWithTheSameResult() {
        Schedule rows = Schedule.registerTile(2, 8, true, 2).withCacheTile(16, 4, 8);
        Op op = Op.matmul(9, 10, 33);
        GeneratedKernel byRows = new WasmCompiler().compile(op, rows);
        GeneratedKernel byColumns = new WasmCompiler().compile(op, rows.withColumnsOuter(true));
        assertNotEquals(byRows.kernelId(), byColumns.kernelId());
        assertFalse(Arrays.equals(byRows.wasm(), byColumns.wasm()));
        assertTrue(byColumns.metadataJson().contains("\"columnsOuter\":true"), byColumns.metadataJson());
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
        assertMatches(op, schedule, Pass.ALL, skew);
    }

    private static void assertMatches(Op op, Schedule schedule, Set<Pass> passes, int skew) {
        long seed = TestSeeds.of(op, schedule);
        Random random = new Random(seed);
        Map<String, float[]> inputs = new HashMap<>();
        inputs.put("A", randomFloats(random, op.batch() * op.m() * op.k()));
        inputs.put("B", randomFloats(random, (op.broadcastB() ? 1 : op.batch()) * op.k() * op.n()));
        inputs.put("Bias", randomFloats(random, op.n()));
        inputs.put("Residual", randomFloats(random, op.batch() * op.m() * op.n()));
        GeneratedKernel kernel = COMPILER.compile(op, schedule, passes);
        float[] c = WasmtimeRunner.run(kernel, op, inputs, skew);
        double error = ReferenceKernels.maxRelativeError(c, ReferenceKernels.matmul(op, inputs));
        assertTrue(error <= TOLERANCE, op + " " + schedule + " (inputs of seed " + seed + "): max relative error " + error);
    }

    private static float[] randomFloats(Random random, int count) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = random.nextFloat() * 2 - 1;
        }
        return values;
    }
}
