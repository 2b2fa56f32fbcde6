import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpilogueKind, OpKind, OpSpecSchema } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { checkOp, dimsOf, flopsOf, opKey, opName, opOfMetadata, referenceOp } from "../src/ops.js";
import { erf, erfFloat, maxRelativeError, referenceMatMul, seededFloats } from "../src/reference.js";
import { matmul } from "../src/workloads.js";

describe("reference matmul", () => {
  it("matches a hand-computed product", () => {
    // [1 2; 3 4] x [5 6 7; 8 9 10] = [21 24 27; 47 54 61]
    const c = referenceMatMul({ batch: 1, m: 2, k: 2, n: 3 }, new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8, 9, 10]));
    expect([...c]).toEqual([21, 24, 27, 47, 54, 61]);
  });

  it("multiplies each batch on its own", () => {
    // batch 0: [1 2] x [3; 4] = [11]; batch 1: [-1 0.5] x [2; 6] = [1]
    const c = referenceMatMul({ batch: 2, m: 1, k: 2, n: 1 }, new Float32Array([1, 2, -1, 0.5]), new Float32Array([3, 4, 2, 6]));
    expect([...c]).toEqual([11, 1]);
  });

  it("accumulates in float64", () => {
    // In float32, 2^24 + 1 - 2^24 loses the 1.
    const c = referenceMatMul({ batch: 1, m: 1, k: 3, n: 1 }, new Float32Array([2 ** 24, 1, -(2 ** 24)]), new Float32Array([1, 1, 1]));
    expect(c[0]).toBe(1);
  });

  it("refuses operands that do not fit the dims", () => {
    expect(() => referenceMatMul({ batch: 1, m: 2, k: 2, n: 2 }, new Float32Array(3), new Float32Array(4))).toThrow(/do not fit/);
  });
});

describe("op shapes", () => {
  it("reads matmul and batch matmul shapes and counts their flops", () => {
    expect(dimsOf(matmul(128, 256, 96))).toEqual({ batch: 1, m: 128, k: 256, n: 96 });
    const batched = { kind: OpKind.BATCH_MATMUL, shape: [4, 2, 3, 5] } as Parameters<typeof dimsOf>[0];
    expect(dimsOf(batched)).toEqual({ batch: 4, m: 2, k: 3, n: 5 });
    expect(flopsOf(batched)).toBe(2 * 4 * 2 * 3 * 5);
    expect(opName(OpKind.BATCH_MATMUL)).toBe("batch_matmul");
    expect(() => dimsOf({ kind: OpKind.MATMUL, shape: [1, 2] } as Parameters<typeof dimsOf>[0])).toThrow(/unsupported/);
    expect(() => dimsOf(matmul(0, 2, 2))).toThrow(/at least 1/);
  });

  it("keys an op as it comes back over the wire: a scale that float32 cannot hold keys as its float32", () => {
    // 1/sqrt(32), the attention scale of 32-wide heads, is not a float32: the wire rounds it
    const op = create(OpSpecSchema, { kind: OpKind.BATCH_MATMUL, shape: [12, 128, 32, 128], transposeB: true, epilogue: [{ kind: EpilogueKind.SCALE, value: 1 / Math.sqrt(32) }] });
    const echoed = fromBinary(OpSpecSchema, toBinary(OpSpecSchema, op));
    expect(echoed.epilogue[0].value).not.toBe(op.epilogue[0].value);
    expect(opKey(echoed)).toBe(opKey(op));
    expect(opKey(op)).toBe(`batch_matmul|12x128x32x128|transposeB|scale:0.17677669`);
  });
});

describe("op kinds", () => {
  it("take their ABI names and ranks from kernel.proto, as the Java side does", () => {
    const ranks = { matmul: 3, batch_matmul: 4, add: 1, mul: 1, softmax: 2, layer_norm: 2 };
    for (const [kind, rank] of [[OpKind.MATMUL, 3], [OpKind.BATCH_MATMUL, 4], [OpKind.ADD, 1], [OpKind.MUL, 1],
      [OpKind.SOFTMAX, 2], [OpKind.LAYER_NORM, 2]] as const) {
      expect(ranks[opName(kind) as keyof typeof ranks]).toBe(rank);
      expect(() => checkOp(create(OpSpecSchema, { kind, shape: Array(rank).fill(2) }))).not.toThrow();
      expect(() => checkOp(create(OpSpecSchema, { kind, shape: Array(rank + 1).fill(2) }))).toThrow("unsupported op");
    }
    expect(() => opName(OpKind.UNSPECIFIED)).toThrow("unsupported op kind UNSPECIFIED");
  });
});

describe("ops read from kernel metadata", () => {
  it("reads every field that changes what a kernel computes, as the compiler writes them", () => {
    // metadata as codegen writes it for --op matmul --shape 4,8,8 --epilogue scale:0.5,bias,gelu_erf,residual
    const meta = {
      abi: 1, op: "matmul", shape: [4, 8, 8], entry: "matmul", operands: ["A", "B", "C", "Bias", "Residual"],
      transposeB: true, broadcastB: false,
      epilogue: [{ kind: "scale", value: 0.5 }, { kind: "bias" }, { kind: "gelu_erf" }, { kind: "residual" }],
    };
    expect(opKey(opOfMetadata(meta))).toBe("matmul|4x8x8|transposeB|scale:0.5,bias,gelu_erf,residual");
    expect(opKey(opOfMetadata({ op: "layer_norm", shape: [2, 768], epsilon: 1e-12 }))).toBe("layer_norm|2x768|epsilon=1.0E-12");
    expect(opKey(opOfMetadata({ op: "batch_matmul", shape: [2, 3, 4, 5], broadcastB: true }))).toBe("batch_matmul|2x3x4x5|broadcastB");
  });

  it("gives the reference the harness checks kernels against", () => {
    // [1 2; 3 4] x [1 0; 0 1], then + bias [10, 20], then relu
    const op = opOfMetadata({ op: "matmul", shape: [2, 2, 2], epilogue: [{ kind: "bias" }, { kind: "relu" }] });
    const c = referenceOp(op, { A: Float32Array.of(1, 2, 3, 4), B: Float32Array.of(1, 0, 0, 1), Bias: Float32Array.of(10, -20) });
    expect([...c]).toEqual([11, 0, 13, 0]);
  });

  it("refuses an op or an epilogue step the ABI does not have", () => {
    expect(() => opOfMetadata({ op: "conv2d", shape: [1] })).toThrow("unknown op 'conv2d' in kernel metadata");
    expect(() => opOfMetadata({ op: "matmul", shape: [1, 1, 1], epilogue: [{ kind: "tanh" }] }))
      .toThrow("unknown epilogue step 'tanh' in kernel metadata");
  });
});

describe("maxRelativeError", () => {
  it("is relative for values above the floor and absolute below it", () => {
    expect(maxRelativeError(new Float32Array([101]), new Float32Array([100]))).toBeCloseTo(0.01, 6);
    expect(maxRelativeError(new Float32Array([0.001]), new Float32Array([0]))).toBeCloseTo(0.001, 6);
    expect(maxRelativeError(new Float32Array([0.5, 2]), new Float32Array([0.25, 2]))).toBeCloseTo(0.25, 6);
  });

  it("takes the worst element, with a configurable floor", () => {
    const actual = new Float32Array([1, 0.0011]);
    const expected = new Float32Array([1, 0.001]);
    expect(maxRelativeError(actual, expected)).toBeCloseTo(0.0001, 6);
    expect(maxRelativeError(actual, expected, 1e-3)).toBeCloseTo(0.1, 4);
    expect(maxRelativeError(expected, expected)).toBe(0);
  });

  it("treats NaN and a length mismatch as infinitely wrong", () => {
    expect(maxRelativeError(new Float32Array([NaN]), new Float32Array([1]))).toBe(Infinity);
    expect(maxRelativeError(new Float32Array([1, 2]), new Float32Array([1]))).toBe(Infinity);
    expect(maxRelativeError(new Float32Array([1]), new Float32Array([NaN]))).toBe(Infinity); // a number where the reference has NaN
    expect(maxRelativeError(new Float32Array([-Infinity]), new Float32Array([3]))).toBe(Infinity);
  });

  it("lets equal infinities, and NaN where the reference has NaN, agree (masked scores, a fully masked softmax row)", () => {
    expect(maxRelativeError(new Float32Array([-Infinity, NaN, 2]), new Float32Array([-Infinity, NaN, 2]))).toBe(0);
    expect(maxRelativeError(new Float32Array([Infinity]), new Float32Array([-Infinity]))).toBe(Infinity);
  });
});

describe("seededFloats", () => {
  it("is deterministic and within [-1, 1)", () => {
    const x = seededFloats(1000, 7);
    expect([...x]).toEqual([...seededFloats(1000, 7)]);
    expect([...x]).not.toEqual([...seededFloats(1000, 8)]);
    expect(Math.min(...x)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...x)).toBeLessThan(1);
  });
});

describe("erfFloat", () => {
  it("is within 3e-7 of erf from -6 to 6, odd, saturated past 4, and passes NaN through", () => {
    for (let x = -6; x <= 6; x += 1 / 256) expect(Math.abs(erfFloat(x) - erf(x)), `x = ${x}`).toBeLessThan(3e-7);
    expect(erfFloat(-1.25)).toBe(-erfFloat(1.25));
    expect(erfFloat(100)).toBe(erfFloat(4));
    expect(erfFloat(NaN)).toBeNaN();
  });
});
