import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ModelProtoSchema, TensorProto_DataType, type NodeProtoSchema } from "../../src/gen/onnx/onnx_pb.js";
import { loadModel } from "../../src/model/model.js";
import { ModelError } from "../../src/model/onnx.js";
import { encoderFeeds, maxError, modelBytes, modelsMissing, ortOutputs } from "../support/models.js";

/** A one-node model made here: `[4, 8]` float input x, output y. */
function oneNode(node: MessageInitShape<typeof NodeProtoSchema>, opset = 17): Uint8Array {
  const info = (name: string) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: [4, 8].map((d) => ({ value: { case: "dimValue" as const, value: BigInt(d) } })) } } } },
  });
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: BigInt(opset) }],
    graph: { name: "one", node: [{ name: "n0", input: ["x"], output: ["y"], ...node }], input: [info("x")], output: [info("y")] },
  }));
}

const x = { data: new Float32Array(32).fill(0.5), dims: [4, 8] };

describe("import: what the engine refuses", () => {
  it("names the node and op type of an unsupported op", async () => {
    await expect(loadModel(oneNode({ opType: "Conv" }))).rejects.toThrow(new ModelError("node n0 (Conv): op type Conv is not supported"));
  });

  it("names an unsupported attribute", async () => {
    const bad = oneNode({ opType: "Softmax", attribute: [{ name: "mystery", i: 1n, type: 2 }] });
    await expect(loadModel(bad)).rejects.toThrow("node n0 (Softmax): attribute mystery is not supported");
  });

  it("refuses an opset outside 13 to 18, and bytes that are not a model", async () => {
    await expect(loadModel(oneNode({ opType: "Softmax" }, 11))).rejects.toThrow("opset 11 is not supported (supported: 13 to 18)");
    await expect(loadModel(new Uint8Array([0xff, 0xff, 0xff]))).rejects.toThrow(/not an ONNX model/);
  });

  it("says which input is missing, unknown or of the wrong shape", async () => {
    const model = await loadModel(oneNode({ opType: "Softmax" }));
    await expect(model.run({})).rejects.toThrow("input x is missing (inputs: x)");
    await expect(model.run({ x, z: x })).rejects.toThrow("z is not an input of the model (inputs: x)");
    await expect(model.run({ x: { data: new Float32Array(12), dims: [4, 3] } })).rejects.toThrow("input x: dimension 1 must be 8, got 3");
  });

  it("runs a supported one-node model on a jitzoo op", async () => {
    const model = await loadModel(oneNode({ opType: "Softmax" }));
    const { y } = await model.run({ x });
    expect(Array.from(y.data as Float32Array)).toEqual(Array(32).fill(0.125));
    expect(model.stats().ops.map((o) => o.key)).toEqual(["softmax[4,8]"]);
  });
});

/** Each pattern model, the jitzoo ops it must become, with nothing left to run in JavaScript. */
const PATTERNS: [string, string[], number[]][] = [
  ["linear_gelu_erf", ["matmul[8,64,48];bias,gelu_erf"], [1, 8, 64]],
  ["linear_gelu_tanh", ["matmul[8,64,48];bias,gelu_tanh"], [1, 8, 64]],
  ["gemm", ["matmul[5,64,48];transposeB;scale:0.5,bias"], [5, 64]],
  ["residual", ["matmul[8,64,64];bias,residual"], [1, 8, 64]],
  ["layer_norm_op", ["layer_norm[8,64];epsilon=9.999999960041972e-13"], [1, 8, 64]],
  ["layer_norm_reduce_mean", ["layer_norm[8,64];epsilon=0.00001"], [1, 8, 64]],
  ["layer_norm_reduce_mean_18", ["layer_norm[8,64];epsilon=9.999999974752427e-7"], [1, 8, 64]],
  ["softmax", ["softmax[8,64]"], [1, 8, 64]],
];

describe.skipIf(modelsMissing)("import: exporter patterns become jitzoo ops", () => {
  it.each(PATTERNS)("%s", async (name, keys, dims) => {
    const bytes = modelBytes(`patterns/${name}.onnx`);
    const model = await loadModel(bytes);
    const feeds = encoderFeeds(model.inputNames, dims.at(-2)!, dims.at(-1)!);
    if (dims.length === 2) feeds.x = feeds.x.reshape(dims);
    const ours = await model.run(feeds);
    const theirs = await ortOutputs(bytes, feeds);
    const stats = model.stats();
    expect(stats.ops.map((o) => o.key)).toEqual(keys);
    expect(stats.hostSteps).toBe(0);
    for (const [output, expected] of Object.entries(theirs)) expect(maxError(ours[output].data as Float32Array, expected)).toBeLessThan(1e-5);
  });
});
