import { describe, expect, it } from "vitest";
import { runNode } from "../../src/graph/host/index.js";
import type { OnnxNode } from "../../src/graph/onnx.js";
import type { HostTensor } from "../../src/graph/tensor.js";
import { seededFloats } from "../../src/reference.js";
import { GpuContext } from "../../src/webgpu/context.js";
import { hostProgram, type GpuProgram } from "../../src/webgpu/kernels.js";
import { bindGroupOf } from "../../src/webgpu/tuner.js";
import { noWebGpu, useSwiftShader } from "../support/webgpu.js";

const node = (opType: string, inputs: number, attrs: OnnxNode["attrs"] = {}): OnnxNode =>
  ({ name: `/${opType}`, opType, inputs: ["A", "B"].slice(0, inputs), outputs: ["C"], attrs }) as OnnxNode;

/** Runs one of the SDK's shaders on the GPU over `inputs`; C starts as NaN. */
async function runProgram(gpu: GpuContext, program: GpuProgram, inputs: Float32Array[], floats: number): Promise<Float32Array> {
  const device = gpu.device;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const buffers: Record<string, GPUBuffer> = {};
  inputs.forEach((data, i) => {
    buffers["ABD"[i]] = device.createBuffer({ size: Math.max(16, data.length * 4), usage });
    device.queue.writeBuffer(buffers["ABD"[i]], 0, data as Float32Array<ArrayBuffer>);
  });
  buffers.C = device.createBuffer({ size: floats * 4, usage });
  device.queue.writeBuffer(buffers.C, 0, new Float32Array(floats).fill(NaN));
  const read = device.createBuffer({ size: floats * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const pipeline = await gpu.pipelines.prepare(program.id, program.source);
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroupOf(device, pipeline, program, buffers));
  pass.dispatchWorkgroups(...program.dispatch);
  pass.end();
  encoder.copyBufferToBuffer(buffers.C, 0, read, 0, floats * 4);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  return new Float32Array(read.getMappedRange().slice(0));
}

/** A float input of `shape`, seeded; a node's int64 shape input as it is. */
const floats = (shape: number[], seed: number, f: (x: number, i: number) => number = (x) => x): HostTensor =>
  ({ dtype: "float32", shape, data: seededFloats(shape.reduce((a, b) => a * b, 1), seed).map(f) });
const shapeInput = (dims: number[]): HostTensor => ({ dtype: "int64", shape: [dims.length], data: Float64Array.from(dims) });
const inputs = (shapes: number[][], n: OnnxNode) => shapes.map((s, i) => floats(s, 5 + i, (x) => (n.opType === "Div" && i === 1 ? x + 2 : x)));

describe.skipIf(noWebGpu)("the SDK's data-movement shaders on WebGPU (Dawn on SwiftShader)", () => {
  const cases: { what: string; node: OnnxNode; ins: HostTensor[]; exact?: false }[] = [
    { what: "attention's head split", node: node("Transpose", 1, { perm: [0, 2, 1, 3] }), ins: [floats([1, 12, 12, 32], 5)] },
    { what: "K transposed for Q·Kᵀ", node: node("Transpose", 1, { perm: [0, 1, 3, 2] }), ins: [floats([1, 12, 12, 32], 5)] },
    { what: "a default (reversing) transpose", node: node("Transpose", 1), ins: [floats([3, 5, 7], 5)] },
    ...([
      ["the mask added to the scores", "Add", [[1, 12, 9, 9], [1, 1, 1, 9]]],
      ["a column broadcast subtracted", "Sub", [[4, 33], [4, 1]]],
      ["a scalar multiplied", "Mul", [[70], []]],
      ["a row divided", "Div", [[5], [3, 5]]],
      ["more than one dispatch row of workgroups", "Add", [[65536 * 65 + 3], [1]]],
    ] as const).map(([what, op, shapes]) => ({ what, node: node(op, 2), ins: inputs(shapes.map((s) => [...s]), node(op, 2)) })),
    { what: "K and V of grouped-query attention expanded over the heads", node: node("Expand", 2), ins: [floats([1, 2, 1, 9, 16], 6), shapeInput([1, 2, 3, 9, 16])] },
    { what: "RMSNorm", node: { ...node("SimplifiedLayerNormalization", 2, { epsilon: 1e-6 }) }, ins: [floats([2, 9, 48], 7, (x) => x * 4), floats([48], 8)], exact: false },
    { what: "rotary embeddings' rotate-half", node: { ...node("jitzoo.RotateHalf", 2), inputs: ["A", "B", "D"] }, ins: [floats([1, 3, 9, 16], 9), floats([1, 1, 9, 16], 10), floats([1, 1, 9, 16], 11)], exact: false },
    { what: "a softmax's NaN guard", node: node("jitzoo.ReplaceNaN", 2), ins: [floats([3, 40], 12, (x, i) => (i % 7 === 0 ? NaN : x)), { dtype: "float32", shape: [], data: new Float32Array([0]) }] },
  ];

  it.each(cases)("$what: $node.opType as JavaScript computes it", async ({ node: n, ins, exact }) => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      const [want] = runNode(n, ins);
      const program = hostProgram(n, ins.map((t) => t.shape), want.shape)!;
      const bound = ins.filter((t) => t.dtype === "float32").map((t) => t.data as Float32Array);
      const got = await runProgram(gpu, program, bound, want.data.length);
      const expected = want.data as Float32Array;
      expect(got.length).toBe(expected.length);
      if (exact === false) got.forEach((x, i) => expect(Math.abs(x - expected[i]), `element ${i}`).toBeLessThan(1e-5 * Math.max(1, Math.abs(expected[i]))));
      else expect(got.findIndex((x, i) => !Object.is(x, expected[i]))).toBe(-1); // bit for bit: no arithmetic differs
      expect(program.dispatch[0]).toBeLessThanOrEqual(65535);
    } finally {
      gpu.close();
    }
  });

  it("has no shader for other nodes", () => {
    expect(hostProgram(node("Gather", 2), [[3, 4], [2]], [2, 4])).toBeUndefined();
    expect(hostProgram(node("Pow", 2), [[3], [1]], [3])).toBeUndefined();
    expect(hostProgram(node("SimplifiedLayerNormalization", 2, { axis: 1 }), [[3, 4, 5], [20]], [3, 4, 5])).toBeUndefined(); // not the last axis only
  });
});
