package dev.jitzoo.compiler.kernel;

import java.util.List;

/** Just enough JSON for metadata: an object whose keys come out in the order they are put. */
public final class JsonObjectWriter {

    private final StringBuilder out = new StringBuilder(64).append('{');

    public JsonObjectWriter put(String key, long value) {
        key(key).append(value);
        return this;
    }

    public JsonObjectWriter put(String key, boolean value) {
        key(key).append(value);
        return this;
    }

    public JsonObjectWriter put(String key, String value) {
        quote(key(key), value);
        return this;
    }

    /** A float as JSON: Java's shortest repr that reads back as the same float. */
    public JsonObjectWriter put(String key, float value) {
        if (!Float.isFinite(value)) {
            throw new IllegalArgumentException(key + " must be finite for JSON, got " + value);
        }
        key(key).append(value);
        return this;
    }

    /** A value that is already JSON text. */
    public JsonObjectWriter putRaw(String key, String json) {
        key(key).append(json);
        return this;
    }

    public JsonObjectWriter put(String key, JsonObjectWriter value) {
        key(key).append(value.out).append('}');
        return this;
    }

    public JsonObjectWriter putInts(String key, List<Integer> values) {
        StringBuilder b = key(key).append('[');
        for (int i = 0; i < values.size(); i++) {
            (i == 0 ? b : b.append(',')).append(values.get(i).intValue());
        }
        b.append(']');
        return this;
    }

    public JsonObjectWriter putStrings(String key, List<String> values) {
        StringBuilder b = key(key).append('[');
        for (int i = 0; i < values.size(); i++) {
            quote(i == 0 ? b : b.append(','), values.get(i));
        }
        b.append(']');
        return this;
    }

    @Override
    public String toString() {
        return new StringBuilder(out.length() + 1).append(out).append('}').toString();
    }

    /** Starts a field: a comma after the first, then the quoted key and a colon. */
    private StringBuilder key(String key) {
        if (out.length() > 1) {
            out.append(',');
        }
        return quote(out, key).append(':');
    }

    /** Appends a JSON string literal (RFC 8259): quote, backslash and control characters escaped. */
    private static StringBuilder quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char ch = text.charAt(i);
            switch (ch) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        out.append(String.format("\\u%04x", (int) ch));
                    } else {
                        out.append(ch);
                    }
                }
            }
        }
        return out.append('"');
    }
}
