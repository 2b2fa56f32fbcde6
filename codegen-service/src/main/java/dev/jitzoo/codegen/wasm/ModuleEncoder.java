package dev.jitzoo.codegen.wasm;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes a kernel module: one function over i32 parameters, importing {@code env.memory} and
 * exported under one name, plus one custom section of metadata.
 */
public final class ModuleEncoder {

    private static final byte[] HEADER = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
    private static final int FUNC_TYPE = 0x60;
    private static final int IMPORT_MEMORY = 0x02;
    private static final int EXPORT_FUNC = 0x00;

    private ModuleEncoder() {
    }

    public static byte[] encode(int paramCount, FunctionBuilder function, String exportName,
                                String customSectionName, String customSectionText, int sizeLimit) {
        ByteWriter out = new ByteWriter().bytes(HEADER);

        ByteWriter types = new ByteWriter().varU32(1).u8(FUNC_TYPE).varU32(paramCount);
        for (int i = 0; i < paramCount; i++) {
            types.u8(ValType.I32.code);
        }
        types.varU32(0);
        section(out, SectionId.TYPE, types);

        ByteWriter imports = new ByteWriter().varU32(1).name("env").name("memory")
                .u8(IMPORT_MEMORY).u8(0x00).varU32(1); // limits: min 1 page, no max
        section(out, SectionId.IMPORT, imports);

        section(out, SectionId.FUNCTION, new ByteWriter().varU32(1).varU32(0));
        section(out, SectionId.EXPORT, new ByteWriter().varU32(1).name(exportName).u8(EXPORT_FUNC).varU32(0));
        section(out, SectionId.CODE, new ByteWriter().varU32(1).sized(function.encode()));

        ByteWriter custom = new ByteWriter().name(customSectionName)
                .bytes(customSectionText.getBytes(StandardCharsets.UTF_8));
        section(out, SectionId.CUSTOM, custom);

        if (out.size() > sizeLimit) {
            throw new KernelTooLargeException(out.size(), sizeLimit);
        }
        return out.toByteArray();
    }

    private static void section(ByteWriter out, SectionId id, ByteWriter body) {
        out.u8(id.id).sized(body);
    }

    /** Names of the sections of a module, in order: for tests and tools. */
    public static List<String> sectionNames(byte[] module) {
        return WasmSections.read(module).stream().map(WasmSections.Section::name).toList();
    }
}
