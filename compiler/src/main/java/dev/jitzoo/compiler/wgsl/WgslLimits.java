package dev.jitzoo.compiler.wgsl;

/**
 * The WebGPU device limits a WGSL kernel must fit, named as in {@code GPUSupportedLimits}.
 * A kernel made for these limits runs on every device that reports at least them.
 *
 * @param maxComputeInvocationsPerWorkgroup invocations of one workgroup (x * y * z)
 * @param maxComputeWorkgroupStorageSize    bytes of {@code var<workgroup>} memory one workgroup may use
 * @param maxComputeWorkgroupSizeX          largest workgroup size along x
 * @param maxComputeWorkgroupSizeY          largest workgroup size along y
 * @param maxComputeWorkgroupsPerDimension  largest workgroup count of one dispatch along each of x, y, z
 * @param maxStorageBufferBindingSize       largest storage buffer binding, in bytes (one per operand)
 */
public record WgslLimits(int maxComputeInvocationsPerWorkgroup, int maxComputeWorkgroupStorageSize,
                         int maxComputeWorkgroupSizeX, int maxComputeWorkgroupSizeY,
                         int maxComputeWorkgroupsPerDimension, long maxStorageBufferBindingSize) {

    /** The WebGPU specification's default limits: what every conforming adapter offers. */
    public static final WgslLimits WEBGPU_DEFAULTS = new WgslLimits(256, 16384, 256, 256, 65535, 134217728L);

    public WgslLimits {
        if (maxComputeInvocationsPerWorkgroup < 1 || maxComputeWorkgroupStorageSize < 0
                || maxComputeWorkgroupSizeX < 1 || maxComputeWorkgroupSizeY < 1
                || maxComputeWorkgroupsPerDimension < 1 || maxStorageBufferBindingSize < 4) {
            throw new IllegalArgumentException("WebGPU limits must be positive, got invocations="
                    + maxComputeInvocationsPerWorkgroup + ", storage=" + maxComputeWorkgroupStorageSize
                    + ", x=" + maxComputeWorkgroupSizeX + ", y=" + maxComputeWorkgroupSizeY
                    + ", workgroups=" + maxComputeWorkgroupsPerDimension + ", binding=" + maxStorageBufferBindingSize);
        }
    }

    /** The four workgroup limits; the dispatch and binding limits at the WebGPU defaults. */
    public WgslLimits(int maxComputeInvocationsPerWorkgroup, int maxComputeWorkgroupStorageSize,
                      int maxComputeWorkgroupSizeX, int maxComputeWorkgroupSizeY) {
        this(maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupStorageSize, maxComputeWorkgroupSizeX,
                maxComputeWorkgroupSizeY, 65535, 134217728L);
    }

    /** The limits in a kernel id when they are not the defaults: every field, comma-separated, in order. */
    public String idText() {
        return maxComputeInvocationsPerWorkgroup + "," + maxComputeWorkgroupStorageSize + "," + maxComputeWorkgroupSizeX
                + "," + maxComputeWorkgroupSizeY + "," + maxComputeWorkgroupsPerDimension + "," + maxStorageBufferBindingSize;
    }
}
