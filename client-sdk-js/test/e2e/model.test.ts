// (e) A model through every part: a BERT-base layer tunes while it infers (gateway → space →
// codegen, reports → Kafka → zoo), every op's report is stored and elected, and a second device
// of the same kind starts every op from the zoo, its outputs still those of the reference kernels.
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { feedsFor, runUntilServed, runUntilSettled } from "../../src/model/drive.js";
import { loadModel } from "../../src/load.js";
import { type Model } from "../../src/model/model.js";
import { modelBytes, modelsMissing } from "../support/models.js";
import { GATEWAY, zooGet } from "./support.js";
import { maxRelativeError } from "../../src/reference.js";

/** A short sequence keeps every op small, and a whole budget tunes it in seconds. */
const SEQ = 8;

async function firstOutput(model: Model, seq: number): Promise<Float32Array> {
  const out = await model.run(feedsFor(model, seq));
  return Object.values(out)[0].data as Float32Array;
}

describe.skipIf(!GATEWAY || modelsMissing)("a model through the suite", () => {
  it("tunes every op, stores every op's report, and a second device starts every op from the zoo", async () => {
    const bytes = modelBytes("bert_layer.onnx");
    const expected = await firstOutput(await loadModel(bytes), SEQ); // the SDK's generic and reference kernels, no gateway

    const fingerprint = `e2e-model-${randomUUID()}`;
    const first = await loadModel(bytes, { gateway: GATEWAY, fingerprint, tuning: { budget: 1 } });
    const tuned = await runUntilSettled(first, feedsFor(first, SEQ), { maxSeconds: 90 });
    expect(tuned.notes).toEqual([]);
    expect(tuned.settled).toBe(true);
    expect(tuned.ops.length).toBe(8);
    for (const op of tuned.ops) {
      expect(op.source, op.key).toBe("wasm");
      expect(op.refused, op.key).toBe(0);
    }
    expect(tuned.ops.some((op) => op.history.length > 1)).toBe(true); // some op found a faster kernel than the default
    expect(maxRelativeError(await firstOutput(first, SEQ), expected)).toBeLessThanOrEqual(1e-4);

    // every op's report reaches the zoo (asynchronously, through Kafka): a second device finds every op elected
    let second: Model | undefined;
    for (const deadline = Date.now() + 30_000; ;) {
      second = await loadModel(bytes, { gateway: GATEWAY, fingerprint, tuning: { budget: 0 } });
      // its first runs are on the generic kernels: the Welcome's (the zoo's) once checked
      const { outputs, stats } = await runUntilServed(second, feedsFor(second, SEQ));
      const out = Object.values(outputs)[0].data as Float32Array;
      if (stats.ops.every((op) => op.fromZoo) || Date.now() > deadline) {
        expect(stats.ops.filter((op) => !op.fromZoo).map((op) => op.key)).toEqual([]);
        expect(stats.ops.every((op) => op.source === "wasm")).toBe(true);
        expect(maxRelativeError(out, expected)).toBeLessThanOrEqual(1e-4);
        break;
      }
      await second.close();
      await new Promise((r) => setTimeout(r, 500));
    }
    await second.close();
    const count = await zooGet(`/api/v1/reports/count?fingerprint=${fingerprint}`);
    expect(Number(count.body.count)).toBeGreaterThanOrEqual(8);
  });

  it("runs the MatMuls and layer_norms of a sequence length it has not seen on the space's uKernel plan: none of them per length", async () => {
    const bytes = modelBytes("bert_layer.onnx");
    const reference = await loadModel(bytes);
    const model = await loadModel(bytes, { gateway: GATEWAY, fingerprint: `e2e-dynamic-${randomUUID()}`, tuning: { budget: 0 } });
    const matmulKeys = () => model.stats().ops.filter((op) => op.op.shape.length === 3 && op.key.startsWith("matmul")).map((op) => op.key);
    await firstOutput(model, SEQ);
    const exact = matmulKeys();
    expect(exact).toHaveLength(4);
    // the first new length does not wait for the uKernel plans: its MatMuls and layer_norms run their generic kernels meanwhile
    expect(maxRelativeError(await firstOutput(model, SEQ - 3), await firstOutput(reference, SEQ - 3))).toBeLessThanOrEqual(1e-4);
    expect([model.stats().dynamicSteps, model.stats().interimSteps]).toEqual([0, 8]);
    await vi.waitFor(async () => {
      await firstOutput(model, SEQ - 3);
      expect(model.stats().dynamicSteps).toBe(8);
    }, { timeout: 60_000, interval: 200 });
    for (const seq of [SEQ - 3, SEQ + 5, SEQ + 2]) {
      const out = await firstOutput(model, seq);
      expect(maxRelativeError(out, await firstOutput(reference, seq)), `sequence ${seq}`).toBeLessThanOrEqual(1e-4);
      expect(model.stats().dynamicSteps, `sequence ${seq}`).toBe(8); // QKV, the output projection, the two FFN MatMuls, two layer_norms
    }
    expect(model.stats().notes).toEqual([]);
    const { stats } = await runUntilServed(model, feedsFor(model, SEQ + 2)); // a new length's uKernels start on the generic kernels
    expect(stats.ops.every((op) => op.source === "wasm")).toBe(true);
    // uKernels of a few row counts (the first length's own kernels when the rows agree), never a MatMul or layer_norm of a new length
    const keys = model.stats().ops.map((op) => op.key);
    expect(keys.filter((key) => key.startsWith(`matmul|${SEQ}x`))).toHaveLength(4);
    for (const seq of [SEQ - 3, SEQ + 5, SEQ + 2]) expect(keys.filter((key) => new RegExp(`^(matmul|layer_norm)\\|${seq}x`).test(key)), `sequence ${seq}`).toEqual([]);
    await model.close();
  });
});
