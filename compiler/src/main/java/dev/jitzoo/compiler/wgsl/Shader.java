package dev.jitzoo.compiler.wgsl;

/**
 * A written compute shader and how the host runs it: the workgroup size the shader declares, the
 * workgroup grid to dispatch, and the workgroup memory it uses.
 */
record Shader(String source, int[] workgroupSize, int[] dispatch, int storageBytes) {
}
