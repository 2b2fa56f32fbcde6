package dev.jitzoo.codegen.kernel;

/**
 * A compiled kernel: its id, the module's bytes, its ABI metadata (also inside the module, in the
 * {@code jitzoo.abi} custom section), and the wall time it took to generate.
 */
public record GeneratedKernel(String kernelId, byte[] wasm, String metadataJson, long generationNanos) {

    @Override
    public String toString() {
        return "GeneratedKernel[" + kernelId + ", " + wasm.length + " bytes, " + generationNanos / 1000 + " us]";
    }
}
