package dev.jitzoo.tenant;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 of a string, in hex: how the gateway keeps secrets and addresses out of what it stores and sends. */
public final class Digests {

    private Digests() {
    }

    /** The first {@code bytes} bytes of SHA-256 over the UTF-8 text, as lower-case hex. */
    public static String sha256Hex(String text, int bytes) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every Java platform has SHA-256
        }
    }
}
