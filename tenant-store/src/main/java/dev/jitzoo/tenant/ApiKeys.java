package dev.jitzoo.tenant;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * API keys: {@code jz_} and 32 URL-safe characters (192 random bits). Only their SHA-256 is stored,
 * and the first characters ({@link #prefix}) to tell keys apart in listings: a key is shown once,
 * when it is made. A random key of that length needs no slow hash: it cannot be guessed from its digest.
 */
public final class ApiKeys {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PREFIX = "jz_";

    private ApiKeys() {
    }

    public static String generate() {
        return PREFIX + secret();
    }

    /** 192 random bits as 32 URL-safe characters: a key's secret part, and any other secret made here (an admin token). */
    public static String secret() {
        byte[] secret = new byte[24];
        RANDOM.nextBytes(secret);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    public static String hash(String key) {
        return Digests.sha256Hex(key, 32);
    }

    /** What listings show of a key: its first 7 characters. */
    public static String prefix(String key) {
        return key.substring(0, Math.min(7, key.length()));
    }

    /** Whether the text has a key's form; one that has not is refused without a lookup. */
    public static boolean wellFormed(String key) {
        return key.length() == PREFIX.length() + 32 && key.startsWith(PREFIX)
                && key.chars().skip(PREFIX.length()).allMatch(c -> Character.isLetterOrDigit(c) || c == '-' || c == '_');
    }
}
