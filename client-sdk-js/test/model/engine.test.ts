import { describe, expect, it } from "vitest";
import { loadModel } from "../../src/load.js";
import { encoderFeeds, maxError, modelBytes, modelsMissing, ortOutputs } from "../support/models.js";

/** Largest error against onnxruntime-web allowed on a whole model (both in float32, summed in different orders). */
const MODEL_TOLERANCE = 1e-4;

describe.skipIf(modelsMissing)("engine: whole BERT-family models against onnxruntime-web", () => {
  it("runs a BERT-base layer as 8 distinct jitzoo ops, for each sequence length it is fed", async () => {
    const bytes = modelBytes("bert_layer.onnx");
    const model = await loadModel(bytes);
    for (const seq of [16, 9]) {
      const feeds = encoderFeeds(model.inputNames, seq, 768);
      const [ours, theirs] = [await model.run(feeds), await ortOutputs(bytes, feeds)];
      const [name] = model.outputNames;
      expect(ours[name].dims).toEqual([1, seq, 768]);
      expect(maxError(ours[name].data as Float32Array, theirs[name])).toBeLessThan(MODEL_TOLERANCE);
    }
    const stats = model.stats();
    expect(stats.plans).toBe(2);
    expect(stats.runs).toBe(2);
    expect(stats.ops.filter((o) => o.key.includes("|9x")).map((o) => o.key)).toEqual([
      "matmul|9x768x768|bias", "matmul|9x768x768|bias,residual", "layer_norm|9x768|epsilon=1.0E-12",
      "matmul|9x768x3072|bias,gelu_erf", "matmul|9x3072x768|bias,residual",
    ]);
    expect(stats.ops.find((o) => o.key === "matmul|16x768x768|bias")?.instances).toBe(3); // Q, K, V
    expect(stats.ops.some((o) => o.key === "batch_matmul|12x16x64x16|transposeB|scale:0.125,residual")).toBe(true);
    // no gateway: the products on the SDK's generic kernels, the rest on the reference
    expect(stats.ops.every((o) => o.source === (/matmul/.test(o.key) ? "generic" : "reference"))).toBe(true);
    expect(stats.notes[0]).toMatch(/no gateway/);
    expect(stats.clock.name).toBe("performance.now"); // the stats say which clock times kernels
    expect(stats.clock.resolutionMs).toBeGreaterThan(0);
  });

  it("runs a 6-layer MiniLM-shaped encoder with embeddings", async () => {
    const bytes = modelBytes("minilm.onnx");
    const model = await loadModel(bytes);
    const feeds = encoderFeeds(model.inputNames, 12, 384);
    const [ours, theirs] = [await model.run(feeds), await ortOutputs(bytes, feeds)];
    const [name] = model.outputNames;
    expect(maxError(ours[name].data as Float32Array, theirs[name])).toBeLessThan(MODEL_TOLERANCE);
    const stats = model.stats();
    expect(stats.ops.find((o) => o.key.startsWith("layer_norm"))?.instances).toBe(13); // embeddings + 2 per layer
    expect(stats.ops.find((o) => o.key.startsWith("softmax"))?.instances).toBe(6);
  });
});
