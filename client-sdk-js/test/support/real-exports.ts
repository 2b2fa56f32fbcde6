// The real exporter output in ../shared/models/real-exports (torch.onnx exports of Hugging Face
// architectures, onnxruntime's int8 / 4-bit / fp16 conversions): where it is, feeds for each file,
// (onnxruntime-web to compare with: ortOutputs in models.ts; the forms and their tolerances: tools/src/exports.ts).
import { existsSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-web";
import type { GraphInput } from "../../src/graph/onnx.js";
import { seededFloats } from "../../src/reference.js";

export { allowed, distance, formOf, fp32Sibling, ortLevel } from "../../tools/src/exports.js";

/** $JITZOO_REAL_EXPORTS, else `shared/models/real-exports` beside the repository. */
export const REAL_EXPORTS = process.env.JITZOO_REAL_EXPORTS
  ?? fileURLToPath(new URL("../../../../shared/models/real-exports", import.meta.url));

/** The `.onnx` files of a folder of real exports (`tiny` or `bench`), sorted; none when the folder is missing. */
export function realExports(folder: "tiny" | "bench"): string[] {
  const dir = join(REAL_EXPORTS, folder);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".onnx")).sort().map((f) => join(dir, f)) : [];
}

/** Tokens of the new positions. */
export const SEQ = 16;
/** Positions already in a KV-cache file's past. */
export const PAST = 4;

/**
 * Feeds for a real export: token ids below 500 (every vocabulary here has more), an attention
 * mask with the last two positions padded (all ones over past and new positions in a KV-cache
 * file), token types half 0 half 1, seeded pixels in [-1, 1), seeded past keys and values.
 */
export function realFeeds(inputs: readonly GraphInput[], seq = SEQ, past = PAST): Record<string, ort.Tensor> {
  const kv = inputs.some((i) => i.name.startsWith("past_key_values"));
  const ints = (n: number, f: (i: number) => number) => new ort.Tensor("int64", BigInt64Array.from({ length: n }, (_, i) => BigInt(f(i))), [1, n]);
  const feeds: Record<string, ort.Tensor> = {};
  inputs.forEach((input, k) => {
    const dims = input.dims.map((d, i) => (typeof d === "number" && d > 0 ? d : i === 0 ? 1 : /past/.test(String(d)) ? past : seq));
    if (input.name === "input_ids") feeds[input.name] = ints(seq, (i) => (i * 37 + 7) % 500);
    else if (input.name === "attention_mask") feeds[input.name] = kv ? ints(seq + past, () => 1) : ints(seq, (i) => (i < seq - 2 ? 1 : 0));
    else if (input.name === "token_type_ids") feeds[input.name] = ints(seq, (i) => (i < seq / 2 ? 0 : 1));
    else feeds[input.name] = new ort.Tensor("float32", seededFloats(dims.reduce((a, b) => a * b, 1), 100 + k), dims);
  });
  return feeds;
}

export const nameOf = (file: string): string => basename(file, ".onnx");
