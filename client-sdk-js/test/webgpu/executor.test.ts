import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { Backend, KernelArtifactSchema, OpKind, type OpSpec } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { MemoryKernelStore } from "../../src/model/kernel-store.js";
import { loadModel } from "../../src/load.js";
import { ModelError } from "../../src/graph/onnx.js";
import { probeDevice } from "../../src/probe.js";
import { adapterMessage, gpuFingerprintOf, probeWebGpu } from "../../src/webgpu/adapter.js";
import { GpuContext, GpuError } from "../../src/webgpu/context.js";
import { hostProgram, wgslKernelOf } from "../../src/webgpu/kernels.js";
import { GpuTimer } from "../../src/webgpu/timer.js";
import { bindGroupOf } from "../../src/webgpu/tuner.js";
import { modelBytes, modelsMissing } from "../support/models.js";
import { noWebGpu, useSwiftShader } from "../support/webgpu.js";

const matmul = (m: number, k: number, n: number): OpSpec => ({ kind: OpKind.MATMUL, shape: [m, k, n] }) as OpSpec;
const artifact = (code: { case: "wgsl"; value: string } | { case: "wasm"; value: Uint8Array }, meta: object) =>
  create(KernelArtifactSchema, { ref: { kernelId: "k1", backend: Backend.WGSL }, code, metadataJson: JSON.stringify(meta) });
const META = { op: "matmul", shape: [2, 3, 4], entry: "main", operands: ["A", "B", "C"], dispatch: [1, 1, 1] };

describe("WGSL kernels as the SDK takes them", () => {
  it("reads a WGSL artifact's operands, entry and grid", () => {
    const k = wgslKernelOf(artifact({ case: "wgsl", value: "// code" }, META), matmul(2, 3, 4));
    expect(k).toMatchObject({ id: "k1", entry: "main", operands: ["A", "B", "C"], dispatch: [1, 1, 1], source: "// code" });
  });

  it("refuses what it cannot run, saying why", () => {
    const op = matmul(2, 3, 4);
    expect(() => wgslKernelOf(artifact({ case: "wasm", value: new Uint8Array(8) }, META), op)).toThrow(/not a WGSL artifact/);
    expect(() => wgslKernelOf(artifact({ case: "wgsl", value: "" }, META), matmul(2, 3, 5))).toThrow(/offered for matmul \[2,3,5\]/);
    expect(() => wgslKernelOf(create(KernelArtifactSchema, { code: { case: "wgsl", value: "" }, metadataJson: "{" }), op)).toThrow(/not JSON/);
    expect(() => wgslKernelOf(artifact({ case: "wgsl", value: "" }, { ...META, dispatch: [70000, 1, 1] }), op)).toThrow(/dispatch of three counts/);
    expect(() => wgslKernelOf(artifact({ case: "wgsl", value: "" }, { ...META, operands: ["A", "B"] }), op)).toThrow(/operands with C/);
  });
});

describe("kept WGSL kernels", () => {
  it("are kept and listed per device kind, a bad entry left out", async () => {
    const store = new MemoryKernelStore();
    const entry = { format: 1 as const, fingerprint: "gpu", op: "matmul|2x3x4", kernelId: "k1", wgsl: "// code", metadataJson: "{}", ms: 1, savedAt: 1 };
    await store.put(entry);
    await store.put({ ...entry, op: "softmax|2x3", wgsl: "" }); // empty source: not a kernel
    await store.put({ ...entry, fingerprint: "other", op: "add|4" });
    expect(await store.get("gpu", "matmul|2x3x4")).toEqual(entry);
    expect((await store.list("gpu")).map((e) => e.op)).toEqual(["matmul|2x3x4"]);
  });
});

describe.skipIf(noWebGpu)("the WebGPU executor on Dawn over SwiftShader", () => {
  it("probes the adapter into the Hello's profile and a device kind of its own", async () => {
    const profile = (await probeWebGpu(useSwiftShader()))!;
    expect(profile).toMatchObject({ vendor: "google", architecture: "swiftshader", software: true });
    expect(profile.features).toContain("timestamp-query");
    expect(profile.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(256);
    const device = await probeDevice(undefined, undefined, profile);
    expect(device.webgpu).toMatchObject({ vendor: "google", architecture: "swiftshader", features: profile.features });
    expect(device.webgpu!.limits!.maxStorageBufferBindingSize).toBe(BigInt(profile.limits.maxStorageBufferBindingSize));
    expect(device.fingerprint).toBe(await gpuFingerprintOf((await probeDevice()).userAgent, profile));
    expect(device.fingerprint).not.toBe((await probeDevice()).fingerprint); // the GPU's kind, not the CPU's
    expect(adapterMessage(profile).features).toEqual(profile.features);
  });

  it("recovers a lost device: a new one, every pipeline built again from its source, listeners told", async () => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      const program = hostProgram({ name: "t", opType: "Transpose", inputs: ["A"], outputs: ["C"], attrs: {} } as never, [[4, 8]], [8, 4])!;
      const before = await gpu.pipelines.prepare(program.id, program.source);
      let restored = 0;
      gpu.onRestore(() => { restored++; });
      const lost = gpu.device;
      lost.destroy();
      expect(await gpu.recovered(lost)).toBe(true);
      expect(gpu.device).not.toBe(lost);
      expect(restored).toBe(1);
      expect(gpu.losses).toHaveLength(1);
      const after = gpu.pipelines.get(program.id)!;
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      // the rebuilt pipeline works on the new device
      const buffers = Object.fromEntries(["A", "C"].map((n) => [n, gpu.device.createBuffer({ size: 128, usage: GPUBufferUsage.STORAGE })]));
      expect(() => bindGroupOf(gpu.device, after, program, buffers)).not.toThrow();
      expect(await gpu.recovered(gpu.device)).toBe(false); // a live device is not lost
    } finally {
      gpu.close();
    }
  });

  it("refuses WGSL that does not compile, with the compiler's message", async () => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      await expect(gpu.pipelines.prepare("bad", "fn main( {")).rejects.toThrow(GpuError);
      await expect(gpu.pipelines.prepare("bad", "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }")).rejects.toThrow(/does not compile/);
      expect(gpu.pipelines.has("bad")).toBe(false);
    } finally {
      gpu.close();
    }
  });

  it("times two dispatches side by side with timestamps, its quantum measured, a bigger grid slower", async () => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      const timer = new GpuTimer(gpu);
      expect(timer.mode).toBe("timestamp-query");
      const dispatch = async (n: number) => {
        const program = hostProgram({ name: "a", opType: "Add", inputs: ["A", "B"], outputs: ["C"], attrs: {} } as never, [[n], [1]], [n])!;
        const pipeline = await gpu.pipelines.prepare(program.id, program.source);
        const usage = GPUBufferUsage.STORAGE;
        const buffers = { A: gpu.device.createBuffer({ size: n * 4, usage }), B: gpu.device.createBuffer({ size: 16, usage }), C: gpu.device.createBuffer({ size: n * 4, usage }) };
        return { pipeline, bindGroup: bindGroupOf(gpu.device, pipeline, program, buffers), grid: program.dispatch };
      };
      const [small, large] = await timer.pair(await dispatch(1 << 10), await dispatch(1 << 20), 0.01);
      expect(timer.quantumNs).toBeGreaterThan(0);
      expect(small).toBeGreaterThan(0);
      expect(large).toBeGreaterThan(small);
    } finally {
      gpu.close();
    }
  });

  it("times by submit-to-completion where the adapter has no timestamp queries", async () => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      gpu.timestamps = false; // as on an adapter without `timestamp-query`
      const timer = new GpuTimer(gpu);
      expect(timer.mode).toBe("submit");
      const program = hostProgram({ name: "t", opType: "Transpose", inputs: ["A"], outputs: ["C"], attrs: {} } as never, [[256, 256]], [256, 256])!;
      const pipeline = await gpu.pipelines.prepare(program.id, program.source);
      const buffers = Object.fromEntries(["A", "C"].map((n) => [n, gpu.device.createBuffer({ size: 256 * 256 * 4, usage: GPUBufferUsage.STORAGE })]));
      const d = { pipeline, bindGroup: bindGroupOf(gpu.device, pipeline, program, buffers), grid: program.dispatch };
      const [a, b] = await timer.pair(d, d, 0.05);
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(0);
      expect(timer.quantumNs).toBe(0); // no timestamps read
    } finally {
      gpu.close();
    }
  });

  it.skipIf(modelsMissing)("picks the backend: webgpu needs a gateway; auto leaves a software adapter to Wasm, and says so", async () => {
    useSwiftShader();
    const bytes = modelBytes("bert_layer.onnx");
    await expect(loadModel(bytes, { backend: "webgpu" })).rejects.toThrow(ModelError);
    await expect(loadModel(bytes, { backend: "webgpu" })).rejects.toThrow(/needs a gateway/);
    const model = await loadModel(bytes, { gateway: "ws://127.0.0.1:9/v1/session", store: null, reconnect: { attempts: 0 }, client: { connectTimeoutMs: 200 } });
    expect(model.stats().backend).toBe("wasm");
    expect(model.stats().notes.join(" ")).toMatch(/adapter is a software one/);
  });
});
