package dev.jitzoo.compiler.wasm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * LEB128 as properties: every value {@link ByteWriter} encodes reads back as itself through an
 * independent decoder written from the spec, in the fewest bytes, with the continuation bit on
 * every byte but the last. Values are random (and the edges of each byte length); each run draws
 * new ones from a seed it prints on failure, and {@code -Djitzoo.seed=N} replays a run.
 */
class Leb128PropertyTest {

    private static final int DRAWS = 20_000;
    private static final long SEED = Long.getLong("jitzoo.seed", System.nanoTime());

    @Test
    void unsignedValuesReadBackInTheFewestBytes() {
        Random random = new Random(SEED);
        for (long v : values(() -> random.nextLong() >>> (32 + random.nextInt(32)), 0, 0xFFFF_FFFFL)) {
            byte[] bytes = new ByteWriter().varU32(v).toByteArray();
            check(v, bytes, decodeUnsigned(bytes), Math.max(1, (64 - Long.numberOfLeadingZeros(v) + 6) / 7), 5);
        }
    }

    @Test
    void signedValuesReadBackInTheFewestBytes() {
        Random random = new Random(SEED);
        for (long v : values(() -> random.nextLong() >> random.nextInt(64), Long.MIN_VALUE, Long.MAX_VALUE)) {
            byte[] bytes = new ByteWriter().varS64(v).toByteArray();
            check(v, bytes, decodeSigned(bytes), signedLength(v), 10);
            if (v == (int) v) {
                byte[] narrow = new ByteWriter().varS32((int) v).toByteArray();
                check(v, narrow, decodeSigned(narrow), signedLength(v), 5);
            }
        }
    }

    /** Random values, and each power of two within [min, max] with its neighbours (where byte lengths change). */
    private static List<Long> values(LongSupplier draw, long min, long max) {
        List<Long> values = new ArrayList<>(List.of(min, max, 0L));
        for (int bit = 0; bit < 64; bit++) {
            for (long edge : new long[] {(1L << bit) - 1, 1L << bit, (1L << bit) + 1, -(1L << bit), -(1L << bit) - 1}) {
                if (edge >= min && edge <= max) {
                    values.add(edge);
                }
            }
        }
        for (int i = 0; i < DRAWS; i++) {
            long v = draw.getAsLong();
            if (v >= min && v <= max) {
                values.add(v);
            }
        }
        return values;
    }

    private static void check(long value, byte[] bytes, long decoded, int fewest, int most) {
        String at = "value " + value + " (seed " + SEED + ", replay with -Djitzoo.seed=" + SEED + ")";
        assertEquals(value, decoded, at);
        assertEquals(fewest, bytes.length, "bytes of " + at);
        assertTrue(bytes.length <= most, at);
        for (int i = 0; i < bytes.length; i++) {
            assertEquals(i < bytes.length - 1, (bytes[i] & 0x80) != 0, "continuation bit of byte " + i + " of " + at);
        }
    }

    /** Bits of a two's complement value plus its sign bit, in 7-bit groups. */
    private static int signedLength(long v) {
        int bits = 65 - Long.numberOfLeadingZeros(v < 0 ? ~v : v);
        return (bits + 6) / 7;
    }

    private static long decodeUnsigned(byte[] bytes) {
        long result = 0;
        for (int i = 0; i < bytes.length; i++) {
            result |= (long) (bytes[i] & 0x7F) << (7 * i);
        }
        return result;
    }

    private static long decodeSigned(byte[] bytes) {
        long result = 0;
        int shift = 0;
        for (byte b : bytes) {
            result |= (long) (b & 0x7F) << shift;
            shift += 7;
        }
        if (shift < 64 && (bytes[bytes.length - 1] & 0x40) != 0) {
            result |= -1L << shift;
        }
        return result;
    }
}
