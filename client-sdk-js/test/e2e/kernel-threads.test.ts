// (p) Parallel kernels through the suite: a model on two kernel threads gets every op's kernels
// split for them (ABI v2) from the space and codegen, tunes them on the worker pool while it infers,
// computes what one thread and the reference compute, and keeps a device kind apart from one thread's.
import { describe, expect, it } from "vitest";
import { feedsFor, runUntilSettled } from "../../src/model/drive.js";
import { MemoryKernelStore, type StoredKernel } from "../../src/model/kernel-store.js";
import { loadModel } from "../../src/load.js";
import { type Model } from "../../src/model/model.js";
import { maxRelativeError } from "../../src/reference.js";
import { probeThreads } from "../../src/threads/pool.js";
import { modelBytes, modelsMissing } from "../support/models.js";
import { GATEWAY } from "./support.js";

const SEQ = 8;

async function firstOutput(model: Model): Promise<Float32Array> {
  const out = await model.run(feedsFor(model, SEQ));
  return Object.values(out)[0].data as Float32Array;
}

describe.skipIf(!GATEWAY || modelsMissing || probeThreads(2).threads < 2)("a model on kernel threads through the suite", () => {
  it("tunes every op with split kernels on two threads and computes what the reference does", async () => {
    const bytes = modelBytes("bert_layer.onnx");
    const expected = await firstOutput(await loadModel(bytes)); // reference kernels, no gateway
    const store = new MemoryKernelStore();
    const model = await loadModel(bytes, { gateway: GATEWAY, threads: 2, tuning: { budget: 1 }, store });
    const tuned = await runUntilSettled(model, feedsFor(model, SEQ), { maxSeconds: 120 });
    expect(tuned.threads).toBe(2);
    expect(tuned.notes).toEqual([]);
    expect(tuned.settled).toBe(true);
    for (const op of tuned.ops) {
      expect(op.source, op.key).toBe("wasm");
      expect(op.refused, op.key).toBe(0);
    }
    expect(maxRelativeError(await firstOutput(model), expected)).toBeLessThanOrEqual(1e-4);
    await model.close();

    // every kept kernel is a split one, and the device kind is not one thread's
    const kept = [...store.entries.values()] as StoredKernel[];
    expect(kept.length).toBe(tuned.ops.length);
    const fingerprints = new Set(kept.map((k) => k.fingerprint));
    expect(fingerprints.size).toBe(1);
    for (const k of kept) {
      const meta = JSON.parse(k.metadataJson);
      expect(meta.abi, k.op).toBe(2);
      expect(meta.split.units, k.op).toBeGreaterThanOrEqual(1);
    }
    const one = await loadModel(bytes, { gateway: GATEWAY, threads: 1, tuning: { budget: 0 }, store });
    expect(maxRelativeError(await firstOutput(one), expected)).toBeLessThanOrEqual(1e-4);
    const oneStats = one.stats();
    expect(oneStats.threads).toBe(1);
    expect(oneStats.ops.every((op) => !op.restored)).toBe(true); // one thread's device kind keeps its own kernels
    await one.close();
  });
});
