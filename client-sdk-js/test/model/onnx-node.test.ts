// ONNX's own conformance node tests for every supported op (written by harness/models/node_tests.py).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { ModelProtoSchema, TensorProto_DataType as DataType, TensorProtoSchema } from "../../src/gen/onnx/onnx_pb.js";
import { loadModel } from "../../src/load.js";
import { tensorOf } from "../../src/graph/onnx.js";
import { MODELS_DIR, maxError } from "../support/models.js";

const NODE_DIR = join(MODELS_DIR, "node");
const cases = existsSync(NODE_DIR) ? readdirSync(NODE_DIR).sort() : [];
if (process.env.JITZOO_MODELS && cases.length === 0) throw new Error(`no ONNX node tests in ${NODE_DIR}: run harness/models/node_tests.py`);

/** Cases the engine refuses on purpose (by name), and the error that says so. */
const REFUSED: readonly [RegExp, RegExp][] = [
  // a shape computed from a tensor's contents (the engine folds every shape at load)
  [/window(_symmetric)?_expanded$/, /\(Range\): limit must be a constant/],
  [/^test_center_crop_pad_.*_expanded$/, /\(Pad\): pads must be a constant/],
  // 16-bit quantization
  [/^test_quantizelinear_u?int16$/, /quantizing to int64 is not supported/],
  // training-mode BatchNormalization (updated statistics as outputs)
  [/^test_batchnorm_.*_training_mode$/, /\(BatchNormalization\): training mode .* is not supported/],
];

/** Cases whose expected values ONNX's generator wrote by hand, rounded to 4 decimals. */
const ROUNDED_BY_HAND = new Set(["test_averagepool_2d_ceil_last_window_starts_on_pad"]);

/** How far an output may be from ONNX's expected values (relative above 1, absolute below): float16 outputs are rounded there. */
const TOLERANCE: Partial<Record<DataType, number>> = { [DataType.FLOAT16]: 1e-3 };

function tensors(dir: string, prefix: string) {
  return readdirSync(dir).filter((f) => f.startsWith(prefix)).sort((a, b) => parseInt(a.slice(prefix.length)) - parseInt(b.slice(prefix.length)))
    .map((f) => {
      const proto = fromBinary(TensorProtoSchema, readFileSync(join(dir, f)));
      return { name: proto.name, type: proto.dataType as DataType, tensor: tensorOf(proto, f) };
    });
}

/** Cases passed and run per op type (a case counts for every op type in its graph). */
const tally = new Map<string, { passed: number; run: number }>();

describe.skipIf(cases.length === 0)("ONNX node tests", () => {
  afterAll(() => {
    const rows = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([op, t]) => `${op} ${t.passed}/${t.run}`);
    console.log(`ONNX node tests passed per op (${rows.length} ops):\n  ${rows.join("\n  ")}`);
  });

  it.each(cases)("%s", async (name) => {
    const bytes = readFileSync(join(NODE_DIR, name, "model.onnx"));
    const ops = new Set(fromBinary(ModelProtoSchema, bytes).graph!.node.map((n) => (n.domain && n.domain !== "ai.onnx" ? `${n.domain}.${n.opType}` : n.opType)));
    const counts = [...ops].map((op) => tally.get(op) ?? tally.set(op, { passed: 0, run: 0 }).get(op)!);
    counts.forEach((c) => c.run++);
    const data = join(NODE_DIR, name, "test_data_set_0");
    const inputs = tensors(data, "input_");
    const outputs = tensors(data, "output_");
    const run = async () => {
      const model = await loadModel(bytes);
      return model.run(Object.fromEntries(inputs.map(({ name: n, tensor }) => [n, { data: tensor.data, dims: tensor.shape }])));
    };
    const refused = REFUSED.find(([pattern]) => pattern.test(name))?.[1];
    if (refused) {
      await expect(run()).rejects.toThrow(refused);
    } else {
      const got = await run();
      for (const { name: n, type, tensor } of outputs) {
        expect(got[n].dims).toEqual(tensor.shape);
        const actual = Array.from(got[n].data as ArrayLike<number | bigint>, Number);
        expect(maxError(actual, tensor.data), `${n}`).toBeLessThan(ROUNDED_BY_HAND.has(name) ? 1e-4 : TOLERANCE[type] ?? 1e-5);
      }
    }
    counts.forEach((c) => c.passed++);
  });
});
