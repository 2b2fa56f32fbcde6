// ONNX's own conformance node tests for every supported op (written by harness/models/node_tests.py).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TensorProtoSchema } from "../../src/gen/onnx/onnx_pb.js";
import { loadModel } from "../../src/model/model.js";
import { tensorOf } from "../../src/model/onnx.js";
import { MODELS_DIR, maxError } from "../support/models.js";

const NODE_DIR = join(MODELS_DIR, "node");
const cases = existsSync(NODE_DIR) ? readdirSync(NODE_DIR).sort() : [];
if (process.env.JITZOO_MODELS && cases.length === 0) throw new Error(`no ONNX node tests in ${NODE_DIR}: run harness/models/node_tests.py`);

/** Cases the engine refuses on purpose, and the error that says so. */
const REFUSED: Readonly<Record<string, RegExp>> = {
  test_matmul_1d_1d: /1-D operands are not supported/,
  test_matmul_1d_3d: /1-D operands are not supported/,
  test_matmul_4d_1d: /1-D operands are not supported/,
  test_reshape_allowzero_reordered: /dims \[0,3,4\] must be positive integers/, // empty tensors
};

function tensors(dir: string, prefix: string) {
  return readdirSync(dir).filter((f) => f.startsWith(prefix)).sort((a, b) => parseInt(a.slice(prefix.length)) - parseInt(b.slice(prefix.length)))
    .map((f) => {
      const proto = fromBinary(TensorProtoSchema, readFileSync(join(dir, f)));
      return { name: proto.name, tensor: tensorOf(proto, f) };
    });
}

describe.skipIf(cases.length === 0)("ONNX node tests", () => {
  it.each(cases)("%s", async (name) => {
    const data = join(NODE_DIR, name, "test_data_set_0");
    const inputs = tensors(data, "input_");
    const outputs = tensors(data, "output_");
    const run = async () => {
      const model = await loadModel(readFileSync(join(NODE_DIR, name, "model.onnx")));
      return model.run(Object.fromEntries(inputs.map(({ name: n, tensor }) => [n, { data: tensor.data, dims: tensor.shape }])));
    };
    if (REFUSED[name]) {
      await expect(run()).rejects.toThrow(REFUSED[name]);
      return;
    }
    const got = await run();
    for (const { name: n, tensor } of outputs) {
      expect(got[n].dims).toEqual(tensor.shape);
      const actual = Array.from(got[n].data as ArrayLike<number | bigint>, Number);
      expect(maxError(actual, tensor.data), `${n}`).toBeLessThan(1e-5);
    }
  });
});
