package dev.jitzoo.compiler.kernel;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict little JSON parser for tests (objects keep key order), so metadata is checked by
 * parsing it rather than by matching text. Numbers come back as Long when integral, else Double.
 */
final class MiniJson {

    private final String text;
    private int pos;

    private MiniJson(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        MiniJson parser = new MiniJson(text);
        Object value = parser.value();
        parser.skipSpace();
        if (parser.pos != text.length()) {
            throw parser.error("trailing text");
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        return (Map<String, Object>) parse(text);
    }

    private Object value() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        char ch = text.charAt(pos);
        if (ch == '{') {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++;
            skipSpace();
            if (peek('}')) {
                return map;
            }
            do {
                skipSpace();
                String key = string();
                skipSpace();
                expect(':');
                if (map.put(key, value()) != null) {
                    throw error("duplicate key " + key);
                }
                skipSpace();
            } while (peek(','));
            expect('}');
            return map;
        }
        if (ch == '[') {
            List<Object> list = new ArrayList<>();
            pos++;
            skipSpace();
            if (peek(']')) {
                return list;
            }
            do {
                list.add(value());
                skipSpace();
            } while (peek(','));
            expect(']');
            return list;
        }
        if (ch == '"') {
            return string();
        }
        for (String literal : new String[] {"true", "false", "null"}) {
            if (text.startsWith(literal, pos)) {
                pos += literal.length();
                return literal.equals("null") ? null : Boolean.valueOf(literal);
            }
        }
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        String number = text.substring(start, pos);
        if (number.isEmpty()) {
            throw error("unexpected character");
        }
        return number.matches("-?(0|[1-9][0-9]*)") ? (Object) Long.valueOf(number) : (Object) Double.valueOf(number);
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char ch = text.charAt(pos++);
            if (ch == '"') {
                return out.toString();
            }
            if (ch < 0x20) {
                throw error("raw control character in string");
            }
            if (ch != '\\') {
                out.append(ch);
                continue;
            }
            char escape = text.charAt(pos++);
            switch (escape) {
                case '"', '\\', '/' -> out.append(escape);
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> throw error("bad escape \\" + escape);
            }
        }
    }

    private boolean peek(char ch) {
        if (pos < text.length() && text.charAt(pos) == ch) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(char ch) {
        if (!peek(ch)) {
            throw error("expected '" + ch + "'");
        }
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at " + pos + " in " + text);
    }
}
