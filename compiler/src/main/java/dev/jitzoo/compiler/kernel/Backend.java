package dev.jitzoo.compiler.kernel;

/** Code the compiler emits. */
public enum Backend {
    WASM, WGSL
}
