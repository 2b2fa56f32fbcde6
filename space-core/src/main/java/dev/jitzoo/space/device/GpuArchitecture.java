package dev.jitzoo.space.device;

import java.util.List;
import java.util.Locale;

/**
 * What a browser cannot tell about a GPU but Table 1 needs, per core (an NVIDIA streaming
 * multiprocessor, an Intel subslice, an ARM shader core): from vendors' documentation, rounded.
 *
 * @param name              architecture as GPUAdapterInfo names it ("ampere", "gen-9", "valhall")
 * @param vendor            GPUAdapterInfo.vendor
 * @param warpWidth         threads that execute together (warp, SIMD width, wave)
 * @param registersPerCore  32-bit registers of one core (TOTAL_REGS_PER_CORE)
 * @param warpsPerCore      warps resident on one core at most (TOTAL_WARPS_PER_CORE)
 * @param l1BytesPerCore    L1 / shared memory of one core, bytes (L1_SIZE_PER_CORE)
 * @param registersPerThread most 32-bit registers one thread may hold
 */
public record GpuArchitecture(String name, String vendor, int warpWidth, int registersPerCore, int warpsPerCore,
                              int l1BytesPerCore, int registersPerThread) {

    /** For architectures not in the table: small enough that a kernel fitted to it runs anywhere. */
    public static final GpuArchitecture UNKNOWN = new GpuArchitecture("unknown", "unknown", 32, 32768, 32, 16384, 64);

    private static final List<GpuArchitecture> KNOWN = List.of(
            new GpuArchitecture("turing", "nvidia", 32, 65536, 32, 96 * 1024, 255),
            new GpuArchitecture("ampere", "nvidia", 32, 65536, 48, 128 * 1024, 255),
            new GpuArchitecture("lovelace", "nvidia", 32, 65536, 48, 128 * 1024, 255),
            new GpuArchitecture("hopper", "nvidia", 32, 65536, 64, 256 * 1024, 255),
            new GpuArchitecture("gen-9", "intel", 16, 57344, 56, 64 * 1024, 64),
            new GpuArchitecture("gen-12lp", "intel", 16, 114688, 112, 64 * 1024, 64),
            new GpuArchitecture("bifrost", "arm", 8, 24576, 48, 16 * 1024, 64),
            new GpuArchitecture("valhall", "arm", 16, 65536, 64, 16 * 1024, 64),
            new GpuArchitecture("rdna-2", "amd", 32, 131072, 32, 128 * 1024, 255),
            new GpuArchitecture("rdna-3", "amd", 32, 196608, 32, 128 * 1024, 255));

    /** The table's entry for what the adapter reports, else {@link #UNKNOWN}. Case and spacing do not matter. */
    public static GpuArchitecture lookup(String vendor, String architecture) {
        String v = normalize(vendor), a = normalize(architecture);
        return KNOWN.stream().filter(g -> g.name.equals(a) && (v.isEmpty() || g.vendor.equals(v)))
                .findFirst().orElse(UNKNOWN);
    }

    public static List<GpuArchitecture> known() {
        return KNOWN;
    }

    private static String normalize(String s) {
        return s == null ? "" : s.trim().toLowerCase(Locale.ROOT).replace(' ', '-');
    }
}
