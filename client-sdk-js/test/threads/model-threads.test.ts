import { describe, expect, it } from "vitest";
import { loadModel } from "../../src/load.js";
import { probeThreads } from "../../src/threads/pool.js";
import { matmulModel } from "../support/onnx.js";

const x = { data: new Float32Array(4 * 8).fill(0.5), dims: [4, 8] };

describe("a model's kernel threads", () => {
  it("runs on the probe's threads up to the app's cap, and on one when asked", async () => {
    const model = await loadModel(matmulModel(4, 8, 6), { threads: 2 });
    expect(model.stats().threads).toBe(probeThreads(2).threads);
    expect(model.stats().notes.filter((n) => /thread/.test(n))).toEqual([]);
    await model.run({ x });
    expect((await loadModel(matmulModel(4, 8, 6), { threads: 1 })).stats().threads).toBe(1);
  });

  it("falls back to one thread without shared memory, and says why", async () => {
    const saved = globalThis.SharedArrayBuffer;
    (globalThis as { SharedArrayBuffer?: unknown }).SharedArrayBuffer = undefined;
    try {
      const model = await loadModel(matmulModel(4, 8, 6), { threads: 4 });
      expect(model.stats().threads).toBe(1);
      expect(model.stats().notes).toContainEqual(expect.stringMatching(/^kernels run on one thread: no SharedArrayBuffer here/));
      const { y } = await model.run({ x });
      expect(y.data.length).toBe(4 * 6);
    } finally {
      globalThis.SharedArrayBuffer = saved;
    }
  });

  it("refuses a thread count that is not a whole number of at least 1", async () => {
    await expect(loadModel(matmulModel(4, 8, 6), { threads: 0 })).rejects.toThrow(/threads must be a whole number of at least 1/);
    await expect(loadModel(matmulModel(4, 8, 6), { threads: 1.5 })).rejects.toThrow(/threads must be a whole number/);
  });
});
