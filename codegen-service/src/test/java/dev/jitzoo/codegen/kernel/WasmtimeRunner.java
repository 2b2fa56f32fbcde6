package dev.jitzoo.codegen.kernel;

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

/**
 * Runs a kernel artifact in wasmtime the way any ABI v1 harness would: operands placed one after
 * another in the imported memory, 16-byte aligned, a canary region after C that must survive.
 */
final class WasmtimeRunner {

    static final float CANARY = -12345.678f;
    private static final int CANARY_FLOATS = 64;

    private WasmtimeRunner() {
    }

    /** Returns C; fails if the kernel wrote outside C. */
    static float[] run(GeneratedKernel kernel, Op op, float[] a, float[] b) {
        int cFloats = op.batch() * op.m() * op.n();
        int offA = 64;
        int offB = align(offA + a.length * 4);
        int offC = align(offB + b.length * 4);
        int offCanary = offC + cFloats * 4;
        long bytes = offCanary + CANARY_FLOATS * 4L;
        long pages = (bytes + 65535) / 65536;
        try (Store<Void> store = Store.withoutData();
             Module module = new Module(store.engine(), kernel.wasm());
             Memory memory = new Memory(store, new MemoryType(pages, false))) {
            ByteBuffer buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < a.length; i++) {
                buffer.putFloat(offA + i * 4, a[i]);
            }
            for (int i = 0; i < b.length; i++) {
                buffer.putFloat(offB + i * 4, b[i]);
            }
            for (int i = 0; i < cFloats; i++) {
                buffer.putFloat(offC + i * 4, Float.NaN); // the kernel must write every element
            }
            for (int i = 0; i < CANARY_FLOATS; i++) {
                buffer.putFloat(offCanary + i * 4, CANARY);
            }
            buffer.putFloat(offA - 4, CANARY);
            try (Instance instance = new Instance(store, module, List.of(Extern.fromMemory(memory)))) {
                instance.getFunc(store, op.kind().abiName).orElseThrow()
                        .call(store, Val.fromI32(offA), Val.fromI32(offB), Val.fromI32(offC));
            }
            buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < CANARY_FLOATS; i++) {
                if (buffer.getFloat(offCanary + i * 4) != CANARY) {
                    throw new AssertionError(kernel.kernelId() + " wrote past C at float " + i);
                }
            }
            if (buffer.getFloat(offA - 4) != CANARY) {
                throw new AssertionError(kernel.kernelId() + " wrote before A");
            }
            float[] c = new float[cFloats];
            for (int i = 0; i < cFloats; i++) {
                c[i] = buffer.getFloat(offC + i * 4);
            }
            return c;
        }
    }

    private static int align(int offset) {
        return (offset + 15) & ~15;
    }
}
