package dev.jitzoo.compiler.kernel;

import java.nio.charset.StandardCharsets;

/**
 * A compiled kernel: its id, the artifact's bytes (a Wasm module, or a WGSL shader's UTF-8 source),
 * its ABI metadata (for Wasm also inside the module, in the {@code jitzoo.abi} custom section),
 * and the wall time it took to generate. {@code wasm()} names the bytes for either backend;
 * {@link #code()} and {@link #source()} read better for WGSL.
 */
public record GeneratedKernel(String kernelId, byte[] wasm, String metadataJson, long generationNanos) {

    /** The artifact's bytes, whatever the backend. */
    public byte[] code() {
        return wasm;
    }

    /** The bytes as UTF-8 text: a WGSL kernel's source. */
    public String source() {
        return new String(wasm, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "GeneratedKernel[" + kernelId + ", " + wasm.length + " bytes, " + generationNanos / 1000 + " us]";
    }
}
