package dev.jitzoo.codegen.wasm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Reads a module's section list back: the other half of the round trip, and how tools find metadata. */
public final class WasmSections {

    /** One section; {@code name} is the custom section's name, or the section id's name. */
    public record Section(int id, String name, byte[] payload) {
    }

    private WasmSections() {
    }

    public static List<Section> read(byte[] module) {
        if (module.length < 8 || module[0] != 0 || module[1] != 'a' || module[2] != 's' || module[3] != 'm') {
            throw new IllegalArgumentException("not a Wasm module");
        }
        List<Section> sections = new ArrayList<>();
        int[] pos = {8};
        while (pos[0] < module.length) {
            int id = module[pos[0]++] & 0xFF;
            int size = (int) readU32(module, pos);
            int end = pos[0] + size;
            String name = switch (id) {
                case 0 -> {
                    int length = (int) readU32(module, pos);
                    String n = new String(module, pos[0], length, StandardCharsets.UTF_8);
                    pos[0] += length;
                    yield n;
                }
                default -> Arrays.stream(SectionId.values()).filter(s -> s.id == id).findFirst()
                        .map(Enum::name).orElse("section-" + id);
            };
            sections.add(new Section(id, name, Arrays.copyOfRange(module, pos[0], end)));
            pos[0] = end;
        }
        return sections;
    }

    /** The UTF-8 text of a custom section, or null when absent. */
    public static String customSection(byte[] module, String name) {
        return read(module).stream().filter(s -> s.id() == 0 && s.name().equals(name)).findFirst()
                .map(s -> new String(s.payload(), StandardCharsets.UTF_8)).orElse(null);
    }

    static long readU32(byte[] bytes, int[] pos) {
        long result = 0;
        int shift = 0;
        while (true) {
            int b = bytes[pos[0]++] & 0xFF;
            result |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return result;
            }
            shift += 7;
        }
    }
}
