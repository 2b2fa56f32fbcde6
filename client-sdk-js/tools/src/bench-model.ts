#!/usr/bin/env node
// ./jitzoo bench model: whole models on jitzoo kernels, in Node on one thread, against
// onnxruntime-web (wasm, one thread) on the same ONNX file. For each model: a new device kind
// tunes it while it infers (fresh zoo: how long until within 5% of its final latency, what the
// tuning cost each run, memory); a second device of that kind starts from the zoo (its first
// inference); the initial kernels untuned; then tuned, untuned and onnxruntime-web timed with
// their calls interleaved, and their outputs compared.
import "@jitzoo/client/node";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as ort from "onnxruntime-web";
import { parseOptions, wholeNumber } from "./args.js";
import { distance, formOf, ortLevel, relativeTolerance, toOrt, type Form } from "./exports.js";
import { interleaved } from "./interleave.js";
import { convergence, feedsFor, NEAR_FINAL, runUntilSettled, runUntilServed, loadModel, type Model, type ModelStats, type OutputTensor, type TensorLike, DEFAULT_TUNING, maxRelativeError } from "@jitzoo/client/internal";

const MODELS = ["bert_layer.onnx", "minilm.onnx"];
/** Outputs must agree with onnxruntime-web's within this (relative above 1, absolute below). */
/** How long a second device waits for the zoo to elect the first one's kernels. */
const ZOO_WAIT_MS = 60_000;

const usage = `usage: bench-model [--models DIR] [--only NAME,...] [--seq N] [--rounds N] [--lengths N,N,...] [--threads N] [--json]
  --models   directories of the ONNX files, comma-separated (default: $JITZOO_MODELS, else
             .jitzoo/models): ${MODELS.join(" and ")} where one has them, else every .onnx file
             in them (../shared/models/real-exports/bench: the MiniLM-shaped encoder fp32 and
             int8; .jitzoo/forms: its 4-bit and fp16 forms, from harness/models/make_forms.py)
  --only     only the files whose names contain one of these (minilm,int8)
  --seq      sequence length (default 128)
  --rounds   interleaved rounds of the final comparison (default 20)
  --lengths  other sequence lengths, each timed on uKernel plans, with a kernel per length and in
             onnxruntime-web, interleaved (default 32,77,100,200; "none" leaves them out)
  --threads  threads of jitzoo's kernels (split for them, on the SDK's worker pool) and of
             onnxruntime-web's (default 1)`;
/** Interleaved rounds at each of the other lengths. */
const LENGTH_ROUNDS = 7;

interface Options {
  dirs: string[];
  only: string[];
  seq: number;
  rounds: number;
  lengths: number[];
  threads: number;
  json: boolean;
  url: string;
}

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    json: { type: "boolean", default: false },
    models: { type: "string", default: process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models") },
    only: { type: "string", default: "" },
    seq: { type: "string", default: "128" },
    rounds: { type: "string", default: "20" },
    lengths: { type: "string", default: "32,77,100,200" },
    threads: { type: "string", default: "1" },
  } }, usage);
  const lengths = v.lengths === "none" ? [] : v.lengths.split(",").map(Number);
  if (!lengths.every((n) => Number.isInteger(n) && n > 0 && n <= 512)) throw new Error(`--lengths must be lengths from 1 to 512, comma-separated, or none\n${usage}`);
  return {
    dirs: v.models.split(",").filter(Boolean), only: v.only.split(",").filter(Boolean), seq: wholeNumber("seq", v.seq, usage), rounds: wholeNumber("rounds", v.rounds, usage), lengths, json: v.json,
    threads: wholeNumber("threads", v.threads, usage),
    url: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const threadsOf = (n: number) => (n === 1 ? "1 thread" : `${n} threads`);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

type Outputs = Record<string, OutputTensor>;
type OrtOutputs = ort.InferenceSession.OnnxValueMapType;

/**
 * How far our outputs are from onnxruntime-web's, in the form's measure: a float32 file's as the
 * kernels are judged (the largest relative error, element by element); a quantized or float16
 * file's as its tolerance is stated, the largest difference over the output's largest magnitude
 * (exports.ts, `allowed`), since a float16 ulp is 1e-3 of any element it rounds.
 */
function worstError(ours: Outputs, theirs: OrtOutputs, form: Form): number {
  return Math.max(...Object.entries(theirs).map(([name, t]) => {
    const mine = ours[name];
    if (!mine || !(mine.data instanceof Float32Array)) return Infinity;
    if (form === "fp32") return maxRelativeError(mine.data, t.data as Float32Array);
    const { worst, largest } = distance(mine.data, t.data as Float32Array);
    return worst / largest;
  }));
}

/** A second device of the same kind: loads until the zoo has elected a kernel for every op (the first device's reports are stored asynchronously). */
async function warmDevice(bytes: Uint8Array, o: Options, fingerprint: string, feeds: Record<string, TensorLike>): Promise<{ model: Model; stats: ModelStats; firstCallMs: number }> {
  for (const deadline = Date.now() + ZOO_WAIT_MS; ;) {
    const model = await loadModel(bytes, { gateway: o.url, threads: o.threads, fingerprint });
    const t0 = performance.now();
    await model.run(feeds);
    const firstCallMs = performance.now() - t0;
    const stats = model.stats();
    if (stats.ops.every((op) => op.fromZoo)) return { model, stats, firstCallMs };
    await model.close();
    const missing = stats.ops.filter((op) => !op.fromZoo).length;
    if (Date.now() > deadline) throw new Error(`the zoo elected no kernel for ${missing} of ${stats.ops.length} ops of ${fingerprint} within ${ZOO_WAIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function benchModel(file: string, o: Options): Promise<Record<string, unknown>> {
  const name = basename(file, ".onnx");
  const bytes = readFileSync(file);
  const form = formOf(file), tolerance = relativeTolerance(form); // a quantized or half form: onnxruntime-web's rounding differs
  const fingerprint = `bench-model-${randomUUID()}`;

  say(`${name}: a new device kind (${fingerprint}) tunes it while it infers`);
  const fresh = await loadModel(bytes, { gateway: o.url, threads: o.threads, fingerprint });
  const feeds = feedsFor(fresh, o.seq);
  let lastNote = 0, peakWhileTuning = 0;
  const tuned = await runUntilSettled(fresh, feeds, {
    onRun: (run, s) => {
      peakWhileTuning = Math.max(peakWhileTuning, s.memoryBytes + s.tuningMemoryBytes);
      if (performance.now() - lastNote < 3000) return;
      lastNote = performance.now();
      say(`  run ${run + 1}: ${s.lastRunMs.toFixed(1)} ms, ${s.ops.filter((op) => op.settled).length}/${s.ops.length} ops settled`);
    },
  });
  if (!tuned.settled) say(`  not every op settled within the limits (${tuned.runs} runs)`);
  tuned.notes.forEach((n) => say(`  note: ${n}`));
  const c = convergence(tuned);
  const whileTuning = tuned.timeline.slice(1, Math.max(2, c.runs - 1));
  const overhead = whileTuning.map((r) => r.tuneMs / r.inferMs);
  const runWhileTuning = whileTuning.map((r) => r.inferMs + r.tuneMs);

  say(`${name}: a second device of the same kind starts from the zoo`);
  let warmFirstMs = NaN, warmSecondMs = NaN, warmFirstCallMs = NaN;
  try {
    const warm = await warmDevice(bytes, o, fingerprint, feeds);
    warmFirstMs = warm.stats.timeline[0].inferMs;
    warmFirstCallMs = warm.firstCallMs;
    await warm.model.run(feeds);
    warmSecondMs = warm.model.stats().lastRunMs;
    await warm.model.close();
  } catch (e) {
    say(`  ${(e as Error).message}`); // an op that never settled sent no report: the warm figures are left out
  }

  say(`${name}: the initial kernels, untuned (another new device kind, no tuning budget)`);
  const untuned = await loadModel(bytes, { gateway: o.url, threads: o.threads, fingerprint: `bench-model-untuned-${randomUUID()}`, tuning: { budget: 0 } });
  await runUntilServed(untuned, feeds); // its first runs are on the generic kernels
  // on threads, the same initial kernels' kind on one thread too: what the threads gain, in the same rounds
  const oneThread = o.threads > 1
    ? await loadModel(bytes, { gateway: o.url, threads: 1, fingerprint: `bench-model-untuned-1t-${randomUUID()}`, tuning: { budget: 0 } })
    : undefined;
  if (oneThread) await runUntilServed(oneThread, feeds);

  say(`${name}: onnxruntime-web ${ort.env.versions.common} (wasm, ${threadsOf(o.threads)}), tuned and untuned, ${o.rounds} rounds interleaved`);
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], graphOptimizationLevel: ortLevel(form) });
  const ortFeeds = toOrt(feeds);
  let errTuned = 0, errUntuned = 0;
  const calls: Record<string, () => Promise<unknown>> = { ort: () => session.run(ortFeeds), tuned: () => fresh.run(feeds), untuned: () => untuned.run(feeds) };
  if (oneThread) calls.oneThread = () => oneThread.run(feeds);
  const medians = await interleaved(o.rounds, calls,
    (out) => {
      errTuned = Math.max(errTuned, worstError(out.tuned as Outputs, out.ort as OrtOutputs, form));
      errUntuned = Math.max(errUntuned, worstError(out.untuned as Outputs, out.ort as OrtOutputs, form),
        out.oneThread ? worstError(out.oneThread as Outputs, out.ort as OrtOutputs, form) : 0);
    }, o.threads > 1);
  const lengths = await benchLengths(bytes, o, fingerprint, session, tolerance, form);
  await session.release();
  await untuned.close();
  await oneThread?.close();
  const untunedStats = untuned.stats();
  const tunedNow = fresh.stats();

  const [ortMs, tunedMs, untunedMs] = [medians.ort, medians.tuned, medians.untuned];
  if (tunedNow.threads !== o.threads) say(`  jitzoo ran on ${threadsOf(tunedNow.threads)}, not ${o.threads}`);
  return {
    model: name, seq: o.seq, threads: tunedNow.threads, onnxruntime_web_threads: o.threads, ops: tunedNow.ops.length, ops_settled: tuned.ops.filter((op) => op.settled).length,
    onnxruntime_web_ms: round(ortMs), tuned_ms: round(tunedMs), untuned_ms: round(untunedMs),
    speedup_vs_onnxruntime_web: round(ortMs / tunedMs), untuned_speedup_vs_onnxruntime_web: round(ortMs / untunedMs),
    untuned_one_thread_ms: oneThread ? round(medians.oneThread) : null,
    untuned_speedup_vs_one_thread: oneThread ? round(medians.oneThread / untunedMs) : null,
    form, tolerance, max_error_tuned: errTuned, max_error_untuned: errUntuned, outputs_equal: errTuned <= tolerance && errUntuned <= tolerance,
    file_bytes: bytes.length, weight_bytes: Object.values(tunedNow.weightBytes ?? {}).reduce((a, b) => a + b, 0),
    fresh_first_run_ms: round(c.firstRunMs), fresh_final_ms: round(c.finalMs),
    fresh_near_final_after_ms: round(c.nearFinalAfterMs, 0), fresh_near_final_after_runs: c.nearFinalAfterRuns, fresh_runs_to_settle: tuned.runs,
    warm_first_run_ms: Number.isNaN(warmFirstMs) ? null : round(warmFirstMs), warm_second_run_ms: Number.isNaN(warmSecondMs) ? null : round(warmSecondMs),
    warm_first_call_ms: Number.isNaN(warmFirstCallMs) ? null : round(warmFirstCallMs),
    warm_first_run_within_5pct: warmFirstMs <= (1 + NEAR_FINAL) * c.finalMs,
    budget_pct: DEFAULT_TUNING.budget * 100,
    tuning_overhead_p50_pct: round(100 * quantile(overhead, 0.5), 1), tuning_overhead_p95_pct: round(100 * quantile(overhead, 0.95), 1),
    run_while_tuning_p50_ms: round(quantile(runWhileTuning, 0.5)), run_while_tuning_p95_ms: round(quantile(runWhileTuning, 0.95)),
    memory_untuned_bytes: untunedStats.memoryBytes, memory_tuned_bytes: tunedNow.memoryBytes,
    memory_overhead_pct: round(100 * (tunedNow.memoryBytes / untunedStats.memoryBytes - 1), 1),
    peak_while_tuning_bytes: peakWhileTuning,
    lengths,
  };
}

/**
 * Other sequence lengths: a second device of the tuned kind (its first length from the zoo) runs
 * each one's MatMuls on uKernel plans, a model without them compiles a kernel per length (both
 * untuned there: the Welcome's kernels), and onnxruntime-web; calls interleaved, outputs compared.
 */
async function benchLengths(bytes: Uint8Array, o: Options, fingerprint: string, session: ort.InferenceSession, tolerance: number, form: Form): Promise<Record<string, unknown>[]> {
  if (o.lengths.length === 0) return [];
  say(`  other lengths (${o.lengths.join(", ")}): uKernel plans, a kernel per length and onnxruntime-web, ${LENGTH_ROUNDS} rounds interleaved`);
  const planned = await loadModel(bytes, { gateway: o.url, threads: o.threads, fingerprint, tuning: { budget: 0 } });
  const perLength = await loadModel(bytes, { gateway: o.url, threads: o.threads, fingerprint: `bench-model-lengths-${randomUUID()}`, tuning: { budget: 0 }, dynamicRows: 0 });
  await runUntilServed(planned, feedsFor(planned, o.seq));
  await runUntilServed(perLength, feedsFor(perLength, o.seq));
  const rows: Record<string, unknown>[] = [];
  for (const seq of o.lengths) {
    const feeds = feedsFor(planned, seq);
    const ortFeeds = toOrt(feeds);
    await runUntilServed(planned, feeds); // a length's new ops (uKernels, or its own kernels) start on the generic ones
    await runUntilServed(perLength, feeds);
    let error = 0;
    const { ort: ortMs, planned: plannedMs, perLength: perLengthMs } = await interleaved(LENGTH_ROUNDS,
      { ort: () => session.run(ortFeeds), planned: () => planned.run(feeds), perLength: () => perLength.run(feeds) },
      (out) => { error = Math.max(error, worstError(out.planned as Outputs, out.ort as OrtOutputs, form), worstError(out.perLength as Outputs, out.ort as OrtOutputs, form)); },
      o.threads > 1);
    rows.push({
      seq, onnxruntime_web_ms: round(ortMs), ukernel_plan_ms: round(plannedMs), kernel_per_length_ms: round(perLengthMs),
      speedup_vs_onnxruntime_web: round(ortMs / plannedMs), speedup_vs_kernel_per_length: round(perLengthMs / plannedMs),
      dynamic_steps: planned.stats().dynamicSteps, max_error: error, outputs_equal: error <= tolerance,
    });
  }
  await planned.close();
  await perLength.close();
  return rows;
}

function table(rows: Record<string, unknown>[]): string {
  const lines: string[][] = [["", ...rows.map((r) => String(r.model))]];
  const add = (label: string, f: (r: Record<string, unknown>) => string) => lines.push([label, ...rows.map(f)]);
  const n = (k: string, unit = "") => (r: Record<string, unknown>) => `${r[k]}${unit}`;
  add(`onnxruntime-web, ${threadsOf(Number(rows[0].onnxruntime_web_threads))}`, n("onnxruntime_web_ms", " ms"));
  add("jitzoo kernel threads", (r) => String(r.threads));
  add("jitzoo tuned", (r) => `${r.tuned_ms} ms (${r.speedup_vs_onnxruntime_web}x)`);
  add("jitzoo untuned (initial kernels)", (r) => `${r.untuned_ms} ms (${r.untuned_speedup_vs_onnxruntime_web}x)`);
  if (rows[0].untuned_one_thread_ms !== null) {
    add("jitzoo untuned on 1 thread (its own kind's initial kernels)", (r) => `${r.untuned_one_thread_ms} ms (threads: ${r.untuned_speedup_vs_one_thread}x)`);
  }
  add("outputs vs onnxruntime-web", (r) => `${Number(r.max_error_tuned).toExponential(1)} / ${Number(r.max_error_untuned).toExponential(1)} (${r.outputs_equal ? "equal" : "DIFFER"})`);
  add("fresh zoo: first run", n("fresh_first_run_ms", " ms"));
  add("fresh zoo: within 5% of final after", (r) => `${(Number(r.fresh_near_final_after_ms) / 1000).toFixed(1)} s (${r.fresh_near_final_after_runs} runs)`);
  add("fresh zoo: settled after", n("fresh_runs_to_settle", " runs"));
  add("warm zoo: first run", (r) => `${r.warm_first_run_ms} ms (second ${r.warm_second_run_ms} ms)`);
  add("warm zoo: first run() call, with session and warm-up", n("warm_first_call_ms", " ms"));
  add("tuning per run p50 / p95", (r) => `${r.tuning_overhead_p50_pct}% / ${r.tuning_overhead_p95_pct}% (budget ${r.budget_pct}%)`);
  add("run() while tuning p50 / p95", (r) => `${r.run_while_tuning_p50_ms} / ${r.run_while_tuning_p95_ms} ms`);
  const mib = (k: string) => (r: Record<string, unknown>) => (Number(r[k]) / 2 ** 20).toFixed(1);
  add("form (outputs within, of the largest)", (r) => `${r.form} (${r.tolerance})`);
  add("file / weights held", (r) => `${mib("file_bytes")(r)} / ${mib("weight_bytes")(r)} MiB`);
  add("memory untuned / tuned", (r) => `${mib("memory_untuned_bytes")(r)} / ${mib("memory_tuned_bytes")(r)} MiB (${Number(r.memory_overhead_pct) >= 0 ? "+" : ""}${r.memory_overhead_pct}%)`);
  add("memory while tuning, with benches", (r) => `${mib("peak_while_tuning_bytes")(r)} MiB at most`);
  const lengthRows = (r: Record<string, unknown>) => r.lengths as Record<string, unknown>[];
  for (const [i, l] of (lengthRows(rows[0]) ?? []).entries()) {
    add(`sequence ${l.seq}: uKernel plan / kernel per length / onnxruntime-web`, (r) => {
      const x = lengthRows(r)[i];
      return `${x.ukernel_plan_ms} / ${x.kernel_per_length_ms} / ${x.onnxruntime_web_ms} ms (${x.speedup_vs_onnxruntime_web}x${x.outputs_equal ? "" : ", DIFFER"})`;
    });
  }
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  return lines.map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("   ")).join("\n");
}

/** The files to bench: per directory the default two where it has them, else its every .onnx file; narrowed by --only. */
function modelFiles(o: Options): string[] {
  const all = o.dirs.flatMap((dir) => (MODELS.every((m) => existsSync(join(dir, m))) ? MODELS
    : readdirSync(dir).filter((f) => f.endsWith(".onnx")).sort()).map((f) => join(dir, f)));
  const chosen = o.only.length ? all.filter((f) => o.only.some((part) => basename(f).includes(part))) : all;
  if (chosen.length === 0) throw new Error(`no ONNX file${o.only.length ? ` matching ${o.only.join(", ")}` : ""} in ${o.dirs.join(", ")}\n${usage}`);
  return chosen;
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  ort.env.wasm.numThreads = o.threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
  const rows: Record<string, unknown>[] = [];
  for (const file of modelFiles(o)) rows.push(await benchModel(file, o));
  console.log(table(rows));
  if (o.json) {
    const by = (k: string) => Math.min(...rows.map((r) => Number(r[k])));
    console.log(JSON.stringify({ bench: "model", min_speedup_vs_onnxruntime_web: by("speedup_vs_onnxruntime_web"), models: rows }));
  }
}

main().catch((e: Error) => {
  console.error(`bench model failed: ${e.message}`);
  process.exitCode = 1;
});
