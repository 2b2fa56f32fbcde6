// The ONNX files harness/models/make_models.py writes (./jitzoo test writes them first), and
// onnxruntime-web to compare with.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-web";
import { seededFloats } from "../../src/reference.js";

/** Where the models are: $JITZOO_MODELS, else the repository's .jitzoo/models. */
export const MODELS_DIR = process.env.JITZOO_MODELS ?? fileURLToPath(new URL("../../../.jitzoo/models", import.meta.url));

/** True when the models were not written; the tests that need them then skip, unless JITZOO_MODELS says they must be there. */
export const modelsMissing = !existsSync(join(MODELS_DIR, "bert_layer.onnx"));
if (modelsMissing && process.env.JITZOO_MODELS) throw new Error(`JITZOO_MODELS=${MODELS_DIR} holds no models: run harness/models/make_models.py --out ${MODELS_DIR}`);

export const modelBytes = (name: string): Uint8Array => readFileSync(join(MODELS_DIR, name));

ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.logLevel = "error";

/** Feeds for a BERT-family model at sequence length `seq`: ids, a mask with two padded positions, token types, or hidden states. */
export function encoderFeeds(inputs: readonly string[], seq: number, hidden: number, seed = 11): Record<string, ort.Tensor> {
  const ids = (f: (i: number) => number) => new ort.Tensor("int64", BigInt64Array.from({ length: seq }, (_, i) => BigInt(f(i))), [1, seq]);
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of inputs) {
    if (name === "input_ids") feeds[name] = ids((i) => (i * 7919 + seed) % 30522);
    else if (name === "attention_mask") feeds[name] = ids((i) => (i < seq - 2 ? 1 : 0));
    else if (name === "token_type_ids") feeds[name] = ids((i) => (i < seq / 2 ? 0 : 1));
    else feeds[name] = new ort.Tensor("float32", seededFloats(seq * hidden, seed), [1, seq, hidden]);
  }
  return feeds;
}

/** onnxruntime-web's outputs (wasm, one thread) on a model file, at a level of its graph optimizations (default all). */
export async function ortOutputs(bytes: Uint8Array, feeds: Record<string, ort.Tensor>, level: "extended" | "all" = "all"): Promise<Record<string, Float32Array>> {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], graphOptimizationLevel: level });
  try {
    const out = await session.run(feeds);
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.data as Float32Array]));
  } finally {
    await session.release();
  }
}

/** max |a − b| / max(|b|, 1) (the SDK's kernel check, relative above 1, absolute below); equal infinities and NaNs agree. */
export function maxError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    if (a[i] === b[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i]))) continue; // infinities and NaNs where expected
    const e = Math.abs(a[i] - b[i]) / Math.max(Math.abs(b[i]), 1);
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : e;
  }
  return worst;
}
