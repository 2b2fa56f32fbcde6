// generate() on the real decoder exports: greedy tokens equal to the same loop over
// onnxruntime-web on the same file (KV-cache files fed their presents back, plain decoders the
// whole sequence), sampling reproducible by its seed, an abort that frees the cache, and bad
// input refused before any step runs. No gateway: every op on its reference kernel.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import { decodeModel, ModelError } from "../../src/graph/onnx.js";
import { loadModel } from "../../src/load.js";
import { decoderLayout, generateTokens, pickToken, type Step } from "../../src/model/generate.js";
import type { TensorLike } from "../../src/model/model.js";
import "../support/models.js"; // onnxruntime-web on one thread, quiet
import { REAL_EXPORTS, realExports } from "../support/real-exports.js";
import { distance, ortStep } from "../../tools/src/exports.js";

const tiny = (name: string) => join(REAL_EXPORTS, "tiny", `${name}.onnx`);
const missing = realExports("tiny").length === 0;
const PROMPT = [5, 17, 250, 3, 99];
const NEW = 16;

/** A step of onnxruntime-web over the same file. */
async function ortSession(bytes: Uint8Array): Promise<{ step: Step; release: () => Promise<void> }> {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  return { step: ortStep(session), release: () => session.release() };
}

describe.skipIf(missing)("generate() on real decoder exports", () => {
  it.each(["gpt2_kv", "llama_kv", "gpt2", "llama"])("%s: greedy and seeded tokens are onnxruntime-web's, step for step", async (name) => {
    const bytes = readFileSync(tiny(name));
    const model = await loadModel(bytes, { worker: false, store: null });
    const streamed: number[] = [];
    const ours = await model.generate(PROMPT, { maxNewTokens: NEW, onToken: (t, i) => { expect(i).toBe(streamed.length); streamed.push(t); } });
    // random weights and a tied head repeat a token greedily: a seeded draw walks varied ones, each step's cache another
    const sampled = await model.generate(PROMPT, { maxNewTokens: NEW, temperature: 1, seed: 3 });
    const ort = await ortSession(bytes);
    try {
      const layout = decoderLayout(decodeModel(bytes));
      expect(ours.tokens).toHaveLength(NEW);
      expect(ours.tokens).toEqual((await generateTokens(layout, ort.step, PROMPT, { maxNewTokens: NEW })).tokens);
      expect(sampled.tokens).toEqual((await generateTokens(layout, ort.step, PROMPT, { maxNewTokens: NEW, temperature: 1, seed: 3 })).tokens);
    } finally {
      await ort.release();
    }
    expect(new Set(sampled.tokens).size).toBeGreaterThan(NEW / 2);
    expect(streamed).toEqual(ours.tokens);
    expect(ours.finish).toBe("length");
    expect(model.stats().runs).toBe(2 * NEW);
    expect(model.stats().kvCacheBytes).toBe(0);
  });

  it("samples reproducibly by seed, and stops at a stop token", async () => {
    const model = await loadModel(readFileSync(tiny("gpt2_kv")), { worker: false, store: null });
    const sampling = { maxNewTokens: 12, temperature: 1.5, topK: 50, topP: 0.95 };
    const a = await model.generate(PROMPT, { ...sampling, seed: 7 });
    const b = await model.generate(PROMPT, { ...sampling, seed: 7 });
    const c = await model.generate(PROMPT, { ...sampling, seed: 8 });
    expect(b.tokens).toEqual(a.tokens);
    expect(c.tokens).not.toEqual(a.tokens);
    const greedy = await model.generate(PROMPT, { maxNewTokens: 12 });
    expect(a.tokens).not.toEqual(greedy.tokens); // temperature 1.5 over random weights: not the argmax path
    const stopped = await model.generate(PROMPT, { maxNewTokens: 12, stop: [greedy.tokens[3]] });
    expect(stopped.tokens).toEqual(greedy.tokens.slice(0, greedy.tokens.indexOf(greedy.tokens[3]) + 1));
    expect(stopped.finish).toBe("stop");
    expect((await model.generate(PROMPT, { maxNewTokens: 0 })).tokens).toEqual([]);
  });

  it("aborts between steps, freeing its cache", async () => {
    const model = await loadModel(readFileSync(tiny("llama_kv")), { worker: false, store: null });
    const controller = new AbortController();
    const held: number[] = [];
    const run = model.generate(PROMPT, {
      maxNewTokens: 20, signal: controller.signal,
      onToken: (_t, i) => {
        held.push(model.stats().kvCacheBytes);
        if (i === 3) controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    expect(held).toHaveLength(4);
    // [1, 1 head, past, 32] floats, key and value, 2 layers: grows by 512 bytes a token
    expect(held).toEqual([0, 1, 2, 3].map((i) => (PROMPT.length + i) * 32 * 4 * 4));
    expect(model.stats().kvCacheBytes).toBe(0);
    expect(model.stats().runs).toBe(4);
    await expect(model.generate(PROMPT, { signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
    expect(model.stats().runs).toBe(4);
  });

  it.each(["gpt2_kv", "llama_kv"])("%s: past lengths across buckets run the buckets' attention, onnxruntime-web's tokens", async (name) => {
    const bytes = readFileSync(tiny(name));
    const model = await loadModel(bytes, { worker: false, store: null });
    const prompt = Array.from({ length: 30 }, (_, i) => (i * 37 + 11) % 500), options = { maxNewTokens: 40, temperature: 1, seed: 5 };
    const ours = await model.generate(prompt, options);
    const ort = await ortSession(bytes);
    try {
      expect(ours.tokens).toEqual((await generateTokens(decoderLayout(decodeModel(bytes)), ort.step, prompt, options)).tokens);
    } finally {
      await ort.release();
    }
    // attention over 31 to 69 positions: the prompt's softmax, then the buckets of 32 (31, 32), 64 (33 to 64) and 96 (65 to 69)
    expect(model.stats().ops.filter((op) => op.key.startsWith("softmax|")).map((op) => op.op.shape[1]).sort((a, b) => a - b)).toEqual([30, 32, 64, 96]);
  });

  it("holds its cache in the model's memory: memory of the longest step, not of every length; a run after it feeds its own pasts", async () => {
    const bytes = readFileSync(tiny("llama_kv"));
    const model = await loadModel(bytes, { worker: false, store: null });
    const before = model.stats().memoryBytes;
    const first = await model.generate(PROMPT, { maxNewTokens: 60 });
    const grown = model.stats().memoryBytes - before;
    expect((await model.generate(PROMPT, { maxNewTokens: 60 })).tokens).toEqual(first.tokens);
    expect(model.stats().memoryBytes - before).toBe(grown); // the cache's block and the plans' activations taken again
    await model.generate(PROMPT, { maxNewTokens: 120 });
    // twice the length, at most about twice the memory (a plan per length with its own activations and
    // a copy of the cache grew it with the square of the length: 12 times for 200 tokens against 100)
    expect(model.stats().memoryBytes - before).toBeLessThanOrEqual(2.5 * grown);

    // run() with the cache fed by hand: its plans hold their pasts and presents themselves
    const layout = decoderLayout(decodeModel(bytes));
    const feeds: Record<string, TensorLike> = {
      input_ids: { data: BigInt64Array.from(PROMPT, BigInt), dims: [1, PROMPT.length] },
      attention_mask: { data: new BigInt64Array(PROMPT.length).fill(1n), dims: [1, PROMPT.length] },
      ...Object.fromEntries(layout.cache.map((c) => [c.past, { data: new Float32Array(0), dims: [1, c.heads, 0, c.headDim] }])),
    };
    const ours = await model.run(feeds);
    const ort = await ortSession(bytes);
    try {
      const theirs = await ort.step(feeds);
      expect(model.outputNames).toEqual(expect.arrayContaining(layout.cache.map((c) => c.present)));
      for (const name of model.outputNames) {
        const { worst, largest } = distance(ours[name].data as Float32Array, theirs[name].data as Float32Array);
        expect(worst, name).toBeLessThanOrEqual(1e-4 * Math.max(1, largest));
      }
    } finally {
      await ort.release();
    }
  });

  it("refuses bad input before any step runs", async () => {
    const bytes = readFileSync(tiny("gpt2_kv"));
    const model = await loadModel(bytes, { worker: false, store: null });
    await expect(model.generate(PROMPT, { stop: [512] })).rejects.toThrow("stop token 512 is not a token id of this model (0 to 511)");
    await expect(model.generate([1, 600])).rejects.toThrow("prompt token 600 is not a token id of this model (0 to 511)");
    await expect(model.generate([])).rejects.toThrow("at least one token id");
    await expect(model.generate(PROMPT, { topP: 0 })).rejects.toThrow("topP must be above 0");
    await expect(model.generate(PROMPT, { maxNewTokens: -1 })).rejects.toThrow(ModelError);
    // GPT-2's learned positions: 1024 rows
    await expect(model.generate(PROMPT, { maxNewTokens: 1020 })).rejects.toThrow("a prompt of 5 tokens and 1020 new ones need 1025 positions; the model has 1024");
    expect(model.stats().runs).toBe(0);

    // a KV-cache file whose past input has no present output to feed it
    const graph = decodeModel(bytes);
    const orphan = { ...graph, outputs: graph.outputs.filter((o) => o !== "present.1.value") };
    expect(() => decoderLayout(orphan)).toThrow("input past_key_values.1.value has no present.1.value output to feed it from");
    // an encoder of images has no token ids
    const vit = await loadModel(readFileSync(tiny("vit")), { worker: false, store: null });
    await expect(vit.generate(PROMPT)).rejects.toThrow("generate() needs an input_ids input");
  });
});

describe("the next token", () => {
  it("is the first most likely greedily, and a seeded draw within top-k and top-p when sampling", () => {
    const logits = Float64Array.from([1, 3, 3, -2, 0.5]);
    expect(pickToken(logits, {}, () => 0.5)).toBe(1);
    // top-k 2 keeps tokens 1 and 2 (equal): a draw below one half picks the first, above it the second
    expect(pickToken(logits, { temperature: 1, topK: 2 }, () => 0.25)).toBe(1);
    expect(pickToken(logits, { temperature: 1, topK: 2 }, () => 0.75)).toBe(2);
    // top-p 0.3: the most likely token alone reaches it
    expect(pickToken(logits, { temperature: 1, topP: 0.3 }, () => 0.99)).toBe(1);
    // a high temperature flattens: the draw reaches the least likely token
    expect(pickToken(logits, { temperature: 100 }, () => 0.999)).toBe(3);
  });
});
