package dev.jitzoo.space.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceProfilesTest {

    @Test
    void everyBundledProfileLoadsAndPassesTheChecks() {
        for (String name : DeviceProfiles.BUNDLED) {
            DeviceProfile d = DeviceProfiles.bundled(name);
            assertEquals(name, d.getName());
            assertTrue(d.hasWasm(), name);
        }
        DeviceProfile here = DeviceProfiles.bundled("this-machine-wasm");
        assertEquals(49152, DeviceProfiles.l1Bytes(here));
        assertEquals(16, DeviceProfiles.simdRegisters(here));
        DeviceProfile mali = DeviceProfiles.bundled("arm-mali-webgpu");
        assertEquals("valhall", GpuArchitecture.lookup(mali.getWebgpu().getVendor(), mali.getWebgpu().getArchitecture()).name());
    }

    @Test
    void unknownValuesTakeSafeDefaults() {
        DeviceProfile bare = DeviceProfiles.parse("{\"logicalCores\": 4, \"wasm\": {\"simd\": true}, "
                + "\"webgpu\": {\"vendor\": \"acme\", \"limits\": {\"maxComputeInvocationsPerWorkgroup\": 1024}}}", "test");
        assertEquals(DeviceProfiles.DEFAULT_L1_BYTES, DeviceProfiles.l1Bytes(bare));
        assertEquals(16, DeviceProfiles.simdRegisters(bare));
        assertEquals(1024, DeviceProfiles.limits(bare).getMaxComputeInvocationsPerWorkgroup());
        assertEquals(16384, DeviceProfiles.limits(bare).getMaxComputeWorkgroupStorageSize(), "left 0: the WebGPU default");
    }

    @Test
    void refusesUnknownFieldsAndAbsurdValuesNamingThem() {
        assertRefused("{\"logicalCores\": 4, \"gpuMagic\": 3}", "gpuMagic");
        assertRefused("{\"logicalCores\": 4, \"wasm\": {\"simd\": true, \"turbo\": true}}", "turbo");
        assertRefused("{\"logicalCores\": 0, \"wasm\": {\"simd\": true}}", "logical_cores must be 1 to 1024, got 0");
        assertRefused("{\"logicalCores\": 100000}", "logical_cores must be 1 to 1024");
        assertRefused("{\"logicalCores\": 4, \"wasm\": {\"l1DataBytes\": 1099511627776}}", "Out of range uint32 value: 1099511627776");
        assertRefused("{\"logicalCores\": 4, \"wasm\": {\"l1DataBytes\": 64}}", "wasm.l1_data_bytes must be 1024 to");
        assertRefused("{\"logicalCores\": 4, \"wasm\": {\"simdRegisters\": 2}}", "wasm.simd_registers must be 8 to 64");
        assertRefused("{\"logicalCores\": 4, \"wasm\": {\"relaxedSimd\": true}}", "relaxed_simd needs wasm.simd");
        assertRefused("{\"logicalCores\": 4, \"webgpu\": {\"limits\": {\"maxComputeInvocationsPerWorkgroup\": 100000}}}",
                "max_compute_invocations_per_workgroup must be 1 to 4096");
        assertRefused("{\"logicalCores\": 4, \"webgpu\": {\"limits\": {\"maxComputeWorkgroupStorageSize\": 1073741824}}}",
                "max_compute_workgroup_storage_size");
        assertRefused("{\"logicalCores\": 4, \"webgpu\": {\"subgroupMinSize\": 3}}", "power of two");
        assertRefused("{\"logicalCores\": 4, \"webgpu\": {\"subgroupMinSize\": 64, \"subgroupMaxSize\": 16}}", "exceeds");
        assertRefused("not json at all", "not a device profile");
    }

    @Test
    void loadsFilesAndNamesAndSaysWhichExist(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("phone.json");
        Files.writeString(file, "{\"name\": \"phone\", \"logicalCores\": 8, \"wasm\": {\"simd\": true, \"simdRegisters\": 32}}");
        assertEquals(32, DeviceProfiles.simdRegisters(DeviceProfiles.load(file.toString())));
        assertEquals("nvidia-ampere-webgpu", DeviceProfiles.load("nvidia-ampere-webgpu").getName());
        InvalidDeviceException missing = assertThrows(InvalidDeviceException.class, () -> DeviceProfiles.load("no-such-device"));
        assertTrue(missing.getMessage().contains("this-machine-wasm"), missing.getMessage());
    }

    private static void assertRefused(String json, String reason) {
        InvalidDeviceException e = assertThrows(InvalidDeviceException.class, () -> DeviceProfiles.parse(json, "test"));
        assertTrue(e.getMessage().contains(reason), e.getMessage());
    }
}
