package dev.jitzoo.compiler.kernel;

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
import java.util.LinkedHashMap;
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
        return run(kernel, op, Map.of("A", a, "B", b), skew);
    }

    /**
     * Runs with the operands in the metadata's order, each {@code skew} bytes past a 16-byte
     * boundary with a guard between them; {@code inputs} has every operand but C. Returns C.
     */
    @SuppressWarnings("unchecked")
    static float[] run(GeneratedKernel kernel, Op op, Map<String, ?> inputs, int skew) {
        Map<String, Object> meta = MiniJson.object(kernel.metadataJson());
        String entry = (String) meta.get("entry");
        List<String> operands = (List<String>) meta.get("operands");
        if (!operands.get(0).equals("A") || !operands.contains("C")) {
            throw new AssertionError("unexpected operands " + operands);
        }
        int cFloats = ((List<Long>) ((Map<String, Object>) meta.get("operandShapes")).get("C")).stream()
                .mapToInt(Long::intValue).reduce(1, (x, y) -> x * y);
        Map<String, Object> pack = (Map<String, Object>) meta.get("pack");
        int packedFloats = pack == null ? 0 : Math.toIntExact((Long) pack.get("floats"));
        Map<String, Integer> offsets = new LinkedHashMap<>();
        List<String> scratch = meta.containsKey("scratch") ? (List<String>) meta.get("scratch") : List.of();
        Map<String, Integer> scratchBytes = new LinkedHashMap<>();
        int next = GUARD_BYTES;
        for (String operand : operands) {
            int at = align(next) + skew;
            offsets.put(operand, at);
            int bytes = operand.equals("C") ? 4 * cFloats : scratch.contains(operand) ? scratchBytes(meta, operand) : bytes(inputs.get(operand));
            if (scratch.contains(operand)) {
                scratchBytes.put(operand, bytes);
            }
            next = at + bytes + GUARD_BYTES;
        }
        int offC = offsets.get("C");
        int end = offC + cFloats * 4;
        int offPacked = align(next) + skew;
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
            for (String operand : operands) {
                if (!operand.equals("C") && !scratch.contains(operand)) {
                    put(buffer, offsets.get(operand), inputs.get(operand));
                }
            }
            for (int i = 0; i < cFloats; i++) {
                buffer.putFloat(offC + i * 4, Float.NaN); // the kernel must write every element
            }
            byte[] before = new byte[size];
            buffer.get(0, before);

            try (Instance instance = new Instance(store, module, List.of(Extern.fromMemory(memory)))) {
                if (pack != null) {
                    String packEntry = (String) pack.get("entry");
                    instance.getFunc(store, packEntry).orElseThrow(() -> new AssertionError("no export " + packEntry))
                            .call(store, Val.fromI32(offsets.get("B")), Val.fromI32(offPacked));
                    checkWrites(memory.buffer(store), before, offPacked, offPacked + packedFloats * 4, kernel, op,
                            "the packed copy", offsets);
                    memory.buffer(store).get(0, before);
                    offsets.put("B", offPacked);
                }
                Val[] args = offsets.values().stream().map(Val::fromI32).toArray(Val[]::new);
                instance.getFunc(store, entry).orElseThrow(() -> new AssertionError("no export " + entry))
                        .call(store, args);
            }

            buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            for (Map.Entry<String, Integer> s : scratchBytes.entrySet()) { // scratch is the kernel's to write: taken as it left it
                byte[] left = new byte[s.getValue()];
                buffer.get(offsets.get(s.getKey()), left);
                System.arraycopy(left, 0, before, offsets.get(s.getKey()), left.length);
            }
            checkWrites(buffer, before, offC, end, kernel, op, "C", offsets);
            float[] c = new float[cFloats];
            for (int i = 0; i < cFloats; i++) {
                c[i] = buffer.getFloat(offC + i * 4);
            }
            return c;
        }
    }

    /** Throws unless every byte outside [from, to) is as it was. */
    private static void checkWrites(ByteBuffer buffer, byte[] before, int from, int to, GeneratedKernel kernel, Op op,
                                    String target, Map<String, Integer> offsets) {
        for (int at = 0; at < before.length; at++) {
            if ((at < from || at >= to) && buffer.get(at) != before[at]) {
                throw new AssertionError(kernel.kernelId() + " " + op + " changed byte " + at + " outside " + target
                        + " (operands at " + offsets + ")");
            }
        }
    }

    /** Writes an operand: a float[] as float32, a byte[] (an int8 operand) byte for byte. */
    private static void put(ByteBuffer buffer, int offset, Object values) {
        if (values instanceof byte[] bytes) {
            buffer.put(offset, bytes);
            return;
        }
        float[] floats = (float[]) values;
        for (int i = 0; i < floats.length; i++) {
            buffer.putFloat(offset + i * 4, floats[i]);
        }
    }

    /** Bytes of a scratch operand: its shape's elements in its type (operandTypes, float32 when unnamed). */
    @SuppressWarnings("unchecked")
    private static int scratchBytes(Map<String, Object> meta, String operand) {
        int elements = ((List<Long>) ((Map<String, Object>) meta.get("operandShapes")).get(operand)).stream()
                .mapToInt(Long::intValue).reduce(1, (x, y) -> x * y);
        Map<String, Object> types = (Map<String, Object>) meta.getOrDefault("operandTypes", Map.of());
        return elements * switch (String.valueOf(types.getOrDefault(operand, "float32"))) {
            case "int8" -> 1;
            case "int16" -> 2;
            default -> 4;
        };
    }

    private static int bytes(Object values) {
        return values instanceof byte[] bytes ? bytes.length : 4 * ((float[]) values).length;
    }

    private static int align(int offset) {
        return (offset + 15) & ~15;
    }
}
