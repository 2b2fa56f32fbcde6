// float16: decoding every bit pattern, and rounding to the nearest half (ties to even), as a Cast to float16 does.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { EpilogueKind, EpilogueSchema, OpKind, OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { floatToHalf, halfToFloat, halfWords, roundToHalf } from "../../src/graph/tensor.js";
import { opTolerance, referenceOp } from "../../src/ops.js";

describe("float16", () => {
  it("decodes the values that bound every range", () => {
    expect([0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x7c00, 0xfc00].map(halfToFloat)).toEqual([1, -2, 65504, 2 ** -24, 2 ** -14, Infinity, -Infinity]);
    expect(halfToFloat(0x7e00)).toBeNaN();
  });

  it("keeps every half exactly, and rounds each midpoint between two halves to the even one", () => {
    for (let bits = 0; bits < 0x7bff; bits++) { // every non-negative finite half but the largest
      const here = halfToFloat(bits), next = halfToFloat(bits + 1);
      expect(roundToHalf(here)).toBe(here);
      expect(roundToHalf(-here)).toBe(-here);
      const even = bits % 2 === 0 ? here : next;
      expect(roundToHalf((here + next) / 2), `between ${here} and ${next}`).toBe(even);
      expect(roundToHalf(here + (next - here) * 0.25)).toBe(here);
      expect(roundToHalf(here + (next - here) * 0.75)).toBe(next);
    }
  });

  it("rounds past the largest half to infinity, from half an ulp on", () => {
    expect(roundToHalf(65519)).toBe(65504);
    expect(roundToHalf(65520)).toBe(Infinity);
    expect(roundToHalf(-1e6)).toBe(-Infinity);
    expect(roundToHalf(NaN)).toBeNaN();
  });

  it("encodes every half back to its own bits (but NaN's payload), and a float to its nearest half's", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = halfToFloat(bits);
      if (Number.isNaN(value)) expect(halfToFloat(floatToHalf(value))).toBeNaN();
      else if (bits !== 0x8000) expect(floatToHalf(value), `0x${bits.toString(16)}`).toBe(bits);
    }
    expect(floatToHalf(-0)).toBe(0x8000);
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // a tie: to even
    expect(floatToHalf(1e6)).toBe(0x7c00);
    const words = halfWords([1, -2, 65504]);
    expect(Array.from(new Uint16Array(words.buffer, 0, 3))).toEqual([0x3c00, 0xc000, 0x7bff]);
    expect(words.length).toBe(2); // two halves a word
  });

  it("round_half in an epilogue rounds the reference's values, and widens the tolerance by a float16 ulp per rounding", () => {
    const round = create(EpilogueSchema, { kind: EpilogueKind.ROUND_HALF });
    const bias = create(EpilogueSchema, { kind: EpilogueKind.BIAS });
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [1, 1, 3], epilogue: [round, bias, round] });
    const c = referenceOp(op, { A: Float32Array.of(1), B: Float32Array.of(1 + 2 ** -12, 1000.3, 2 ** -20), Bias: Float32Array.of(2 ** -11, 0, 0) });
    expect(Array.from(c)).toEqual([roundToHalf(1 + 2 ** -11), roundToHalf(1000.3), roundToHalf(2 ** -20)]);
    expect(opTolerance(op, 1e-4)).toBe(2 * 2 ** -10);
    expect(opTolerance(create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [1, 1, 3] }), 1e-4)).toBe(1e-4);
  });
});
