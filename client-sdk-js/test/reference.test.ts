import { describe, expect, it } from "vitest";
import { maxRelativeError, referenceMatMul, seededFloats } from "../src/reference.js";

describe("reference matmul", () => {
  it("matches a hand-computed product", () => {
    // [1 2; 3 4] x [5 6 7; 8 9 10] = [21 24 27; 47 54 61]
    const c = referenceMatMul({ batch: 1, m: 2, k: 2, n: 3 }, new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8, 9, 10]));
    expect([...c]).toEqual([21, 24, 27, 47, 54, 61]);
  });

  it("keeps batches apart", () => {
    const a = new Float32Array([1, 2]); // two 1x1 matrices
    const b = new Float32Array([3, 4]);
    expect([...referenceMatMul({ batch: 2, m: 1, k: 1, n: 1 }, a, b)]).toEqual([3, 8]);
  });
});

describe("maxRelativeError", () => {
  it("is relative for large values and absolute near zero", () => {
    expect(maxRelativeError(new Float32Array([101]), new Float32Array([100]))).toBeCloseTo(0.01);
    expect(maxRelativeError(new Float32Array([0.001]), new Float32Array([0]))).toBeCloseTo(0.001);
  });

  it("treats NaN and a length mismatch as infinitely wrong", () => {
    expect(maxRelativeError(new Float32Array([NaN]), new Float32Array([1]))).toBe(Infinity);
    expect(maxRelativeError(new Float32Array([1, 2]), new Float32Array([1]))).toBe(Infinity);
  });
});

describe("seededFloats", () => {
  it("is deterministic and within [-1, 1)", () => {
    const x = seededFloats(1000, 7);
    expect([...x]).toEqual([...seededFloats(1000, 7)]);
    expect(Math.min(...x)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...x)).toBeLessThan(1);
  });
});
