package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import java.util.Locale;

/**
 * How alike two device kinds are for one backend, from what their browsers reported: 0 (a kernel
 * tuned on one says nothing about the other) to 1 (the same hardware as far as a page can tell).
 * Kinds at {@link #SIMILAR} or above share their best kernels (the space's exploitation set).
 *
 * <p>Wasm: SIMD or not, and the SIMD register budget (16 on x86-64, 32 on arm64), decide a
 * kernel's register tile; kinds differing in either are unrelated. Relaxed SIMD on one side only,
 * or L1 estimates more than twice apart, cost a quarter each. WebGPU: kinds of different vendors
 * are unrelated; of one vendor, the same architecture is 1 and another (or an unreported) one
 * 0.5; different subgroup sizes, both reported, cost a quarter.
 */
public final class DeviceSimilarity {

    /** The least similarity at which one kind's best kernels are offered to another. */
    public static final double SIMILAR = 0.5;
    /** What the space assumes when a probe reports no register budget or L1 size. */
    static final int DEFAULT_SIMD_REGISTERS = 16;

    private DeviceSimilarity() {
    }

    public static double of(DeviceProfile a, DeviceProfile b, Backend backend) {
        return switch (backend) {
            case BACKEND_WASM -> wasm(a, b);
            case BACKEND_WGSL -> webgpu(a, b);
            default -> 0;
        };
    }

    private static double wasm(DeviceProfile a, DeviceProfile b) {
        var x = a.getWasm();
        var y = b.getWasm();
        if (x.getSimd() != y.getSimd() || registers(x.getSimdRegisters()) != registers(y.getSimdRegisters())) {
            return 0;
        }
        double similarity = 1;
        if (x.getRelaxedSimd() != y.getRelaxedSimd()) {
            similarity -= 0.25;
        }
        long l1x = x.getL1DataBytes(), l1y = y.getL1DataBytes();
        if (l1x > 0 && l1y > 0 && Math.max(l1x, l1y) > 2 * Math.min(l1x, l1y)) {
            similarity -= 0.25;
        }
        return similarity;
    }

    private static double webgpu(DeviceProfile a, DeviceProfile b) {
        var x = a.getWebgpu();
        var y = b.getWebgpu();
        String vendor = normalized(x.getVendor());
        if (vendor.isEmpty() || !vendor.equals(normalized(y.getVendor()))) {
            return 0;
        }
        String architecture = normalized(x.getArchitecture());
        double similarity = !architecture.isEmpty() && architecture.equals(normalized(y.getArchitecture())) ? 1 : 0.5;
        if (x.getSubgroupMaxSize() > 0 && y.getSubgroupMaxSize() > 0 && x.getSubgroupMaxSize() != y.getSubgroupMaxSize()) {
            similarity -= 0.25;
        }
        return similarity;
    }

    private static int registers(int reported) {
        return reported == 0 ? DEFAULT_SIMD_REGISTERS : reported;
    }

    private static String normalized(String s) {
        return s.trim().toLowerCase(Locale.ROOT);
    }
}
