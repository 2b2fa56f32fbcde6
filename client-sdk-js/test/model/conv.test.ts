// Convolutions as jitzoo ops: a small 2-D network (same-padded 3x3 with ReLU, a depthwise stride-2
// SAME_UPPER conv, a grouped 1x1 with a residual) and a 1-D one (dilated, grouped, SiLU) become
// `conv` ops with their epilogues fused, and match onnxruntime-web on the same file (no gateway:
// each op on its reference; the kernels stage runs the generated kernels against the same reference).
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import { OpKind } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { loadModel } from "../../src/load.js";
import { convGeometry, opKey, referenceOp } from "../../src/ops.js";
import { create } from "@bufbuild/protobuf";
import { OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { seededFloats } from "../../src/reference.js";
import { maxError, ortOutputs } from "../support/models.js";
import { CONV_NET_1D as NET_1D, CONV_NET_2D as NET_2D } from "../support/onnx.js";

describe("conv ops", () => {
  it.each([["2-D", NET_2D, [1, 4, 13, 14], [
    "conv|1x4x13x14x8x3x3|pads=1,1,1,1|bias,relu", "conv|1x8x13x14x8x3x3|stride=2x2|pads=1,0,1,1|group=8",
    "conv|1x8x7x7x8x1x1|group=2|bias,residual"]],
  ["1-D", NET_1D, [2, 6, 30], ["conv|2x6x1x30x10x1x5|dilation=1x2|pads=0,4,0,3|group=2|bias,silu"]]] as const)(
    "a %s network's convolutions become conv ops with their epilogues, and match onnxruntime-web", async (_name, bytes, shape, keys) => {
      const model = await loadModel(bytes, { worker: false, store: null });
      const x = seededFloats((shape as readonly number[]).reduce((a, b) => a * b, 1), 7);
      const ours = await model.run({ x: new ort.Tensor("float32", x, [...shape]) });
      const theirs = await ortOutputs(bytes, { x: new ort.Tensor("float32", x, [...shape]) });
      expect(model.stats().ops.map((op) => op.key).sort()).toEqual([...keys].sort());
      expect(maxError(ours.y.data as Float32Array, theirs.y)).toBeLessThan(1e-5);
    });

  it("computes rows of C by the definition: a window over the padding, a stride, a dilation and groups", () => {
    // X [1, 2, 3, 4] = 1..24, W [2, 1, 2, 2] all ones, groups 2, pads 1 left and top, stride 2, dilation 1
    const op = create(OpSpecSchema, { kind: OpKind.CONV, shape: [1, 2, 3, 4, 2, 2, 2], conv: { strideH: 2, strideW: 2, padTop: 1, padLeft: 1, group: 2 } });
    const g = convGeometry(op);
    expect([g.oh, g.ow, g.taps]).toEqual([2, 2, 4]);
    expect(opKey(op)).toBe("conv|1x2x3x4x2x2x2|stride=2x2|pads=1,1,0,0|group=2");
    const x = Float32Array.from({ length: 24 }, (_, i) => i + 1);
    const c = referenceOp(op, { A: x, B: new Float32Array(8).fill(1) });
    // channel 0: (0,0) sees only x[0][0] = 1; (0,1) x[0][1..2] = 2+3; (1,0) rows 1-2 col 0 = 5+9; (1,1) = 6+7+10+11
    expect(Array.from(c.subarray(0, 4))).toEqual([1, 5, 14, 34]);
    // channel 1 reads input channel 1 only (its group): 13, 14+15, 17+21, 18+19+22+23
    expect(Array.from(c.subarray(4))).toEqual([13, 29, 38, 82]);
  });
});
