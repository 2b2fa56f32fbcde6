// Small ONNX models built in the test, for tests that need a model but not the generated ones.
import { create, toBinary } from "@bufbuild/protobuf";
import { ModelProtoSchema, TensorProto_DataType } from "../../src/gen/onnx/onnx_pb.js";
import { seededFloats } from "../../src/reference.js";

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
