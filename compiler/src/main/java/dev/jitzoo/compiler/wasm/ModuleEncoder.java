package dev.jitzoo.compiler.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes a module: an imported memory, functions (each optionally exported) and custom sections,
 * in the section order the binary format requires. Kernels use one memory import, one exported
 * function and one custom section; nothing here assumes that.
 */
public final class ModuleEncoder {

    private static final byte[] HEADER = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
    private static final int IMPORT_KIND_MEMORY = 0x02;
    private static final int EXPORT_KIND_FUNC = 0x00;
    private static final int LIMITS_MIN_ONLY = 0x00;
    /** The threads proposal's limits flag for a shared memory, which must have a maximum. */
    private static final int LIMITS_SHARED_MIN_MAX = 0x03;
    /** The most 64 KiB pages a Wasm32 memory can have (4 GiB). */
    public static final int MAX_PAGES = 65536;

    private record MemoryImport(String module, String name, int minPages, boolean shared) {
    }

    private record Entry(Function body, String exportName, boolean teeSetThenGet) {
    }

    private record Custom(String name, byte[] payload) {
    }

    private final List<MemoryImport> memories = new ArrayList<>();
    private final List<Entry> functions = new ArrayList<>();
    private final List<Custom> customs = new ArrayList<>();

    /** Imports a linear memory with a minimum size in 64 KiB pages and no maximum. */
    public ModuleEncoder importMemory(String module, String name, int minPages) {
        return importMemory(module, name, minPages, false);
    }

    /**
     * Imports a linear memory with a minimum size in 64 KiB pages; {@code shared} makes it a shared
     * memory (threads proposal) of at most {@link #MAX_PAGES}, so that any shared memory the host
     * made links, whatever its own maximum.
     */
    public ModuleEncoder importMemory(String module, String name, int minPages, boolean shared) {
        if (!memories.isEmpty()) {
            throw new IllegalStateException("Wasm 1.0 allows one memory");
        }
        memories.add(new MemoryImport(module, name, minPages, shared));
        return this;
    }

    /** Adds a function written as built; a non-null {@code exportName} exports it. */
    public ModuleEncoder function(Function body, String exportName) {
        return function(body, exportName, false);
    }

    /**
     * Adds a function; a non-null {@code exportName} exports it. {@code teeSetThenGet} writes each
     * {@code local.set x; local.get x} as {@code local.tee x} (see {@link BodyEncoder}).
     */
    public ModuleEncoder function(Function body, String exportName, boolean teeSetThenGet) {
        functions.add(new Entry(body, exportName, teeSetThenGet));
        return this;
    }

    public ModuleEncoder customSection(String name, byte[] payload) {
        customs.add(new Custom(name, payload.clone()));
        return this;
    }

    /** The module's bytes; throws {@link KernelTooLargeException} past {@code sizeLimit} bytes. */
    public byte[] encode(int sizeLimit) {
        ByteWriter out = new ByteWriter().bytes(HEADER);

        List<FuncType> types = new ArrayList<>();
        for (Entry function : functions) {
            if (!types.contains(function.body.type())) {
                types.add(function.body.type());
            }
        }
        ByteWriter typeSection = new ByteWriter().varU32(types.size());
        types.forEach(t -> t.encode(typeSection));
        section(out, SectionId.TYPE, typeSection);

        if (!memories.isEmpty()) {
            ByteWriter imports = new ByteWriter().varU32(memories.size());
            for (MemoryImport memory : memories) {
                imports.name(memory.module).name(memory.name).u8(IMPORT_KIND_MEMORY);
                if (memory.shared) {
                    imports.u8(LIMITS_SHARED_MIN_MAX).varU32(memory.minPages).varU32(MAX_PAGES);
                } else {
                    imports.u8(LIMITS_MIN_ONLY).varU32(memory.minPages);
                }
            }
            section(out, SectionId.IMPORT, imports);
        }

        ByteWriter functionSection = new ByteWriter().varU32(functions.size());
        functions.forEach(fn -> functionSection.varU32(types.indexOf(fn.body.type())));
        section(out, SectionId.FUNCTION, functionSection);

        List<Integer> exported = new ArrayList<>();
        for (int i = 0; i < functions.size(); i++) {
            if (functions.get(i).exportName != null) {
                exported.add(i);
            }
        }
        ByteWriter exports = new ByteWriter().varU32(exported.size());
        // function indices count imported functions first; this module imports none
        exported.forEach(i -> exports.name(functions.get(i).exportName).u8(EXPORT_KIND_FUNC).varU32(i));
        section(out, SectionId.EXPORT, exports);

        ByteWriter code = new ByteWriter().varU32(functions.size());
        functions.forEach(fn -> code.sized(fn.body.encode(fn.teeSetThenGet)));
        section(out, SectionId.CODE, code);

        for (Custom custom : customs) {
            section(out, SectionId.CUSTOM, new ByteWriter().name(custom.name).bytes(custom.payload));
        }

        if (out.size() > sizeLimit) {
            throw new KernelTooLargeException(out.size(), sizeLimit);
        }
        return out.toByteArray();
    }

    private static void section(ByteWriter out, SectionId id, ByteWriter body) {
        out.u8(id.id).sized(body);
    }
}
