package dev.jitzoo.compiler.kernel;

import java.util.List;
import java.util.StringJoiner;
import java.util.stream.Collectors;

/** Just enough JSON for metadata: an object whose keys come out in the order they are put. */
public final class JsonObjectWriter {

    private final StringJoiner fields = new StringJoiner(",", "{", "}");

    public JsonObjectWriter put(String key, long value) {
        return raw(key, Long.toString(value));
    }

    public JsonObjectWriter put(String key, boolean value) {
        return raw(key, Boolean.toString(value));
    }

    public JsonObjectWriter put(String key, String value) {
        return raw(key, quote(value));
    }

    /** A float as JSON: Java's shortest repr that reads back as the same float. */
    public JsonObjectWriter put(String key, float value) {
        if (!Float.isFinite(value)) {
            throw new IllegalArgumentException(key + " must be finite for JSON, got " + value);
        }
        return raw(key, Float.toString(value));
    }

    /** A value that is already JSON text. */
    public JsonObjectWriter putRaw(String key, String json) {
        return raw(key, json);
    }

    public JsonObjectWriter put(String key, JsonObjectWriter value) {
        return raw(key, value.toString());
    }

    public JsonObjectWriter putInts(String key, List<Integer> values) {
        return raw(key, values.stream().map(String::valueOf).collect(Collectors.joining(",", "[", "]")));
    }

    public JsonObjectWriter putStrings(String key, List<String> values) {
        return raw(key, values.stream().map(JsonObjectWriter::quote).collect(Collectors.joining(",", "[", "]")));
    }

    @Override
    public String toString() {
        return fields.toString();
    }

    private JsonObjectWriter raw(String key, String json) {
        fields.add(quote(key) + ":" + json);
        return this;
    }

    /** A JSON string literal (RFC 8259): quote, backslash and control characters escaped. */
    static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
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
        return out.append('"').toString();
    }
}
