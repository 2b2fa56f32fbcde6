package dev.jitzoo.compiler.wasm;

import java.util.List;

/** A function signature. */
public record FuncType(List<ValType> params, List<ValType> results) {

    public FuncType {
        params = List.copyOf(params);
        results = List.copyOf(results);
    }

    /** {@code count} i32 parameters and no results: the shape of every kernel entry (byte offsets in). */
    public static FuncType i32Params(int count) {
        return new FuncType(java.util.Collections.nCopies(count, ValType.I32), List.of());
    }

    void encode(ByteWriter out) {
        out.u8(0x60).varU32(params.size());
        params.forEach(p -> out.u8(p.code));
        out.varU32(results.size());
        results.forEach(r -> out.u8(r.code));
    }
}
