// A one-MatMul model small enough to tune in a second, its input, and a loop that runs it until
// every op settles, checking each output against the reference.
import { expect } from "vitest";
import type { Model } from "../../src/model/model.js";
import { referenceMatMul, seededFloats } from "../../src/reference.js";
import { matmulModel } from "./onnx.js";

export const [M, K, N] = [16, 32, 24];

/** The model's ONNX bytes: y = x × W, W seeded. */
export const smallMatmul = () => matmulModel(M, K, N);

export const x = { data: seededFloats(M * K, 9), dims: [M, K] };

/** The reference output for {@link x}. */
export const expectedY = referenceMatMul({ batch: 1, m: M, k: K, n: N }, x.data, seededFloats(K * N, 3));

/** Runs until settled: at budget 1 a timed pair (0.5 ms at least) of this microsecond op waits about a hundred runs. */
export async function runUntilSettled(model: Model, most = 5000): Promise<void> {
  for (let r = 0; r < most && !model.stats().settled; r++) {
    const { y } = await model.run({ x });
    (y.data as Float32Array).forEach((v, i) => expect(Math.abs(v - expectedY[i])).toBeLessThan(1e-4));
  }
}
