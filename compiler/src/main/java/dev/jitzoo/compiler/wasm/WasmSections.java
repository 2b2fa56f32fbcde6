package dev.jitzoo.compiler.wasm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Reads a module's section list back: how tools and services find a kernel's metadata. */
public final class WasmSections {

    /** One section; {@code name} is the custom section's name, or the section id's name. */
    public record Section(int id, String name, byte[] payload) {
    }

    private WasmSections() {
    }

    /** The sections in file order; IllegalArgumentException when the bytes are not a well-framed module. */
    public static List<Section> read(byte[] module) {
        if (module.length < 8 || module[0] != 0 || module[1] != 'a' || module[2] != 's' || module[3] != 'm') {
            throw new IllegalArgumentException("not a Wasm module");
        }
        List<Section> sections = new ArrayList<>();
        int[] pos = {8};
        while (pos[0] < module.length) {
            int id = module[pos[0]++] & 0xFF;
            long size = readU32(module, pos);
            long end = pos[0] + size;
            if (end > module.length) {
                throw new IllegalArgumentException("section " + id + " runs past the end of the module");
            }
            String name;
            if (id == SectionId.CUSTOM.id) {
                int length = (int) readU32(module, pos);
                if (pos[0] + length > end) {
                    throw new IllegalArgumentException("custom section name runs past its section");
                }
                name = new String(module, pos[0], length, StandardCharsets.UTF_8);
                pos[0] += length;
            } else {
                SectionId known = SectionId.of(id);
                name = known != null ? known.name() : "section-" + id;
            }
            sections.add(new Section(id, name, Arrays.copyOfRange(module, pos[0], (int) end)));
            pos[0] = (int) end;
        }
        return sections;
    }

    /** Section names in order (custom sections by their own name): for tests and tools. */
    public static List<String> names(byte[] module) {
        return read(module).stream().map(Section::name).toList();
    }

    /** The UTF-8 text of the first custom section called {@code name}, or null when absent. */
    public static String customSection(byte[] module, String name) {
        return read(module).stream().filter(s -> s.id() == SectionId.CUSTOM.id && s.name().equals(name)).findFirst()
                .map(s -> new String(s.payload(), StandardCharsets.UTF_8)).orElse(null);
    }

    private static long readU32(byte[] bytes, int[] pos) {
        long result = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (pos[0] >= bytes.length) {
                throw new IllegalArgumentException("truncated LEB128");
            }
            int b = bytes[pos[0]++] & 0xFF;
            result |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return result;
            }
        }
        throw new IllegalArgumentException("LEB128 longer than a u32");
    }
}
