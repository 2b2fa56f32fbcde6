// Small ONNX models built in the test, for tests that need a model but not the generated ones.
import { create, toBinary } from "@bufbuild/protobuf";
import { ModelProtoSchema, TensorProto_DataType } from "../../src/gen/onnx/onnx_pb.js";
import { seededFloats } from "../../src/reference.js";

type Attribute = { name: string; ints?: number[]; i?: number; s?: string };

/** One node of a small test graph: its op, inputs, outputs and attributes (ints, an int, a string). */
export interface TestNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Attribute[];
}

/**
 * A float32 model of `nodes` with input `x` and output `y` (their shapes given) and initializers
 * of seeded floats (each its own seed) in [-1, 1).
 */
export function graphModel(nodes: TestNode[], x: number[], y: number[], initializers: Record<string, number[]>): Uint8Array {
  const info = (name: string, dims: number[]) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: dims.map((d) => ({ value: { case: "dimValue" as const, value: BigInt(d) } })) } } } },
  });
  const attribute = (a: Attribute) => a.ints ? { name: a.name, type: 7, ints: a.ints.map(BigInt) }
    : a.s !== undefined ? { name: a.name, type: 3, s: new TextEncoder().encode(a.s) } : { name: a.name, type: 2, i: BigInt(a.i!) };
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: 17n }],
    graph: {
      name: "test",
      node: nodes.map((n, i) => ({ name: `n${i}`, opType: n.op, input: n.inputs, output: n.outputs, attribute: (n.attrs ?? []).map(attribute) })),
      initializer: Object.entries(initializers).map(([name, dims], i) => ({
        name, dims: dims.map(BigInt), dataType: TensorProto_DataType.FLOAT,
        floatData: Array.from(seededFloats(dims.reduce((a, b) => a * b, 1), 100 + i)),
      })),
      input: [info("x", x)], output: [info("y", y)],
    },
  }));
}

/** y = x · W with x [m, k] and W an initializer [k, n] of seededFloats(k·n, 3): one matmul op (m may be symbolic). */
export function matmulModel(m: number | string, k: number, n: number): Uint8Array {
  const dim = (d: number | string) => ({ value: typeof d === "string" ? { case: "dimParam" as const, value: d } : { case: "dimValue" as const, value: BigInt(d) } });
  const info = (name: string, dims: (number | string)[]) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: dims.map(dim) } } } },
  });
  const w = seededFloats(k * n, 3);
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: 17n }],
    graph: {
      name: "mm", node: [{ name: "mm", opType: "MatMul", input: ["x", "w"], output: ["y"] }],
      initializer: [{ name: "w", dims: [BigInt(k), BigInt(n)], dataType: TensorProto_DataType.FLOAT, floatData: Array.from(w) }],
      input: [info("x", [m, k])], output: [info("y", [m, n])],
    },
  }));
}

/**
 * A small 2-D convnet: a same-padded 3x3 with bias and ReLU, a depthwise 3x3 of stride 2 (SAME_UPPER),
 * a grouped 1x1 with bias, and a residual over it. x [1, 4, 13, 14] → y [1, 8, 7, 7].
 */
export const CONV_NET_2D = graphModel([
  { op: "Conv", inputs: ["x", "w1", "b1"], outputs: ["c1"], attrs: [{ name: "pads", ints: [1, 1, 1, 1] }, { name: "kernel_shape", ints: [3, 3] }] },
  { op: "Relu", inputs: ["c1"], outputs: ["r1"] },
  { op: "Conv", inputs: ["r1", "w2"], outputs: ["c2"], attrs: [{ name: "group", i: 8 }, { name: "strides", ints: [2, 2] }, { name: "auto_pad", s: "SAME_UPPER" }] },
  { op: "Conv", inputs: ["c2", "w3", "b3"], outputs: ["c3"], attrs: [{ name: "group", i: 2 }] },
  { op: "Add", inputs: ["c3", "c2"], outputs: ["y"] },
], [1, 4, 13, 14], [1, 8, 7, 7], { w1: [8, 4, 3, 3], b1: [8], w2: [8, 1, 3, 3], w3: [8, 4, 1, 1], b3: [8] });

/** A 1-D conv (grouped, dilated, asymmetric pads) with bias and SiLU. x [2, 6, 30] → y [2, 10, 29]. */
export const CONV_NET_1D = graphModel([
  { op: "Conv", inputs: ["x", "w", "b"], outputs: ["c"], attrs: [{ name: "group", i: 2 }, { name: "dilations", ints: [2] }, { name: "pads", ints: [4, 3] }] },
  { op: "Sigmoid", inputs: ["c"], outputs: ["s"] },
  { op: "Mul", inputs: ["c", "s"], outputs: ["y"] },
], [2, 6, 30], [2, 10, 29], { w: [10, 3, 5], b: [10] });
