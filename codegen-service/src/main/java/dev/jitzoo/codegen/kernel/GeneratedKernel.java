package dev.jitzoo.codegen.kernel;

/** A compiled kernel: its id, the module's bytes, its ABI metadata, and what it cost to make. */
public record GeneratedKernel(String kernelId, byte[] wasm, String metadataJson, long generationNanos) {
}
