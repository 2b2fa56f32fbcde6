package dev.jitzoo.space.device;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Device profiles: the bundled ones by name, others from JSON (the proto's JSON form of
 * {@code jitzoo.kernel.v1.DeviceProfile}, exactly what the SDK's probe sends), and the checks every
 * profile passes before a space is built for it. Unknown fields and absurd values are refused
 * with the field's name; a value left 0 means unknown and takes a safe default.
 */
public final class DeviceProfiles {

    /** Profiles shipped in {@code resources/devices/}. */
    public static final List<String> BUNDLED = List.of(
            "this-machine-wasm", "nvidia-ampere-webgpu", "intel-gen9-webgpu", "arm-mali-webgpu");

    /** Defaults for what a profile leaves unknown. */
    public static final int DEFAULT_L1_BYTES = 32 * 1024;
    public static final int DEFAULT_SIMD_REGISTERS = 16;
    public static final WebGpuLimits WEBGPU_DEFAULTS = WebGpuLimits.newBuilder()
            .setMaxComputeInvocationsPerWorkgroup(256).setMaxComputeWorkgroupStorageSize(16384)
            .setMaxComputeWorkgroupSizeX(256).setMaxComputeWorkgroupSizeY(256)
            .setMaxComputeWorkgroupsPerDimension(65535).setMaxStorageBufferBindingSize(134217728L).build();

    private DeviceProfiles() {
    }

    /** A bundled profile by name, or a JSON file by path. */
    public static DeviceProfile load(String nameOrFile) {
        if (BUNDLED.contains(nameOrFile)) {
            return bundled(nameOrFile);
        }
        Path file = Path.of(nameOrFile);
        if (!Files.isRegularFile(file)) {
            throw new InvalidDeviceException("--device must be a bundled profile (" + String.join(", ", BUNDLED)
                    + ") or a JSON file; '" + nameOrFile + "' is neither");
        }
        try {
            return parse(Files.readString(file), file.toString());
        } catch (IOException e) {
            throw new InvalidDeviceException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    public static DeviceProfile bundled(String name) {
        try (InputStream in = DeviceProfiles.class.getResourceAsStream("/devices/" + name + ".json")) {
            if (in == null) {
                throw new InvalidDeviceException("no bundled device profile '" + name + "'; bundled: " + String.join(", ", BUNDLED));
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
        } catch (IOException e) {
            throw new IllegalStateException("bundled profile " + name + " is unreadable", e);
        }
    }

    /** Parses and checks a profile; {@code source} names it in errors. */
    public static DeviceProfile parse(String json, String source) {
        DeviceProfile.Builder builder = DeviceProfile.newBuilder();
        try {
            JsonFormat.parser().merge(json, builder);
        } catch (InvalidProtocolBufferException e) {
            throw new InvalidDeviceException(source + ": not a device profile: " + e.getMessage(), e);
        }
        return check(builder.build());
    }

    /** Returns the profile when every value it states is plausible; throws {@link InvalidDeviceException} naming the first that is not. */
    public static DeviceProfile check(DeviceProfile d) {
        within("logical_cores", d.getLogicalCores(), 1, 1024);
        if (d.hasWasm()) {
            zeroOrWithin("wasm.l1_data_bytes", d.getWasm().getL1DataBytes(), 1024, 4L << 20);
            zeroOrWithin("wasm.simd_registers", d.getWasm().getSimdRegisters(), 8, 64);
            if (d.getWasm().getRelaxedSimd() && !d.getWasm().getSimd()) {
                throw new InvalidDeviceException("wasm.relaxed_simd needs wasm.simd");
            }
            zeroOrWithin("wasm.threads_used", d.getWasm().getThreadsUsed(), 1, 256);
            if (d.getWasm().getThreadsUsed() > 1 && !d.getWasm().getThreads()) {
                throw new InvalidDeviceException("wasm.threads_used " + d.getWasm().getThreadsUsed() + " needs wasm.threads");
            }
        }
        if (d.hasWebgpu()) {
            WebGpuLimits l = d.getWebgpu().getLimits();
            zeroOrWithin("webgpu.limits.max_compute_invocations_per_workgroup", l.getMaxComputeInvocationsPerWorkgroup(), 1, 4096);
            zeroOrWithin("webgpu.limits.max_compute_workgroup_storage_size", l.getMaxComputeWorkgroupStorageSize(), 1024, 1L << 20);
            zeroOrWithin("webgpu.limits.max_compute_workgroup_size_x", l.getMaxComputeWorkgroupSizeX(), 1, 4096);
            zeroOrWithin("webgpu.limits.max_compute_workgroup_size_y", l.getMaxComputeWorkgroupSizeY(), 1, 4096);
            zeroOrWithin("webgpu.limits.max_compute_workgroups_per_dimension", l.getMaxComputeWorkgroupsPerDimension(), 1, 1L << 31);
            long binding = l.getMaxStorageBufferBindingSize();
            if (binding != 0 && (binding < 1024 || binding > (1L << 40))) {
                throw new InvalidDeviceException("webgpu.limits.max_storage_buffer_binding_size must be 1 KiB to 1 TiB, got "
                        + Long.toUnsignedString(binding));
            }
            int min = d.getWebgpu().getSubgroupMinSize(), max = d.getWebgpu().getSubgroupMaxSize();
            for (int size : new int[] {min, max}) {
                if (size != 0 && (Integer.bitCount(size) != 1 || size > 128)) {
                    throw new InvalidDeviceException("webgpu subgroup sizes must be 0 (not exposed) or a power of two up to 128, got "
                            + Integer.toUnsignedString(size));
                }
            }
            if (min != 0 && max != 0 && min > max) {
                throw new InvalidDeviceException("webgpu.subgroup_min_size " + min + " exceeds subgroup_max_size " + max);
            }
        }
        return d;
    }

    /** Threads the device's Wasm kernels run on (at least 1). */
    public static int wasmThreads(DeviceProfile d) {
        return Math.max(1, d.getWasm().getThreadsUsed());
    }

    /** The backends a profile can be given a space for: Wasm when it has wasm features, WGSL when it has a WebGPU adapter. */
    public static List<Backend> backends(DeviceProfile d) {
        List<Backend> backends = new ArrayList<>();
        if (d.hasWasm()) {
            backends.add(Backend.BACKEND_WASM);
        }
        if (d.hasWebgpu()) {
            backends.add(Backend.BACKEND_WGSL);
        }
        return backends;
    }

    /** L1 data bytes per core the Wasm space assumes: the profile's, else {@link #DEFAULT_L1_BYTES}. */
    public static int l1Bytes(DeviceProfile d) {
        int l1 = d.getWasm().getL1DataBytes();
        return l1 == 0 ? DEFAULT_L1_BYTES : l1;
    }

    /** SIMD registers the Wasm space assumes: the profile's, else {@link #DEFAULT_SIMD_REGISTERS}. */
    public static int simdRegisters(DeviceProfile d) {
        int r = d.getWasm().getSimdRegisters();
        return r == 0 ? DEFAULT_SIMD_REGISTERS : r;
    }

    /** The adapter's limits, each field left 0 taking WebGPU's default. */
    public static WebGpuLimits limits(DeviceProfile d) {
        WebGpuLimits l = d.getWebgpu().getLimits(), def = WEBGPU_DEFAULTS;
        return WebGpuLimits.newBuilder()
                .setMaxComputeInvocationsPerWorkgroup(or(l.getMaxComputeInvocationsPerWorkgroup(), def.getMaxComputeInvocationsPerWorkgroup()))
                .setMaxComputeWorkgroupStorageSize(or(l.getMaxComputeWorkgroupStorageSize(), def.getMaxComputeWorkgroupStorageSize()))
                .setMaxComputeWorkgroupSizeX(or(l.getMaxComputeWorkgroupSizeX(), def.getMaxComputeWorkgroupSizeX()))
                .setMaxComputeWorkgroupSizeY(or(l.getMaxComputeWorkgroupSizeY(), def.getMaxComputeWorkgroupSizeY()))
                .setMaxComputeWorkgroupsPerDimension(or(l.getMaxComputeWorkgroupsPerDimension(), def.getMaxComputeWorkgroupsPerDimension()))
                .setMaxStorageBufferBindingSize(l.getMaxStorageBufferBindingSize() == 0
                        ? def.getMaxStorageBufferBindingSize() : l.getMaxStorageBufferBindingSize())
                .build();
    }

    private static int or(int value, int fallback) {
        return value == 0 ? fallback : value;
    }

    private static void within(String field, int value, long min, long max) {
        long v = Integer.toUnsignedLong(value);
        if (v < min || v > max) {
            throw new InvalidDeviceException(field + " must be " + min + " to " + max + ", got " + v);
        }
    }

    private static void zeroOrWithin(String field, int value, long min, long max) {
        if (value != 0) {
            within(field, value, min, max);
        }
    }
}
