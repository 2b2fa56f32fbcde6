package dev.jitzoo.codegen.kernel;

/** Code the compiler emits. */
public enum Backend {
    WASM, WGSL
}
