package dev.jitzoo.compiler.wasm;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** A growable byte buffer with the encodings the Wasm binary format uses (LEB128, IEEE 754 little-endian). */
public final class ByteWriter {

    private byte[] bytes = new byte[256];
    private int size;

    public ByteWriter u8(int value) {
        ensure(1);
        bytes[size++] = (byte) value;
        return this;
    }

    /** Unsigned LEB128 of a u32 (a long, so that values above 2^31 can be written). */
    public ByteWriter varU32(long value) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("not a u32: " + value);
        }
        do {
            int low = (int) (value & 0x7F);
            value >>>= 7;
            u8(value != 0 ? low | 0x80 : low);
        } while (value != 0);
        return this;
    }

    /** Signed LEB128 of an i32 (the immediate of {@code i32.const}). */
    public ByteWriter varS32(int value) {
        return varS64(value);
    }

    /** Signed LEB128: stop once the remaining bits are all copies of the sign bit just written. */
    public ByteWriter varS64(long value) {
        while (true) {
            int low = (int) (value & 0x7F);
            value >>= 7;
            boolean done = (value == 0 && (low & 0x40) == 0) || (value == -1 && (low & 0x40) != 0);
            u8(done ? low : low | 0x80);
            if (done) {
                return this;
            }
        }
    }

    public ByteWriter f32(float value) {
        int bits = Float.floatToRawIntBits(value);
        return u8(bits).u8(bits >>> 8).u8(bits >>> 16).u8(bits >>> 24);
    }

    public ByteWriter bytes(byte[] data) {
        ensure(data.length);
        System.arraycopy(data, 0, bytes, size, data.length);
        size += data.length;
        return this;
    }

    /** A name (or any string): its UTF-8 length as a u32, then the UTF-8 bytes. */
    public ByteWriter name(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        return varU32(utf8.length).bytes(utf8);
    }

    /** Another writer's bytes prefixed with their length: how section and function bodies are framed. */
    public ByteWriter sized(ByteWriter body) {
        ensure(body.size + 5);
        varU32(body.size);
        System.arraycopy(body.bytes, 0, bytes, size, body.size);
        size += body.size;
        return this;
    }

    public int size() {
        return size;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(bytes, size);
    }

    private void ensure(int more) {
        if (size + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
        }
    }
}
