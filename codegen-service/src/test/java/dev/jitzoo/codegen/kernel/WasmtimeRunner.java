package dev.jitzoo.codegen.kernel;

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
import java.util.List;
import java.util.Map;

/**
 * Runs a kernel the way any ABI v1 harness would, using only the artifact: it creates the memory,
 * grows it to fit the operands, imports it as {@code env.memory}, calls the entry the metadata names
 * with the operands' byte offsets in the metadata's operand order.
 *
 * <p>Guards: every byte that is not an operand is filled with a NaN canary, and C with NaNs, before
 * the call. Afterwards every byte outside C must be unchanged (no stray write, inputs untouched);
 * a stray read of a canary makes the result NaN, which the caller's comparison catches.
 */
final class WasmtimeRunner {

    /** A quiet NaN with a payload no arithmetic produces, so a copied canary is recognisable. */
    private static final int CANARY_BITS = 0x7FC0_DEAD;
    private static final int GUARD_BYTES = 256;
    private static final int PAGE = 65536;
    private static final Engine ENGINE = new Engine();

    private WasmtimeRunner() {
    }

    /** Runs with 16-byte aligned operands; returns C. */
    static float[] run(GeneratedKernel kernel, Op op, float[] a, float[] b) {
        return run(kernel, op, a, b, 0);
    }

    /** Runs with every operand {@code skew} bytes past a 16-byte boundary (a multiple of 4). */
    static float[] run(GeneratedKernel kernel, Op op, float[] a, float[] b, int skew) {
        Map<String, Object> meta = MiniJson.object(kernel.metadataJson());
        String entry = (String) meta.get("entry");
        if (!List.of("A", "B", "C").equals(meta.get("operands"))) {
            throw new AssertionError("unexpected operand order " + meta.get("operands"));
        }
        int cFloats = op.batch() * op.m() * op.n();
        @SuppressWarnings("unchecked")
        Map<String, Object> pack = (Map<String, Object>) meta.get("pack");
        int packedFloats = pack == null ? 0 : Math.toIntExact((Long) pack.get("floats"));
        int offA = align(GUARD_BYTES) + skew;
        int offB = align(offA + a.length * 4 + GUARD_BYTES) + skew;
        int offC = align(offB + b.length * 4 + GUARD_BYTES) + skew;
        int end = offC + cFloats * 4;
        int offPacked = align(end + GUARD_BYTES) + skew;
        long pages = (offPacked + packedFloats * 4L + GUARD_BYTES + PAGE - 1) / PAGE;

        try (Store<Void> store = new Store<>(null, ENGINE);
             Module module = new Module(ENGINE, kernel.wasm());
             Memory memory = new Memory(store, new MemoryType(1, false))) {
            memory.grow(store, pages - 1);
            ByteBuffer buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            int size = buffer.capacity();
            for (int at = 0; at + 4 <= size; at += 4) {
                buffer.putInt(at, CANARY_BITS);
            }
            put(buffer, offA, a);
            put(buffer, offB, b);
            for (int i = 0; i < cFloats; i++) {
                buffer.putFloat(offC + i * 4, Float.NaN); // the kernel must write every element
            }
            byte[] before = new byte[size];
            buffer.get(0, before);

            try (Instance instance = new Instance(store, module, List.of(Extern.fromMemory(memory)))) {
                int bOperand = offB;
                if (pack != null) {
                    String packEntry = (String) pack.get("entry");
                    instance.getFunc(store, packEntry).orElseThrow(() -> new AssertionError("no export " + packEntry))
                            .call(store, Val.fromI32(offB), Val.fromI32(offPacked));
                    checkWrites(memory.buffer(store), before, offPacked, offPacked + packedFloats * 4, kernel, op,
                            "the packed copy", offA, a.length, offB, b.length, offC);
                    memory.buffer(store).get(0, before);
                    bOperand = offPacked;
                }
                instance.getFunc(store, entry).orElseThrow(() -> new AssertionError("no export " + entry))
                        .call(store, Val.fromI32(offA), Val.fromI32(bOperand), Val.fromI32(offC));
            }

            buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            checkWrites(buffer, before, offC, end, kernel, op, "C", offA, a.length, offB, b.length, offC);
            float[] c = new float[cFloats];
            for (int i = 0; i < cFloats; i++) {
                c[i] = buffer.getFloat(offC + i * 4);
            }
            return c;
        }
    }

    /** Throws unless every byte outside [from, to) is as it was. */
    private static void checkWrites(ByteBuffer buffer, byte[] before, int from, int to, GeneratedKernel kernel, Op op,
                                    String target, int offA, int aFloats, int offB, int bFloats, int offC) {
        for (int at = 0; at < before.length; at++) {
            if ((at < from || at >= to) && buffer.get(at) != before[at]) {
                throw new AssertionError(kernel.kernelId() + " " + op + " changed byte " + at + " outside " + target
                        + " (" + region(at, offA, aFloats, offB, bFloats, offC) + ")");
            }
        }
    }

    private static void put(ByteBuffer buffer, int offset, float[] values) {
        for (int i = 0; i < values.length; i++) {
            buffer.putFloat(offset + i * 4, values[i]);
        }
    }

    private static String region(int at, int offA, int aFloats, int offB, int bFloats, int offC) {
        if (at >= offA && at < offA + aFloats * 4) {
            return "inside A";
        }
        if (at >= offB && at < offB + bFloats * 4) {
            return "inside B";
        }
        return at < offC ? "a guard before C" : "past C";
    }

    private static int align(int offset) {
        return (offset + 15) & ~15;
    }
}
