package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.MemoryType;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The generic matmul, shapes given at call time, run in wasmtime against the float64 reference. */
class GenericKernelsTest {

    private static final Engine ENGINE = new Engine();
    private static final int CANARY_BITS = 0x7FC0_DEAD;
    private static final int GUARD = 256;

    @ParameterizedTest(name = "{4} [{0}, {1}, {2}] skew {3}")
    @CsvSource({
        "1, 1, 1, 0, matmul", "1, 7, 8, 0, matmul", "4, 8, 8, 0, matmul", "5, 3, 7, 4, matmul", "3, 9, 17, 8, matmul",
        "13, 17, 29, 12, matmul", "64, 64, 64, 0, matmul", "1, 768, 2304, 0, matmul", "128, 96, 72, 4, matmul", "7, 1, 33, 0, matmul",
        "1, 1, 1, 0, matmul_bt", "1, 7, 8, 0, matmul_bt", "2, 8, 4, 0, matmul_bt", "5, 3, 7, 4, matmul_bt", "3, 9, 17, 8, matmul_bt",
        "13, 17, 29, 12, matmul_bt", "128, 64, 128, 0, matmul_bt", "1, 64, 37, 4, matmul_bt", "7, 1, 33, 0, matmul_bt",
    })
    void matchesTheReferenceAndWritesOnlyC(int m, int k, int n, int skew, String entry) {
        Random random = new Random(TestSeeds.of(m, k, n));
        float[] a = floats(random, m * k), b = floats(random, k * n);
        int offA = GUARD + skew, offB = align(offA + 4 * a.length + GUARD) + skew, offC = align(offB + 4 * b.length + GUARD) + skew;
        int end = offC + 4 * m * n;
        long pages = (end + GUARD + 65535) / 65536;
        try (Store<Void> store = new Store<>(null, ENGINE);
             Module module = new Module(ENGINE, GenericKernels.module(false));
             Memory memory = new Memory(store, new MemoryType(1, false))) {
            memory.grow(store, pages - 1);
            ByteBuffer buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + 4 <= buffer.capacity(); at += 4) {
                buffer.putInt(at, CANARY_BITS);
            }
            put(buffer, offA, a);
            put(buffer, offB, b);
            byte[] before = new byte[buffer.capacity()];
            buffer.get(0, before);
            try (Instance instance = new Instance(store, module, List.of(Extern.fromMemory(memory)))) {
                instance.getFunc(store, entry).orElseThrow().call(store,
                        Val.fromI32(offA), Val.fromI32(offB), Val.fromI32(offC), Val.fromI32(m), Val.fromI32(k), Val.fromI32(n));
            }
            buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            float[] c = new float[m * n];
            for (int i = 0; i < c.length; i++) {
                c[i] = buffer.getFloat(offC + 4 * i);
            }
            for (int at = 0; at < before.length; at++) {
                if (at < offC || at >= end) {
                    assertTrue(buffer.get(at) == before[at], "byte " + at + " outside C changed");
                }
            }
            Op op = new Op(OpKind.MATMUL, List.of(m, k, n), entry.equals("matmul_bt"), false, List.of());
            double error = ReferenceKernels.maxRelativeError(c, ReferenceKernels.matmul(op, a, b));
            assertTrue(error <= 1e-5, "max relative error " + error);
        }
    }

    @Test
    void bothFormsFitAKernelsBudgetAndDifferOnlyInTheirMemory(@TempDir Path dir) throws Exception {
        byte[] plain = GenericKernels.module(false), shared = GenericKernels.module(true);
        assertTrue(plain.length < WasmCompiler.MAX_KERNEL_BYTES, plain.length + " bytes");
        assertNotEquals(plain.length, 0);
        assertTrue(shared.length > plain.length, "the shared form declares a maximum");
        Path ts = dir.resolve("generic-kernels.ts");
        GenericKernels.main(new String[] {ts.toString()});
        String source = Files.readString(ts);
        assertTrue(source.contains(java.util.Base64.getEncoder().encodeToString(plain)), source);
        assertTrue(source.contains(java.util.Base64.getEncoder().encodeToString(shared)), source);
        assertArrayEquals(plain, GenericKernels.module(false), "the bytes are a pure function of the compiler");
    }

    private static float[] floats(Random random, int count) {
        float[] out = new float[count];
        for (int i = 0; i < count; i++) {
            out[i] = random.nextFloat() * 2 - 1;
        }
        return out;
    }

    private static void put(ByteBuffer buffer, int offset, float[] values) {
        for (int i = 0; i < values.length; i++) {
            buffer.putFloat(offset + 4 * i, values[i]);
        }
    }

    private static int align(int offset) {
        return (offset + 15) & ~15;
    }
}
