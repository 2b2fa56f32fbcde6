package dev.jitzoo.compiler.wasm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ByteWriterTest {

    @Test
    void unsignedLeb128KnownVectors() {
        assertArrayEquals(bytes(0x00), new ByteWriter().varU32(0).toByteArray());
        assertArrayEquals(bytes(0x7F), new ByteWriter().varU32(127).toByteArray());
        assertArrayEquals(bytes(0x80, 0x01), new ByteWriter().varU32(128).toByteArray());
        assertArrayEquals(bytes(0xE5, 0x8E, 0x26), new ByteWriter().varU32(624485).toByteArray());
        assertArrayEquals(bytes(0xFF, 0xFF, 0xFF, 0xFF, 0x0F), new ByteWriter().varU32(0xFFFF_FFFFL).toByteArray());
        assertThrows(IllegalArgumentException.class, () -> new ByteWriter().varU32(-1));
        assertThrows(IllegalArgumentException.class, () -> new ByteWriter().varU32(1L << 32));
    }

    @Test
    void signedLeb128KnownVectors() {
        assertArrayEquals(bytes(0xC0, 0xBB, 0x78), new ByteWriter().varS32(-123456).toByteArray());
        assertArrayEquals(bytes(0x7F), new ByteWriter().varS32(-1).toByteArray());
        assertArrayEquals(bytes(0x3F), new ByteWriter().varS32(63).toByteArray());
        assertArrayEquals(bytes(0xC0, 0x00), new ByteWriter().varS32(64).toByteArray());
        assertArrayEquals(bytes(0x40), new ByteWriter().varS32(-64).toByteArray());
        assertArrayEquals(bytes(0xBF, 0x7F), new ByteWriter().varS32(-65).toByteArray());
        assertArrayEquals(bytes(0xFF, 0xFF, 0xFF, 0xFF, 0x07), new ByteWriter().varS32(Integer.MAX_VALUE).toByteArray());
        assertArrayEquals(bytes(0x80, 0x80, 0x80, 0x80, 0x78), new ByteWriter().varS32(Integer.MIN_VALUE).toByteArray());
        assertArrayEquals(bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F),
                new ByteWriter().varS64(Long.MIN_VALUE).toByteArray());
        assertArrayEquals(bytes(0xC0, 0xBB, 0x78), new ByteWriter().varS64(-123456L).toByteArray());
    }

    @Test
    void floatsAreLittleEndianIeee754() {
        assertArrayEquals(bytes(0x00, 0x00, 0x80, 0x3F), new ByteWriter().f32(1.0f).toByteArray());
        assertArrayEquals(bytes(0x00, 0x00, 0x00, 0x80), new ByteWriter().f32(-0.0f).toByteArray());
        assertArrayEquals(bytes(0xAD, 0xDE, 0xC0, 0x7F), new ByteWriter().f32(Float.intBitsToFloat(0x7FC0DEAD)).toByteArray());
    }

    @Test
    void namesAreUtf8WithALengthPrefix() {
        assertArrayEquals(bytes(0x03, 'e', 'n', 'v'), new ByteWriter().name("env").toByteArray());
        assertArrayEquals(bytes(0x02, 0xC3, 0xA9), new ByteWriter().name("é").toByteArray());
        assertArrayEquals(bytes(0x00), new ByteWriter().name("").toByteArray());
    }

    @Test
    void sizedPrefixesAnotherWritersLength() {
        ByteWriter body = new ByteWriter();
        for (int i = 0; i < 200; i++) {
            body.u8(i);
        }
        byte[] framed = new ByteWriter().u8(0x0A).sized(body).toByteArray();
        assertArrayEquals(bytes(0x0A, 0xC8, 0x01, 0x00, 0x01), java.util.Arrays.copyOf(framed, 5));
        assertArrayEquals(body.toByteArray(), java.util.Arrays.copyOfRange(framed, 3, framed.length));
    }

    static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }
}
