package dev.jitzoo.codegen.wasm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ByteWriterTest {

    @Test
    void encodesLeb128KnownVectors() {
        assertArrayEquals(bytes(0xE5, 0x8E, 0x26), new ByteWriter().varU32(624485).toByteArray());
        assertArrayEquals(bytes(0xC0, 0xBB, 0x78), new ByteWriter().varS32(-123456).toByteArray());
        assertArrayEquals(bytes(0x7F), new ByteWriter().varS32(-1).toByteArray());
        assertArrayEquals(bytes(0xC0, 0x00), new ByteWriter().varS32(64).toByteArray());
        assertArrayEquals(bytes(0xFF, 0xFF, 0xFF, 0xFF, 0x0F), new ByteWriter().varU32(0xFFFF_FFFFL).toByteArray());
    }

    @Test
    void encodesFloatsLittleEndian() {
        assertArrayEquals(bytes(0x00, 0x00, 0x80, 0x3F), new ByteWriter().f32(1.0f).toByteArray());
    }

    @Test
    void moduleRoundTripsThroughTheSectionReader() {
        FunctionBuilder f = new FunctionBuilder(3);
        f.local(ValType.I32);
        byte[] module = ModuleEncoder.encode(3, f, "entry", "jitzoo.abi", "{\"abi\":1}", 1024);
        assertArrayEquals(bytes(0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00), java.util.Arrays.copyOf(module, 8));
        assertEquals(List.of("TYPE", "IMPORT", "FUNCTION", "EXPORT", "CODE", "jitzoo.abi"),
                ModuleEncoder.sectionNames(module));
        assertEquals("{\"abi\":1}", WasmSections.customSection(module, "jitzoo.abi"));
    }

    @Test
    void refusesModulesOverBudget() {
        org.junit.jupiter.api.Assertions.assertThrows(KernelTooLargeException.class,
                () -> ModuleEncoder.encode(3, new FunctionBuilder(3), "entry", "jitzoo.abi", "x".repeat(200), 100));
    }

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }
}
