import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import { ModelProtoSchema, TensorProto_DataLocation, TensorProto_DataType, type NodeProtoSchema } from "../../src/gen/onnx/onnx_pb.js";
import { loadModel } from "../../src/load.js";
import { ModelError } from "../../src/graph/onnx.js";
import { encoderFeeds, maxError, modelBytes, modelsMissing, ortOutputs } from "../support/models.js";

/** A one-node model made here: `[4, 8]` float input x, output y, and float initializers. */
function oneNode(node: MessageInitShape<typeof NodeProtoSchema>, opset = 17, initializers: Record<string, Float32Array> = {}): Uint8Array {
  const info = (name: string) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: [4, 8].map((d) => ({ value: { case: "dimValue" as const, value: BigInt(d) } })) } } } },
  });
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: BigInt(opset) }, { domain: "com.microsoft", version: 1n }],
    graph: {
      name: "one", node: [{ name: "n0", input: ["x"], output: ["y"], ...node }], input: [info("x")], output: [info("y")],
      initializer: Object.entries(initializers).map(([name, values]) => ({ name, dims: [BigInt(values.length)], dataType: TensorProto_DataType.FLOAT, floatData: Array.from(values) })),
    },
  }));
}

const x = { data: new Float32Array(32).fill(0.5), dims: [4, 8] };

describe("import: what the engine refuses", () => {
  it("names the node and op type of an unsupported op, and the domain of another domain's", async () => {
    await expect(loadModel(oneNode({ opType: "LSTM" }))).rejects.toThrow(new ModelError("node n0 (LSTM): op type LSTM is not supported"));
    await expect(loadModel(oneNode({ opType: "Attention", domain: "com.microsoft" })))
      .rejects.toThrow(new ModelError("node n0 (com.microsoft.Attention): op type com.microsoft.Attention is not supported"));
    await expect(loadModel(oneNode({ opType: "Foo", domain: "org.example" }))).rejects.toThrow("node n0 (org.example.Foo): domain org.example is not supported");
    // the engine's own ops (what its fuser makes of exporters' patterns) are not for files
    await expect(loadModel(oneNode({ opType: "RotateHalf", domain: "jitzoo" }))).rejects.toThrow("node n0 (jitzoo.RotateHalf): domain jitzoo is not supported");
  });

  it("runs onnxruntime's RMSNorm contrib op as onnxruntime-web does", async () => {
    const scale = Float32Array.from({ length: 8 }, (_, i) => 0.5 + i / 8);
    const bytes = oneNode({ opType: "SimplifiedLayerNormalization", input: ["x", "scale"], attribute: [{ name: "epsilon", f: 1e-6, type: 1 }] }, 17, { scale });
    const feeds = { x: new ort.Tensor("float32", Float32Array.from({ length: 32 }, (_, i) => Math.sin(i) * 3), [4, 8]) };
    const [ours, theirs] = [await (await loadModel(bytes)).run(feeds), await ortOutputs(bytes, feeds)];
    expect(maxError(ours.y.data as Float32Array, theirs.y)).toBeLessThan(1e-6);
  });

  it("names an unsupported attribute", async () => {
    const bad = oneNode({ opType: "Softmax", attribute: [{ name: "mystery", i: 1n, type: 2 }] });
    await expect(loadModel(bad)).rejects.toThrow("node n0 (Softmax): attribute mystery is not supported");
  });

  it("refuses an opset outside 13 to 21, and bytes that are not a model", async () => {
    await expect(loadModel(oneNode({ opType: "Softmax" }, 11))).rejects.toThrow("opset 11 is not supported (supported: 13 to 21)");
    await expect(loadModel(oneNode({ opType: "Softmax" }, 22))).rejects.toThrow("opset 22 is not supported (supported: 13 to 21)");
    await expect(loadModel(new Uint8Array([0xff, 0xff, 0xff]))).rejects.toThrow(/not an ONNX model/);
  });

  it("says which input is missing, unknown or of the wrong shape", async () => {
    const model = await loadModel(oneNode({ opType: "Softmax" }));
    await expect(model.run({})).rejects.toThrow("input x is missing (inputs: x)");
    await expect(model.run({ x, z: x })).rejects.toThrow("z is not an input of the model (inputs: x)");
    await expect(model.run({ x: { data: new Float32Array(12), dims: [4, 3] } })).rejects.toThrow("input x: dimension 1 must be 8, got 3");
    await expect(model.run({ x: { data: new BigInt64Array(32), dims: [4, 8] } })).rejects.toThrow("input x: float32 expected (Float32Array, Float64Array, an array of numbers), got a BigInt64Array");
    expect((await model.run({ x })).y.dims).toEqual([4, 8]); // and it still runs
  });

  it("runs a supported one-node model on a jitzoo op", async () => {
    const model = await loadModel(oneNode({ opType: "Softmax" }));
    const { y } = await model.run({ x });
    expect(Array.from(y.data as Float32Array)).toEqual(Array(32).fill(0.125));
    expect(model.stats().ops.map((o) => o.key)).toEqual(["softmax|4x8"]);
  });
});

/** Each pattern model, the jitzoo ops it must become, with nothing left to run in JavaScript. */
const PATTERNS: [string, string[], number[]][] = [
  ["linear_gelu_erf", ["matmul|8x64x48|bias,gelu_erf"], [1, 8, 64]],
  ["linear_gelu_tanh", ["matmul|8x64x48|bias,gelu_tanh"], [1, 8, 64]],
  ["gemm", ["matmul|5x64x48|transposeB|scale:0.5,bias"], [5, 64]],
  ["residual", ["matmul|8x64x64|bias,residual"], [1, 8, 64]],
  ["layer_norm_op", ["layer_norm|8x64|epsilon=1.0E-12"], [1, 8, 64]],
  ["layer_norm_reduce_mean", ["layer_norm|8x64"], [1, 8, 64]],
  ["layer_norm_reduce_mean_18", ["layer_norm|8x64|epsilon=1.0E-6"], [1, 8, 64]],
  ["softmax", ["softmax|8x64"], [1, 8, 64]],
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

/** `[4, 8]` x plus a `[8]` weight w kept in an external file, `y = x + w`. */
function externalWeight(location: string): Uint8Array {
  const info = (name: string) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: [4, 8].map((d) => ({ value: { case: "dimValue" as const, value: BigInt(d) } })) } } } },
  });
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: 17n }],
    graph: {
      name: "external", node: [{ name: "add", opType: "Add", input: ["x", "w"], output: ["y"] }], input: [info("x")], output: [info("y")],
      initializer: [{
        name: "w", dims: [8n], dataType: TensorProto_DataType.FLOAT, dataLocation: TensorProto_DataLocation.EXTERNAL,
        externalData: [{ key: "location", value: location }, { key: "offset", value: "16" }, { key: "length", value: "32" }],
      }],
    },
  }));
}

describe("import: float16 inputs and outputs", () => {
  it("takes float16 bits (a Uint16Array) or floats, and rounds what an op writes to float16", async () => {
    const info = (name: string) => ({
      name,
      type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT16, shape: { dim: [{ value: { case: "dimValue" as const, value: 4n } }] } } } },
    });
    const bytes = toBinary(ModelProtoSchema, create(ModelProtoSchema, {
      irVersion: 8n, opsetImport: [{ domain: "", version: 17n }],
      graph: { name: "half", node: [{ name: "relu", opType: "Relu", input: ["x"], output: ["y"] }], input: [info("x")], output: [info("y")] },
    }));
    const model = await loadModel(bytes);
    const bits = await model.run({ x: { data: Uint16Array.of(0x3e00, 0xc000, 0x3c00, 0x0001), dims: [4] } }); // 1.5, -2, 1, 2^-24
    expect(Array.from(bits.y.data as Float32Array)).toEqual([1.5, 0, 1, 2 ** -24]);
    const floats = await model.run({ x: { data: Float32Array.of(1.0001, 3.14159, -1, 65519), dims: [4] } });
    expect(Array.from(floats.y.data as Float32Array)).toEqual([1, 3.140625, 0, 65504]); // the nearest float16s
    await expect(model.run({ x: { data: new Int32Array(4), dims: [4] } }))
      .rejects.toThrow("input x: float16 expected (Float32Array, Float64Array, Uint16Array (float16 bits), an array of numbers), got an Int32Array");
  });
});

describe("import: bad files", () => {
  it("loads external data given beside the model, and names a missing or short file", async () => {
    const file = new Float32Array(12);
    file.set([1, 2, 3, 4, 5, 6, 7, 8], 4); // 16 bytes in, as the offset says
    const bytes = externalWeight("model.onnx_data");
    const model = await loadModel(bytes, { externalData: { "model.onnx_data": file.buffer } });
    expect(Array.from((await model.run({ x })).y.data as Float32Array).slice(0, 8)).toEqual([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5]);
    await expect(loadModel(bytes)).rejects.toThrow("the model keeps tensors in model.onnx_data: pass it in externalData (model.onnx_data)");
    await expect(loadModel(bytes, { externalData: { "model.onnx_data": new Uint8Array(40) } }))
      .rejects.toThrow("initializer w: model.onnx_data holds 40 bytes, the tensor needs 32 from offset 16 (truncated?)");
  });

  it.skipIf(modelsMissing)("refuses a truncated or corrupted file with a ModelError, then loads a good one", async () => {
    const bytes = Uint8Array.from(modelBytes("patterns/residual.onnx")); // a copy (a Buffer's slice is a view)
    await expect(loadModel(bytes.slice(0, Math.floor(bytes.length * 0.6)))).rejects.toThrow(ModelError);
    const corrupted = bytes.slice();
    for (let i = 0; i < 64; i++) corrupted[20 + i * 7] ^= 0xa5;
    await expect(loadModel(corrupted)).rejects.toThrow(ModelError);
    const model = await loadModel(bytes);
    expect(model.outputNames.length).toBe(1);
  });
});
