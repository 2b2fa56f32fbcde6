import { embeddings } from "../graph/embeddings.js";
import { ModelError, type OnnxGraph } from "../graph/onnx.js";
import type { HostTensor } from "../graph/tensor.js";
import { seededRandom } from "../reference.js";
import type { OutputTensor, TensorLike } from "./model.js";

// Text generation over a decoder file as exporters write it: token ids in, the next token picked
// from the last position's logits, step after step. A KV-cache file (`past_key_values.N.key/value`
// in, `present.N.key/value` out) is fed its own presents back as the next step's pasts and one new
// token; a plain decoder, the whole sequence each step. Token ids only: tokenizers are the app's.

/** What `generate()` takes besides the prompt. Greedy unless `temperature` is above 0. */
export interface GenerateOptions {
  /** New tokens at most (default 32). */
  maxNewTokens?: number;
  /** Token ids that end the generation (the one met is the last token returned). */
  stop?: readonly number[];
  /** Sampling temperature: 0 (the default) picks the most likely token (greedy). */
  temperature?: number;
  /** Sampling keeps the k most likely tokens only (0: all). */
  topK?: number;
  /** Sampling keeps the most likely tokens whose probabilities sum to p (nucleus; 1: all). */
  topP?: number;
  /** Seed of the sampling's random numbers: the same seed, prompt and model give the same tokens. */
  seed?: number;
  /** Called with each new token as it is picked (streaming). */
  onToken?: (token: number, index: number) => void;
  /** Aborts the generation between steps: the call rejects with the signal's reason, its cache freed. */
  signal?: AbortSignal;
}

/** What `generate()` returns. */
export interface GenerateResult {
  /** The new token ids, in order (the prompt not included). */
  tokens: number[];
  /** Why it ended: `stop` (a stop token), `length` (maxNewTokens). */
  finish: "stop" | "length";
  /** Milliseconds of the first step (the prompt's), and of the rest (one token each). */
  prefillMs: number;
  decodeMs: number;
  /** Tokens per second of the steps after the first (NaN when there were none). */
  decodeTokensPerSecond: number;
}

/** One past input fed back from its present output, with its [batch, heads, past, headDim] layout. */
interface CacheEntry {
  past: string;
  present: string;
  heads: number;
  headDim: number;
}

/** Where the logits come from: an output that is logits, or the last hidden state times the tied token embedding. */
type Head =
  | { kind: "logits"; output: string }
  | { kind: "tied"; output: string; embedding: Float32Array; vocab: number; hidden: number };

/** How a decoder file is driven: its token, mask and cache inputs and outputs, found by name, and its head. */
export interface DecoderLayout {
  readonly ids: string;
  readonly mask?: string;
  readonly cache: readonly CacheEntry[];
  readonly head: Head;
  /** Tokens the head scores. */
  readonly vocab: number;
  /** Positions the model has (a learned position table's rows; Infinity where none is found, as with rotary positions). */
  readonly positions: number;
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;

/**
 * The layout of a decoder: `input_ids`, `attention_mask` (optional), every
 * `past_key_values.N.key/value` paired with its `present.N.key/value` output; logits from a
 * `logits` output, else from `last_hidden_state` times the token embedding (the matrix
 * `input_ids` gathers from: the tied head of GPT-2 and of every file exported without one).
 * Throws a ModelError saying what is missing.
 */
export function decoderLayout(graph: OnnxGraph): DecoderLayout {
  const inputs = new Map(graph.inputs.map((i) => [i.name, i]));
  const ids = inputs.get("input_ids");
  if (!ids) throw new ModelError(`generate() needs an input_ids input; the model has ${graph.inputs.map((i) => i.name).join(", ")}`);
  const cache: CacheEntry[] = [];
  for (const input of graph.inputs) {
    const m = PAST.exec(input.name);
    if (!m) continue;
    const present = `present.${m[1]}.${m[2]}`;
    if (!graph.outputs.includes(present)) throw new ModelError(`input ${input.name} has no ${present} output to feed it from (outputs: ${graph.outputs.join(", ")})`);
    const [, heads, , headDim] = input.dims;
    if (input.dims.length !== 4 || typeof heads !== "number" || typeof headDim !== "number") {
      throw new ModelError(`input ${input.name} is not [batch, heads, past, head size] with fixed heads and head size: [${input.dims}]`);
    }
    cache.push({ past: input.name, present, heads, headDim });
  }
  const others = graph.inputs.filter((i) => i.name !== "input_ids" && i.name !== "attention_mask" && !PAST.test(i.name));
  if (others.length) throw new ModelError(`generate() feeds input_ids, attention_mask and past_key_values.N.*; the model also needs ${others.map((i) => i.name).join(", ")}`);
  const tables = embeddings(graph);
  const head = headOf(graph, tables.tokens);
  // a learned position table as wide as the tokens' (GPT-2's wpe): its rows are the positions there are
  const positions = tables.others.find((t) => t.shape[1] === tables.tokens?.shape[1])?.shape[0] ?? Infinity;
  return { ids: ids.name, mask: inputs.has("attention_mask") ? "attention_mask" : undefined, cache, head, vocab: head.kind === "tied" ? head.vocab : tables.tokens?.shape[0] ?? NaN, positions };
}

function headOf(graph: OnnxGraph, tokens: HostTensor | undefined): Head {
  if (graph.outputs.includes("logits")) return { kind: "logits", output: "logits" };
  const output = graph.outputs.includes("last_hidden_state") ? "last_hidden_state" : graph.outputs[0];
  if (!tokens) throw new ModelError("generate() needs a logits output, or a float token embedding that input_ids gathers from (its tied head); this model has neither");
  return { kind: "tied", output, embedding: tokens.data as Float32Array, vocab: tokens.shape[0], hidden: tokens.shape[1] };
}

/** The logits of the last position of a step's outputs, in float64. */
export function lastLogits(layout: DecoderLayout, outputs: Readonly<Record<string, OutputTensor>>): Float64Array {
  const head = layout.head;
  const out = outputs[head.output];
  const last = out.dims.at(-1)!;
  const data = out.data as Float32Array;
  const row = data.subarray(data.length - last);
  if (head.kind === "logits") return Float64Array.from(row);
  if (last !== head.hidden) throw new ModelError(`${head.output} has ${last} values a position; the token embedding ${head.hidden}`);
  const logits = new Float64Array(head.vocab);
  for (let v = 0, at = 0; v < head.vocab; v++, at += last) {
    let sum = 0;
    for (let j = 0; j < last; j++) sum += row[j] * head.embedding[at + j];
    logits[v] = sum;
  }
  return logits;
}

/**
 * The next token: the first most likely one (greedy, temperature 0), else one drawn from
 * softmax(logits / temperature) over the top-k tokens, then the smallest set of the most likely
 * whose probabilities reach top-p.
 */
export function pickToken(logits: Float64Array, o: Pick<GenerateOptions, "temperature" | "topK" | "topP">, next: () => number): number {
  const temperature = o.temperature ?? 0;
  if (temperature === 0) {
    let best = 0;
    for (let v = 1; v < logits.length; v++) if (logits[v] > logits[best]) best = v;
    return best;
  }
  const order = [...logits.keys()].sort((a, b) => logits[b] - logits[a] || a - b);
  const kept = order.slice(0, o.topK ? Math.min(o.topK, order.length) : order.length);
  const top = logits[kept[0]];
  const weights = kept.map((v) => Math.exp((logits[v] - top) / temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  const topP = o.topP ?? 1;
  let count = 0;
  for (let mass = 0; count < kept.length && (count === 0 || mass < topP * total);) mass += weights[count++];
  const sum = weights.slice(0, count).reduce((a, b) => a + b, 0);
  let u = next() * sum;
  for (let i = 0; i < count; i++) {
    u -= weights[i];
    if (u < 0) return kept[i];
  }
  return kept[count - 1];
}

/** Checks a generation's prompt and options against the model before any step runs; returns its most new tokens. */
function check(layout: DecoderLayout, prompt: readonly number[], o: GenerateOptions): number {
  const vocab = layout.vocab;
  const token = (t: number) => Number.isInteger(t) && t >= 0 && !(t >= vocab);
  if (prompt.length === 0) throw new ModelError("generate() needs a prompt of at least one token id");
  const bad = prompt.find((t) => !token(t));
  if (bad !== undefined) throw new ModelError(`prompt token ${bad} is not a token id of this model (0 to ${vocab - 1})`);
  const stop = (o.stop ?? []).find((t) => !token(t));
  if (stop !== undefined) throw new ModelError(`stop token ${stop} is not a token id of this model (0 to ${vocab - 1})`);
  const max = o.maxNewTokens ?? 32;
  if (!Number.isInteger(max) || max < 0) throw new ModelError(`maxNewTokens must be a whole number, got ${max}`);
  if (o.temperature !== undefined && !(o.temperature >= 0)) throw new ModelError(`temperature must be 0 or more, got ${o.temperature}`);
  if (o.topK !== undefined && !(Number.isInteger(o.topK) && o.topK >= 0)) throw new ModelError(`topK must be a whole number, got ${o.topK}`);
  if (o.topP !== undefined && !(o.topP > 0 && o.topP <= 1)) throw new ModelError(`topP must be above 0 and at most 1, got ${o.topP}`);
  if (prompt.length + max > layout.positions) {
    throw new ModelError(`a prompt of ${prompt.length} tokens and ${max} new ones need ${prompt.length + max} positions; the model has ${layout.positions}`);
  }
  return max;
}

/** A step of the model: feeds in, outputs out (a model's `run`). */
export type Step = (feeds: Record<string, TensorLike>) => Promise<Readonly<Record<string, OutputTensor>>>;

/**
 * Where a generation's KV cache is kept between steps. By default each step's presents come back
 * to JavaScript and are fed as the next step's pasts; a model may hold the cache in its own
 * memory instead (`hold`), and then steps are fed the pasts' shapes alone and their presents are
 * not read.
 */
export interface CacheHost {
  /** Told the bytes the cache holds after each step, and 0 once the call ends (however it ends). */
  bytes?(bytes: number): void;
  /** Takes a cache of `rows` positions into the model's memory; true when it did. */
  hold?(rows: number): boolean;
  /** The call ended: a held cache is freed. */
  release?(): void;
}

/** A past fed while the model holds the cache: its shape alone. */
const NO_VALUES = new Float32Array(0);

/**
 * Generates over `step`: the prompt first, then one token a step with the cache fed back (or the
 * whole sequence, for a plain decoder), until a stop token or `maxNewTokens`.
 */
export async function generateTokens(layout: DecoderLayout, step: Step, prompt: readonly number[], o: GenerateOptions = {},
  host: CacheHost = {}): Promise<GenerateResult> {
  const max = check(layout, prompt, o), stop = new Set(o.stop ?? []);
  o.signal?.throwIfAborted();
  const next = seededRandom(o.seed ?? 0);
  const tokens: number[] = [];
  const pasts = (rows: number, from?: Readonly<Record<string, OutputTensor>>): Record<string, TensorLike> =>
    Object.fromEntries(layout.cache.map((c) => [c.past, from?.[c.present] ?? { data: NO_VALUES, dims: [1, c.heads, rows, c.headDim] }]));
  const held = layout.cache.length > 0 && (host.hold?.(prompt.length + max) ?? false);
  let cache = pasts(0), past = 0, prefillMs = 0, decodeMs = 0;
  let finish: GenerateResult["finish"] = "length";
  try {
    while (tokens.length < max) {
      const t0 = performance.now();
      const fed = layout.cache.length ? (past === 0 ? prompt : tokens.slice(-1)) : [...prompt, ...tokens];
      const total = layout.cache.length ? past + fed.length : fed.length;
      const feeds: Record<string, TensorLike> = { ...cache, [layout.ids]: { data: BigInt64Array.from(fed, BigInt), dims: [1, fed.length] } };
      if (layout.mask) feeds[layout.mask] = { data: new BigInt64Array(total).fill(1n), dims: [1, total] };
      const outputs = await step(feeds);
      const token = pickToken(lastLogits(layout, outputs), o, next);
      if (layout.cache.length) {
        cache = pasts(total, held ? undefined : outputs);
        past = total;
        host.bytes?.(layout.cache.reduce((sum, c) => sum + (held ? c.heads * total * c.headDim * 4 : (outputs[c.present].data as Float32Array).byteLength), 0));
      }
      const ms = performance.now() - t0;
      if (tokens.length === 0) prefillMs = ms;
      else decodeMs += ms;
      tokens.push(token);
      o.onToken?.(token, tokens.length - 1);
      if (stop.has(token)) {
        finish = "stop";
        break;
      }
      o.signal?.throwIfAborted();
    }
  } finally {
    if (held) host.release?.();
    host.bytes?.(0);
  }
  const decoded = tokens.length - 1;
  return { tokens, finish, prefillMs, decodeMs, decodeTokensPerSecond: decoded > 0 ? decoded / (decodeMs / 1000) : NaN };
}
