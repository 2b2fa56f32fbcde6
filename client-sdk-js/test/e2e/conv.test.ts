// Convolutions through the private stack: a 2-D convnet (3x3 with ReLU, depthwise stride 2, grouped
// 1x1 with a residual) and a 1-D one (dilated, grouped, SiLU), each conv op on a kernel the suite
// generated (Wasm in Node on one and two threads; WGSL on Dawn over SwiftShader), the outputs
// compared with onnxruntime-web's on the same file and input.
import { randomUUID } from "node:crypto";
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import { loadModel } from "../../src/load.js";
import { runUntilServed } from "../../src/model/drive.js";
import { seededFloats } from "../../src/reference.js";
import { maxError, ortOutputs } from "../support/models.js";
import { CONV_NET_1D, CONV_NET_2D } from "../support/onnx.js";
import { noWebGpu, useSwiftShader } from "../support/webgpu.js";
import { GATEWAY } from "./support.js";

const NETS = [["2-D", CONV_NET_2D, [1, 4, 13, 14]], ["1-D", CONV_NET_1D, [2, 6, 30]]] as const;

async function runOn(bytes: Uint8Array, shape: readonly number[], options: Parameters<typeof loadModel>[1]) {
  const x = seededFloats(shape.reduce((a: number, b: number) => a * b, 1), 7);
  const model = await loadModel(bytes, { gateway: GATEWAY, tuning: { budget: 0 }, worker: false, store: null, ...options });
  // its first runs are on the SDK's kernels (tiny convs on the reference): the suite's once served
  const { outputs: ours } = await runUntilServed(model, { x: new ort.Tensor("float32", x, [...shape]) });
  const stats = model.stats();
  await model.close();
  const theirs = await ortOutputs(bytes, { x: new ort.Tensor("float32", x, [...shape]) });
  return { stats, error: maxError(ours.y.data as Float32Array, theirs.y) };
}

describe.skipIf(!GATEWAY)("convolutions on the suite's kernels", () => {
  it.each(NETS.flatMap(([name, bytes, shape]) => [1, 2].map((threads) => [name, threads, bytes, shape] as const)))(
    "a %s convnet on Wasm kernels, %i thread(s), matches onnxruntime-web", async (_name, threads, bytes, shape) => {
      const { stats, error } = await runOn(bytes, shape, { fingerprint: `e2e-conv-${randomUUID()}`, threads });
      expect(stats.notes).toEqual([]);
      expect(stats.ops.filter((op) => op.key.startsWith("conv|")).length).toBeGreaterThan(0);
      expect(stats.ops.filter((op) => op.source !== "wasm").map((op) => op.key)).toEqual([]); // every op on a generated kernel
      expect(error).toBeLessThan(1e-5);
    });

  it.skipIf(noWebGpu).each(NETS)("a %s convnet on WGSL kernels (Dawn on SwiftShader) matches onnxruntime-web", async (_name, bytes, shape) => {
    useSwiftShader();
    const { stats, error } = await runOn(bytes, shape, { fingerprint: `e2e-conv-gpu-${randomUUID()}`, backend: "webgpu" });
    expect(stats.backend, stats.notes.join("; ")).toBe("webgpu");
    expect(stats.gpu!.errors).toBe(0);
    expect(stats.ops.filter((op) => op.key.startsWith("conv|")).length).toBeGreaterThan(0);
    expect(error).toBeLessThan(1e-5);
  });
});
