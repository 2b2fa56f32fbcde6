package dev.jitzoo.compiler.wasm;

import static dev.jitzoo.compiler.wasm.ByteWriterTest.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.MemoryType;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModuleEncoderTest {

    @Test
    void writesHeaderSectionsInOrderAndTheCustomSection() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(3));
        byte[] module = new ModuleEncoder().importMemory("env", "memory", 1).function(f.build(), "entry")
                .customSection("jitzoo.abi", "{\"abi\":1}".getBytes(StandardCharsets.UTF_8)).encode(1024);
        assertArrayEquals(bytes(0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00), Arrays.copyOf(module, 8));
        ModuleWalker.Parsed parsed = ModuleWalker.parse(module);
        assertEquals(List.of(1, 2, 3, 7, 10, 0), parsed.sectionIds());
        assertEquals(List.of("(i32,i32,i32)->()"), parsed.functionTypes());
        assertEquals(List.of(new ModuleWalker.Import("env", "memory", 2, 0, 1)), parsed.imports());
        assertEquals(List.of(new ModuleWalker.Export("entry", 0, 0)), parsed.exports());
        assertArrayEquals(bytes(0x00, 0x0B), parsed.bodies().get(0), "no locals, empty code, end");
        assertEquals("{\"abi\":1}", new String(parsed.customSections().get("jitzoo.abi"), StandardCharsets.UTF_8));
        assertEquals(List.of("TYPE", "IMPORT", "FUNCTION", "EXPORT", "CODE", "jitzoo.abi"), WasmSections.names(module));
    }

    @Test
    void encodesSimdInstructionsWithLeb128SubOpcodesAndMemargs() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(1));
        f.localGet(0).memory(SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(300))
                .localGet(0).memory(SimdOpcode.V128_LOAD, new MemArg(4, 16))
                .simd(SimdOpcode.F32X4_MUL).f32x4ExtractLane(3).op(Opcode.DROP);
        byte[] body = f.encode().toByteArray();
        assertArrayEquals(bytes(0x00, // no local declarations
                0x20, 0x00, 0xFD, 0x09, 0x02, 0xAC, 0x02,
                0x20, 0x00, 0xFD, 0x00, 0x04, 0x10,
                0xFD, 0xE6, 0x01, 0xFD, 0x1F, 0x03, 0x1A, 0x0B), body);
    }

    @Test
    void groupsLocalDeclarationsIntoRuns() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(3));
        assertEquals(3, f.local(ValType.I32));
        f.local(ValType.I32);
        f.local(ValType.V128);
        f.local(ValType.F32);
        f.local(ValType.F32);
        assertArrayEquals(bytes(0x03, 0x02, 0x7F, 0x01, 0x7B, 0x02, 0x7D, 0x0B), f.encode().toByteArray());
    }

    @Test
    void refusesMalformedBodiesWhileTheyAreBuilt() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(1));
        assertThrows(IllegalStateException.class, f::end);
        assertThrows(IllegalStateException.class, f::elseBranch);
        assertThrows(IllegalArgumentException.class, () -> f.brIf(0));
        assertThrows(IllegalStateException.class, () -> f.localSet(0), "nothing on the stack to set");
        assertThrows(IllegalArgumentException.class, () -> f.localGet(1));
        assertThrows(IllegalArgumentException.class, () -> f.op(Opcode.LOCAL_GET));
        assertThrows(IllegalArgumentException.class, () -> f.op(Opcode.F32_LOAD));
        assertThrows(IllegalArgumentException.class, () -> f.simd(SimdOpcode.V128_LOAD));
        assertThrows(IllegalArgumentException.class, () -> f.memory(Opcode.F32_LOAD, new MemArg(3, 0)));
        assertThrows(IllegalArgumentException.class, () -> f.f32x4ExtractLane(4));
        f.block().loop();
        f.i32Const(1).brIf(1);
        f.end();
        assertThrows(IllegalStateException.class, f::encode, "a block is still open");
        f.end().i32Const(7);
        assertThrows(IllegalStateException.class, f::encode, "a value is left on the stack");
    }

    @Test
    void refusesModulesOverTheBudget() {
        ModuleEncoder encoder = new ModuleEncoder().function(new FunctionBuilder(FuncType.i32Params(0)).build(), "f")
                .customSection("big", new byte[200]);
        KernelTooLargeException e = assertThrows(KernelTooLargeException.class, () -> encoder.encode(100));
        assertEquals(100, e.limit());
        assertEquals(encoder.encode(1000).length, e.size());
    }

    /** c[0..3] = a[0..3] * b[0] + a[0..3]; c[4] = lane 2 of that; run in a real engine. */
    @Test
    void handBuiltSimdModuleRunsInWasmtime() {
        FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(3));
        int sum = f.local(ValType.V128);
        f.localGet(0).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0));
        f.localGet(1).memory(SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(0)).simd(SimdOpcode.F32X4_MUL);
        f.localGet(0).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).simd(SimdOpcode.F32X4_ADD).localSet(sum);
        f.localGet(2).localGet(sum).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
        f.localGet(2).localGet(sum).f32x4ExtractLane(2).memory(Opcode.F32_STORE, MemArg.floatAt(16));
        byte[] wasm = new ModuleEncoder().importMemory("env", "memory", 1).function(f.build(), "fma").encode(1024);

        try (Store<Void> store = Store.withoutData();
             Module module = new Module(store.engine(), wasm);
             Memory memory = new Memory(store, new MemoryType(1, false))) {
            ByteBuffer buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            float[] a = {1, 2, 3, 4};
            for (int i = 0; i < 4; i++) {
                buffer.putFloat(16 + 4 * i, a[i]);
            }
            buffer.putFloat(48, 10f);
            try (Instance instance = new Instance(store, module, List.of(Extern.fromMemory(memory)))) {
                instance.getFunc(store, "fma").orElseThrow().call(store, Val.fromI32(16), Val.fromI32(48), Val.fromI32(64));
            }
            buffer = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);
            float[] c = new float[5];
            for (int i = 0; i < 5; i++) {
                c[i] = buffer.getFloat(64 + 4 * i);
            }
            assertArrayEquals(new float[] {11, 22, 33, 44, 33}, c);
        }
    }
}
