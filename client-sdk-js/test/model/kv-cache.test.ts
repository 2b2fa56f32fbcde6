// withKvCache() on the real plain decoder exports: the rewritten file, run by onnxruntime-web and
// by jitzoo, gives the plain file's rows for the same tokens (a prompt, then one token a step with
// the presents fed back); generate() over it picks the tokens the plain file's whole-sequence loop
// picks; encoders and files it cannot take are refused by name.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import { withKvCache } from "../../src/graph/kv-cache.js";
import { decodeModel, ModelError } from "../../src/graph/onnx.js";
import { loadModel } from "../../src/load.js";
import { decoderLayout, generateTokens, lastLogits } from "../../src/model/generate.js";
import "../support/models.js"; // onnxruntime-web on one thread, quiet
import { REAL_EXPORTS, realExports } from "../support/real-exports.js";
import { ortStep } from "../../tools/src/exports.js";

const tiny = (name: string) => readFileSync(join(REAL_EXPORTS, "tiny", `${name}.onnx`));
const missing = realExports("tiny").length === 0;
const IDS = [5, 17, 250, 3, 99, 42, 7, 311];
const CHUNKS = [IDS.slice(0, 5), [IDS[5]], [IDS[6]], [IDS[7]]];

const i64 = (ids: readonly number[]) => new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);

/**
 * The largest differences between the cached file's rows, chunk after chunk, and the plain file's
 * over all the tokens; and between its logits and the plain file's tied head over its rows.
 */
async function cachedVsPlain(plain: Uint8Array, cached: Uint8Array): Promise<{ error: number; logitsError: number; presentDims: readonly number[] }> {
  const [p, c] = await Promise.all([ort.InferenceSession.create(plain), ort.InferenceSession.create(cached)]);
  try {
    const whole = (await p.run({ input_ids: i64(IDS), attention_mask: i64(IDS.map(() => 1)) })).last_hidden_state;
    const width = whole.dims.at(-1)!;
    const graph = decodeModel(cached), pasts = graph.inputs.filter((i) => i.name.startsWith("past_key_values."));
    // the first pasts, empty: float16 ones (a float16 file's) as onnxruntime-web takes them, their bits
    const empty = (name: string, dims: number[]) => (graph.half.has(name) ? new ort.Tensor("float16", new Uint16Array(0), dims) : new ort.Tensor("float32", new Float32Array(0), dims));
    let feeds: Record<string, ort.Tensor> = Object.fromEntries(pasts.map((i) => [i.name, empty(i.name, i.dims.map((d) => (typeof d === "number" ? d : 0)))]));
    // the plain file's head (its token embedding, in float64 here), where it has a float one
    const tied = graph.outputs.includes("logits") ? decoderLayout(decodeModel(plain)) : undefined;
    let at = 0, error = 0, logitsError = tied ? 0 : NaN, presentDims: readonly number[] = [];
    for (const chunk of CHUNKS) {
      const out = await c.run({ ...feeds, input_ids: i64(chunk), attention_mask: i64(new Array(at + chunk.length).fill(1)) });
      const got = out.last_hidden_state.data as Float32Array, want = (whole.data as Float32Array).subarray(at * width, (at + chunk.length) * width);
      expect(got).toHaveLength(want.length);
      want.forEach((w, k) => { error = Math.max(error, Math.abs(got[k] - w) / (1 + Math.abs(w))); });
      feeds = Object.fromEntries(pasts.map((i) => [i.name, out[i.name.replace("past_key_values", "present")]]));
      presentDims = out["present.0.key"].dims;
      at += chunk.length;
      // the file's own head (a Gemm the rewrite added): the last new token's logits
      if (!tied) continue;
      const head = lastLogits(tied, { last_hidden_state: { type: "float32", dims: [...out.last_hidden_state.dims], data: got } });
      expect(out.logits.dims).toEqual([1, head.length]);
      head.forEach((w, k) => { logitsError = Math.max(logitsError, Math.abs((out.logits.data as Float32Array)[k] - w) / (1 + Math.abs(w))); });
    }
    return { error, logitsError, presentDims };
  } finally {
    await Promise.all([p.release(), c.release()]);
  }
}

describe.skipIf(missing)("withKvCache() on real plain decoder exports", () => {
  it.each([
    ["gpt2", [1, 2, 8, 32], 1e-5],
    ["llama", [1, 1, 8, 32], 1e-5], // grouped-query: the cache holds the key/value heads, before their repeat
    ["qwen2", [1, 1, 8, 32], 1e-5],
    ["gpt_neox", [1, 2, 8, 32], 1e-5],
    ["opt", [1, 2, 8, 32], 1e-5], // positions from the attention mask's cumulative sum
    ["llama_q4", [1, 1, 8, 32], 1e-5],
    ["llama_fp16", [1, 1, 8, 32], 1e-3], // its cache float16, as the file's values are; no head added (a float16 embedding)
    ["gpt2_int8", [1, 2, 8, 32], 0.05], // each step quantizes its own rows (as an exporter's int8 KV file does)
  ] as const)("%s: the cached file's rows are the plain file's, on onnxruntime-web (to rounding)", async (name, dims, tolerance) => {
    const plain = tiny(name);
    const cached = withKvCache(plain);
    expect(decodeModel(cached).inputs.map((i) => i.name).slice(2)).toEqual(["0.key", "0.value", "1.key", "1.value"].map((k) => `past_key_values.${k}`));
    const { error, logitsError, presentDims } = await cachedVsPlain(plain, cached);
    expect(presentDims).toEqual(dims);
    expect(error).toBeLessThanOrEqual(tolerance);
    if (name === "gpt2_int8" || name === "llama_fp16") expect(logitsError).toBeNaN(); // an int8 or float16 token embedding: no float32 head to add
    else expect(logitsError).toBeLessThan(1e-5);
  });

  it.each(["gpt2", "llama"])("%s: jitzoo generates over the cached file the tokens onnxruntime-web picks over the plain one", async (name) => {
    const plain = tiny(name), cached = withKvCache(plain);
    expect(decoderLayout(decodeModel(cached)).head.kind).toBe("logits"); // the head is in the file: a product like the others
    const model = await loadModel(cached, { worker: false, store: null });
    const ours = await model.generate(IDS.slice(0, 5), { maxNewTokens: 12 });
    const session = await ort.InferenceSession.create(plain);
    try {
      const theirs = await generateTokens(decoderLayout(decodeModel(plain)), ortStep(session), IDS.slice(0, 5), { maxNewTokens: 12 });
      expect(ours.tokens).toEqual(theirs.tokens);
    } finally {
      await session.release();
    }
    // one token a step: the runs after the prompt's feed one row
    expect(model.stats().plans).toBeGreaterThan(1);
    expect(model.stats().kvCacheBytes).toBe(0);
  });

  it("refuses an encoder (not causal), a file with a cache already, and other inputs", () => {
    expect(() => withKvCache(tiny("distilbert"))).toThrow(new ModelError(
      "the model is not causal: its last_hidden_state for the first tokens changes with a later token (an encoder?); a KV cache would change its outputs"));
    expect(() => withKvCache(tiny("gpt2_kv"))).toThrow("the model already has a KV cache (past_key_values inputs)");
    expect(() => withKvCache(tiny("bert"))).toThrow("a KV cache is built around input_ids and attention_mask; the model also needs token_type_ids");
    expect(() => withKvCache(tiny("vit"))).toThrow(/a KV cache is built around a decoder with an input_ids input; the model has pixel_values/);
    expect(() => withKvCache(new Uint8Array([1, 2, 3]))).toThrow(/not an ONNX model/);
  });
});
