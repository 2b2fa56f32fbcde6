package dev.jitzoo.compiler.wasm;

/** Value types, with their byte values. */
public enum ValType {
    I32(0x7F), I64(0x7E), F32(0x7D), F64(0x7C), V128(0x7B);

    public final int code;

    ValType(int code) {
        this.code = code;
    }
}
