package dev.jitzoo.zoo.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.WasmFeatures;
import dev.jitzoo.proto.kernel.v1.WebGpuAdapter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Device similarity and the ranking of similar kinds' kernels, against hand-computed values. */
class SimilarKernelsTest {

    private static final DeviceProfile X86 = wasm(true, 16, 32 * 1024);
    private static final DeviceProfile X86_NO_RELAXED = wasm(false, 16, 32 * 1024);
    private static final DeviceProfile X86_BIG_L1 = wasm(true, 0, 96 * 1024); // 0 registers: 16 assumed
    private static final DeviceProfile ARM = wasm(true, 32, 64 * 1024);

    @Test
    void wasmKindsAreAlikeByRegisterBudgetThenRelaxedSimdAndL1() {
        assertEquals(1.0, DeviceSimilarity.of(X86, X86, Backend.BACKEND_WASM));
        assertEquals(0.75, DeviceSimilarity.of(X86, X86_NO_RELAXED, Backend.BACKEND_WASM));
        assertEquals(0.75, DeviceSimilarity.of(X86, X86_BIG_L1, Backend.BACKEND_WASM), "96 KiB is over twice 32 KiB");
        assertEquals(0.5, DeviceSimilarity.of(X86_NO_RELAXED, X86_BIG_L1, Backend.BACKEND_WASM));
        assertEquals(0.0, DeviceSimilarity.of(X86, ARM, Backend.BACKEND_WASM), "16 and 32 registers: other tiles");
        DeviceProfile scalar = X86.toBuilder().setWasm(X86.getWasm().toBuilder().setSimd(false)).build();
        assertEquals(0.0, DeviceSimilarity.of(X86, scalar, Backend.BACKEND_WASM));
    }

    @Test
    void gpuKindsAreAlikeByVendorThenArchitectureAndSubgroups() {
        DeviceProfile ampere = gpu("nvidia", "ampere", 32);
        assertEquals(1.0, DeviceSimilarity.of(ampere, gpu("NVIDIA", "Ampere", 32), Backend.BACKEND_WGSL));
        assertEquals(0.5, DeviceSimilarity.of(ampere, gpu("nvidia", "turing", 0), Backend.BACKEND_WGSL));
        assertEquals(0.25, DeviceSimilarity.of(ampere, gpu("nvidia", "", 16), Backend.BACKEND_WGSL));
        assertEquals(0.0, DeviceSimilarity.of(ampere, gpu("intel", "ampere", 32), Backend.BACKEND_WGSL));
        assertEquals(0.0, DeviceSimilarity.of(gpu("", "", 0), gpu("", "", 0), Backend.BACKEND_WGSL),
                "no vendor: nothing known to be alike");
    }

    @Test
    void ranksKernelsBySimilarityWeightedSpeedRelativeToEachKindsBest() {
        List<SimilarKernels.KindTiming> timings = List.of(
                timing("a", X86, "k1", 1.0), timing("a", X86, "k2", 2.0),
                timing("b", X86_NO_RELAXED, "k2", 1.0), timing("b", X86_NO_RELAXED, "k1", 1.25),
                timing("c", ARM, "k3", 0.1), // unrelated: left out however fast
                timing("own", X86, "k3", 0.5)); // the asking kind's own: left out
        SimilarKernels.Result result = SimilarKernels.rank(timings, X86, Backend.BACKEND_WASM, "own", 10);
        assertEquals(2, result.similarKinds());
        // k1: 1·(1.0/1.0) + 0.75·(1.0/1.25) = 1.6; k2: 1·(1.0/2.0) + 0.75·(1.0/1.0) = 1.25
        assertEquals(List.of("k1", "k2"), result.kernels().stream().map(s -> s.kernel().getKernelId()).toList());
        assertEquals(1.6, result.kernels().get(0).score(), 1e-12);
        assertEquals(1.25, result.kernels().get(1).score(), 1e-12);
        assertEquals(2, result.kernels().get(0).devices());

        assertEquals(List.of("k1"), SimilarKernels.rank(timings, X86, Backend.BACKEND_WASM, "own", 1).kernels()
                .stream().map(s -> s.kernel().getKernelId()).toList(), "cut to the limit, best kept");
        assertEquals(0, SimilarKernels.rank(List.of(), X86, Backend.BACKEND_WASM, "own", 5).kernels().size());
    }

    private static SimilarKernels.KindTiming timing(String kind, DeviceProfile device, String kernel, double ms) {
        return new SimilarKernels.KindTiming(kind, device, KernelRef.newBuilder().setKernelId(kernel).build(), ms, 1);
    }

    private static DeviceProfile wasm(boolean relaxed, int registers, int l1) {
        return DeviceProfile.newBuilder().setWasm(WasmFeatures.newBuilder().setSimd(true).setRelaxedSimd(relaxed)
                .setSimdRegisters(registers).setL1DataBytes(l1)).build();
    }

    private static DeviceProfile gpu(String vendor, String architecture, int subgroup) {
        return DeviceProfile.newBuilder().setWebgpu(WebGpuAdapter.newBuilder().setVendor(vendor)
                .setArchitecture(architecture).setSubgroupMinSize(subgroup).setSubgroupMaxSize(subgroup)).build();
    }
}
