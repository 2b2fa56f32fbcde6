import { describe, expect, it } from "vitest";
import { runNode } from "../../src/model/host/index.js";
import type { OnnxNode } from "../../src/model/onnx.js";
import type { HostTensor } from "../../src/model/tensor.js";
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
    buffers["AB"[i]] = device.createBuffer({ size: Math.max(16, data.length * 4), usage });
    device.queue.writeBuffer(buffers["AB"[i]], 0, data as Float32Array<ArrayBuffer>);
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

describe.skipIf(noWebGpu)("the SDK's data-movement shaders on WebGPU (Dawn on SwiftShader)", () => {
  const cases: { what: string; node: OnnxNode; shapes: number[][] }[] = [
    { what: "attention's head split", node: node("Transpose", 1, { perm: [0, 2, 1, 3] }), shapes: [[1, 12, 12, 32]] },
    { what: "K transposed for Q·Kᵀ", node: node("Transpose", 1, { perm: [0, 1, 3, 2] }), shapes: [[1, 12, 12, 32]] },
    { what: "a default (reversing) transpose", node: node("Transpose", 1), shapes: [[3, 5, 7]] },
    { what: "the mask added to the scores", node: node("Add", 2), shapes: [[1, 12, 9, 9], [1, 1, 1, 9]] },
    { what: "a column broadcast subtracted", node: node("Sub", 2), shapes: [[4, 33], [4, 1]] },
    { what: "a scalar multiplied", node: node("Mul", 2), shapes: [[70], []] },
    { what: "a row divided", node: node("Div", 2), shapes: [[5], [3, 5]] },
    { what: "more than one dispatch row of workgroups", node: node("Add", 2), shapes: [[65536 * 65 + 3], [1]] },
  ];

  it.each(cases)("$what: $node.opType $shapes as JavaScript computes it", async ({ node: n, shapes }) => {
    const gpu = await GpuContext.open({ gpu: useSwiftShader() });
    try {
      const program = hostProgram(n, shapes)!;
      const inputs = shapes.map((s, i) => {
        const data = seededFloats(s.reduce((a, b) => a * b, 1), 5 + i);
        return n.opType === "Div" && i === 1 ? data.map((x) => x + 2) : data;
      });
      const tensors: HostTensor[] = shapes.map((shape, i) => ({ dtype: "float32", shape, data: inputs[i] }));
      const [want] = runNode(n, tensors);
      const got = await runProgram(gpu, program, inputs, want.data.length);
      const expected = want.data as Float32Array;
      expect(got.length).toBe(expected.length);
      expect(got.findIndex((x, i) => !Object.is(x, expected[i]))).toBe(-1); // bit for bit: no arithmetic differs
      expect(program.dispatch[0]).toBeLessThanOrEqual(65535);
    } finally {
      gpu.close();
    }
  });

  it("has no shader for other nodes", () => {
    expect(hostProgram(node("Gather", 2), [[3, 4], [2]])).toBeUndefined();
    expect(hostProgram(node("Pow", 2), [[3], [1]])).toBeUndefined();
  });
});
