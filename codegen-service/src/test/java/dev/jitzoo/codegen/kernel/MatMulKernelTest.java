package dev.jitzoo.codegen.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.codegen.wasm.WasmSections;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Every generated kernel runs in wasmtime and must match the reference within 1e-4. */
class MatMulKernelTest {

    private static final double TOLERANCE = 1e-4;
    private final WasmCompiler compiler = new WasmCompiler();

    /** The tilings the space service offers today, each on shapes that fill and that miss every tile. */
    static Stream<Arguments> spaceCandidatesOnOddShapes() {
        List<Op> ops = List.of(Op.matmul(128, 256, 96), Op.matmul(1, 1, 1), Op.matmul(7, 13, 5),
                Op.matmul(17, 31, 29), Op.matmul(64, 3, 130), Op.batchMatmul(3, 7, 13, 5),
                Op.batchMatmul(2, 16, 16, 16));
        List<Arguments> cases = new ArrayList<>();
        for (Op op : ops) {
            for (int y0 : new int[] {1, 2, 4}) {
                for (int x0 : new int[] {4, 8, 16}) {
                    if (y0 * x0 / 4 <= 12) {
                        cases.add(Arguments.of(op, Schedule.registerTile(y0, x0, true, 0)));
                    }
                }
            }
            cases.add(Arguments.of(op, Schedule.registerTile(2, 3, false, 0)));
            cases.add(Arguments.of(op, Schedule.registerTile(4, 8, true, 4)));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("spaceCandidatesOnOddShapes")
    void matchesTheReference(Op op, Schedule schedule) {
        assertMatches(op, schedule, new Random(op.hashCode()));
    }

    @Test
    void seededRandomSweepOfSchedulesOverOddShapes() {
        Random random = new Random(20261122);
        int[] primes = {1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 67, 97};
        for (int i = 0; i < 40; i++) {
            boolean batch = random.nextInt(4) == 0;
            int m = primes[random.nextInt(primes.length)];
            int k = primes[random.nextInt(primes.length)];
            int n = primes[random.nextInt(primes.length)];
            Op op = batch ? Op.batchMatmul(1 + random.nextInt(3), m, k, n) : Op.matmul(m, k, n);
            boolean vectorize = random.nextBoolean();
            int y0 = 1 + random.nextInt(4);
            int x0 = vectorize ? 4 * (1 + random.nextInt(3)) : 1 + random.nextInt(8);
            if (y0 * (vectorize ? x0 / 4 : x0) > WasmCompiler.MAX_ACCUMULATORS) {
                continue;
            }
            assertMatches(op, Schedule.registerTile(y0, x0, vectorize, random.nextInt(5)), random);
        }
    }

    @Test
    void carriesItsAbiMetadataInACustomSection() {
        GeneratedKernel kernel = compiler.compile(Op.matmul(7, 13, 5), Schedule.registerTile(2, 4, true, 0));
        String section = WasmSections.customSection(kernel.wasm(), WasmCompiler.ABI_SECTION);
        assertEquals(kernel.metadataJson(), section);
        assertTrue(section.startsWith("{\"abi\":1,\"op\":\"matmul\",\"shape\":[7,13,5],\"entry\":\"matmul\","
                + "\"operands\":[\"A\",\"B\",\"C\"]"), section);
        assertTrue(kernel.wasm().length < WasmCompiler.MAX_KERNEL_BYTES);
    }

    @Test
    void idsAreStableAndTellSchedulesApart() {
        Op op = Op.matmul(8, 8, 8);
        String id = compiler.compile(op, Schedule.registerTile(2, 8, true, 0)).kernelId();
        assertEquals(id, compiler.compile(op, Schedule.registerTile(2, 8, true, 0)).kernelId());
        assertNotEquals(id, compiler.compile(op, Schedule.registerTile(2, 8, true, 2)).kernelId());
        assertTrue(id.matches("k1[0-9a-f]{30}"), id);
    }

    @Test
    void refusesImpossibleOpsAndSchedulesWithTheReason() {
        assertRefused(() -> Op.matmul(0, 4, 4), "positive");
        assertRefused(() -> Op.matmul(-3, 4, 4), "positive");
        assertRefused(() -> new Op(OpKind.MATMUL, new int[] {4, 4}), "3 dimensions");
        assertRefused(() -> Op.matmul(100_000, 100_000, 100_000), "do not fit");
        Op op = Op.matmul(8, 8, 8);
        assertRefused(() -> compiler.compile(op, Schedule.registerTile(2, 6, true, 0)), "multiple of 4");
        assertRefused(() -> compiler.compile(op, Schedule.registerTile(8, 16, true, 0)), "accumulators");
        assertRefused(() -> compiler.compile(op, Schedule.registerTile(0, 4, true, 0)), "y0");
        assertRefused(() -> compiler.compile(op, new Schedule(4, 1, 0, 64, 0, 0, true, 0)), "not supported");
    }

    private void assertMatches(Op op, Schedule schedule, Random random) {
        float[] a = randomFloats(random, op.batch() * op.m() * op.k());
        float[] b = randomFloats(random, op.batch() * op.k() * op.n());
        GeneratedKernel kernel = compiler.compile(op, schedule);
        float[] c = WasmtimeRunner.run(kernel, op, a, b);
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

    private static void assertRefused(org.junit.jupiter.api.function.Executable call, String reason) {
        InvalidKernelException e = assertThrows(InvalidKernelException.class, call);
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }
}
