package dev.jitzoo.compiler.wasm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An independent reader of the module structure our encoder writes, for tests: it shares no code
 * with the encoder, so a symmetric mistake on both sides cannot hide. Reads the header, every
 * section's framing and the contents of the type, import, function, export, code and custom sections.
 */
public final class ModuleWalker {

    public record Import(String module, String name, int kind, int limitsFlag, long minPages) {
    }

    public record Export(String name, int kind, long index) {
    }

    public record Parsed(List<Integer> sectionIds, List<String> functionTypes, List<Import> imports,
                         List<Long> functionTypeIndices, List<Export> exports, List<byte[]> bodies,
                         Map<String, byte[]> customSections) {
    }

    private final byte[] bytes;
    private int pos;

    private ModuleWalker(byte[] bytes) {
        this.bytes = bytes;
    }

    public static Parsed parse(byte[] module) {
        return new ModuleWalker(module).walk();
    }

    private Parsed walk() {
        byte[] header = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
        for (int i = 0; i < header.length; i++) {
            if (bytes[i] != header[i]) {
                throw new IllegalArgumentException("bad header byte " + i);
            }
        }
        pos = 8;
        List<Integer> ids = new ArrayList<>();
        List<String> types = new ArrayList<>();
        List<Import> imports = new ArrayList<>();
        List<Long> functions = new ArrayList<>();
        List<Export> exports = new ArrayList<>();
        List<byte[]> bodies = new ArrayList<>();
        Map<String, byte[]> customs = new LinkedHashMap<>();
        while (pos < bytes.length) {
            int id = u8();
            int size = (int) u32();
            int end = pos + size;
            if (end > bytes.length) {
                throw new IllegalArgumentException("section " + id + " overruns the module");
            }
            ids.add(id);
            switch (id) {
                case 0 -> {
                    String name = name();
                    byte[] payload = new byte[end - pos];
                    System.arraycopy(bytes, pos, payload, 0, payload.length);
                    customs.put(name, payload);
                    pos = end;
                }
                case 1 -> repeat(() -> types.add(funcType()));
                case 2 -> repeat(() -> {
                    String module = name(), field = name();
                    int kind = u8();
                    if (kind != 2) {
                        throw new IllegalArgumentException("only memory imports expected, got kind " + kind);
                    }
                    int flag = u8();
                    long min = u32();
                    if ((flag & 1) != 0) {
                        u32(); // the maximum (flag 3: a shared memory, which must have one)
                    }
                    imports.add(new Import(module, field, kind, flag, min));
                });
                case 3 -> repeat(() -> functions.add(u32()));
                case 7 -> repeat(() -> exports.add(new Export(name(), u8(), u32())));
                case 10 -> repeat(() -> {
                    int bodySize = (int) u32();
                    byte[] body = new byte[bodySize];
                    System.arraycopy(bytes, pos, body, 0, bodySize);
                    bodies.add(body);
                    pos += bodySize;
                });
                default -> throw new IllegalArgumentException("unexpected section " + id);
            }
            if (pos != end) {
                throw new IllegalArgumentException("section " + id + " declared " + size + " bytes, contents took "
                        + (pos - (end - size)));
            }
        }
        return new Parsed(ids, types, imports, functions, exports, bodies, customs);
    }

    /** A function type as text, e.g. "(i32,i32,i32)->()". */
    private String funcType() {
        if (u8() != 0x60) {
            throw new IllegalArgumentException("not a function type");
        }
        StringBuilder text = new StringBuilder("(");
        long params = u32();
        for (long i = 0; i < params; i++) {
            text.append(i == 0 ? "" : ",").append(valType(u8()));
        }
        text.append(")->(");
        long results = u32();
        for (long i = 0; i < results; i++) {
            text.append(i == 0 ? "" : ",").append(valType(u8()));
        }
        return text.append(")").toString();
    }

    private static String valType(int code) {
        return switch (code) {
            case 0x7F -> "i32";
            case 0x7E -> "i64";
            case 0x7D -> "f32";
            case 0x7C -> "f64";
            case 0x7B -> "v128";
            default -> throw new IllegalArgumentException("bad value type " + code);
        };
    }

    private void repeat(Runnable item) {
        long count = u32();
        for (long i = 0; i < count; i++) {
            item.run();
        }
    }

    private String name() {
        int length = (int) u32();
        String text = new String(bytes, pos, length, StandardCharsets.UTF_8);
        pos += length;
        return text;
    }

    private int u8() {
        return bytes[pos++] & 0xFF;
    }

    private long u32() {
        long result = 0;
        int shift = 0;
        int b;
        do {
            b = u8();
            result |= (long) (b & 0x7F) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return result;
    }
}
