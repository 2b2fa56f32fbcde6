import { median } from "../timing.js";
import type { Model, ModelStats, TensorLike } from "./model.js";

/**
 * Drives a model as an app would for the CLI and the benchmarks: inputs of a BERT-family shape,
 * runs until tuning settles, and the figures of what that took.
 */

/** "Near" the final latency: within 5%. */
export const NEAR_FINAL = 0.05;

/**
 * Inputs for a model at sequence length `seq`: a symbolic dimension named like a batch is 1, any
 * other symbolic one is `seq`; token ids are small (valid for any vocabulary of 1000 or more),
 * `attention_mask` is all ones but the last two positions, `token_type_ids` zeros then ones,
 * float inputs deterministic values in [-1, 1).
 */
export function feedsFor(model: Pick<Model, "inputs">, seq: number): Record<string, TensorLike> {
  const feeds: Record<string, TensorLike> = {};
  for (const input of model.inputs) {
    const dims = input.dims.map((d) => (typeof d === "number" && d > 0 ? d : /batch/i.test(String(d)) ? 1 : seq));
    const size = dims.reduce((a, b) => a * b, 1);
    const at = (i: number) => i % dims[dims.length - 1];
    let data: Float32Array | BigInt64Array;
    if (input.dtype === "float32") data = Float32Array.from({ length: size }, (_, i) => Math.sin(i * 0.37));
    else if (/attention_mask/i.test(input.name)) data = BigInt64Array.from({ length: size }, (_, i) => (at(i) < seq - 2 ? 1n : 0n));
    else if (/token_type/i.test(input.name)) data = BigInt64Array.from({ length: size }, (_, i) => (at(i) < seq / 2 ? 0n : 1n));
    else data = BigInt64Array.from({ length: size }, (_, i) => BigInt((i * 7919 + 101) % 1000));
    feeds[input.name] = { data, dims };
  }
  return feeds;
}

/** How long {@link runUntilSettled} may go on. */
export interface DriveLimits {
  /** Most runs (default 5000). */
  maxRuns?: number;
  /** Most seconds (default 300). */
  maxSeconds?: number;
  /** Called after every run. */
  onRun?: (run: number, stats: ModelStats) => void;
  /** Stops between runs when aborted: the model is closed and the signal's reason thrown. */
  signal?: AbortSignal;
}

/** Runs the model on `feeds` until every op settles (or a limit), then waits for the reports. */
export async function runUntilSettled(model: Model, feeds: Record<string, TensorLike>, limits: DriveLimits = {}): Promise<ModelStats> {
  const { maxRuns = 5000, maxSeconds = 300 } = limits;
  const deadline = performance.now() + maxSeconds * 1000;
  try {
    for (let r = 0; r < maxRuns && performance.now() < deadline; r++) {
      limits.signal?.throwIfAborted();
      await model.run(feeds);
      const stats = model.stats();
      limits.onRun?.(r, stats);
      if (stats.settled) break;
    }
  } finally {
    await model.close();
  }
  return model.stats();
}

/**
 * Whether every op runs a kernel the gateway served (or refused the one it was served and keeps
 * its own), and no step waits for a uKernel plan: a model's first runs are on its generic and
 * reference kernels, swapped once the Welcome's are checked (a new length's MatMuls, once their
 * uKernel plan has come).
 */
export const onServedKernels = (stats: ModelStats): boolean =>
  stats.interimSteps === 0 && stats.ops.every((op) => op.source === "wasm" || op.source === "wgsl" || op.refused > 0);

/**
 * Runs the model on `feeds` until its stats say `done`, at most `maxSeconds`, a turn apart (for
 * what is checked in the background: the Welcome's kernels, the kept ones); returns the last run's
 * outputs and stats.
 */
export async function runUntil(model: Model, feeds: Record<string, TensorLike>, done: (stats: ModelStats) => boolean, maxSeconds = 60) {
  const deadline = performance.now() + maxSeconds * 1000;
  for (;;) {
    const outputs = await model.run(feeds);
    const stats = model.stats();
    if (done(stats) || performance.now() > deadline) return { outputs, stats };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runs the model until every op runs the gateway's kernel ({@link onServedKernels}): for the
 * benches and tests that time or check the served kernels rather than the first inference.
 */
export const runUntilServed = (model: Model, feeds: Record<string, TensorLike>, maxSeconds = 60) =>
  runUntil(model, feeds, onServedKernels, maxSeconds);

/** What tuning did to the whole model, from its run timeline. */
export interface Convergence {
  /** Inference of the first run, ms (the first call of every kernel checked there). */
  firstRunMs: number;
  /** Median inference of the last runs, ms. */
  finalMs: number;
  /** Milliseconds from the first run until the model stayed within {@link NEAR_FINAL} of its final latency (3 runs' median). */
  nearFinalAfterMs: number;
  /** Runs until then. */
  nearFinalAfterRuns: number;
  /** Tuning time over inference time, over all runs. */
  tuningShare: number;
  runs: number;
}

export function convergence(stats: ModelStats): Convergence {
  const t = stats.timeline;
  const tail = t.slice(-Math.max(5, Math.min(20, Math.floor(t.length / 5))));
  const finalMs = median(tail.map((r) => r.inferMs));
  let near = t.length - 1;
  for (let i = 0; i + 2 < t.length; i++) {
    if (median(t.slice(i, i + 3).map((r) => r.inferMs)) <= (1 + NEAR_FINAL) * finalMs) {
      near = i;
      break;
    }
  }
  const infer = t.reduce((s, r) => s + r.inferMs, 0), tune = t.reduce((s, r) => s + r.tuneMs, 0);
  return {
    firstRunMs: t[0]?.inferMs ?? NaN, finalMs, nearFinalAfterMs: t[near]?.atMs ?? NaN, nearFinalAfterRuns: near,
    tuningShare: tune / infer, runs: t.length,
  };
}
