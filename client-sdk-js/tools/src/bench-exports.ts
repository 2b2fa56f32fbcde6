#!/usr/bin/env node
// ./jitzoo bench exports: users' own ONNX files (real exporter output, every form) on jitzoo beside
// onnxruntime-web. Per file and thread count, in a process of its own (onnxruntime-web fixes its
// threads once per process): load time and first inference of each runtime, jitzoo tuned while it
// infers by a new device kind, then both timed with their calls interleaved on the same feeds and
// their outputs compared, and the time jitzoo spent in host steps. Memory: each runtime alone in a
// fresh process, loaded and run once, measured while loaded (resident memory it added: Wasm and JS
// heap together), and where jitzoo holds the weights.
import "@jitzoo/client/node";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-web";
import { parseOptions, wholeNumber } from "./args.js";
import { allowed, distance, formOf, ortLevel, toOrt, type Form } from "./exports.js";
import { interleaved } from "./interleave.js";
import { FILE_BENCH_OPTIONS, fileBenchOptions, fileTable, inChild, type FileRow } from "./per-file.js";
import { feedsFor, runUntilSettled, runUntilServed, loadModel, type OutputTensor, decodeModel, median } from "@jitzoo/client/internal";

const usage = `usage: bench-exports [--models DIR] [--seq N] [--threads N,N] [--rounds N] [--tune-seconds N] [--json]
  --models        directory of .onnx files (default: ../shared/models/real-exports/bench)
  --seq           sequence length of text models (default 128; vision models take their declared image size)
  --threads       thread counts, each run by both runtimes (default 1,2)
  --rounds        interleaved rounds of the timing (default 15)
  --tune-seconds  most seconds jitzoo tunes a file before it is timed (default 120)`;

interface Options {
  dir: string;
  seq: number;
  threads: number[];
  rounds: number;
  tuneSeconds: number;
  json: boolean;
  url: string;
}

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    ...FILE_BENCH_OPTIONS,
    seq: { type: "string", default: "128" },
    rounds: { type: "string", default: "15" },
    "tune-seconds": { type: "string", default: "120" },
  } }, usage);
  return {
    ...fileBenchOptions(v, usage), seq: wholeNumber("seq", v.seq, usage), rounds: wholeNumber("rounds", v.rounds, usage),
    tuneSeconds: wholeNumber("tune-seconds", v["tune-seconds"], usage),
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The worst output difference and what the file's form allows, over every output. */
function compare(form: Form, ours: Record<string, OutputTensor>, theirs: ort.InferenceSession.OnnxValueMapType): { error: number; allowed: number } {
  let error = 0, limit = Infinity;
  for (const [name, t] of Object.entries(theirs)) {
    const { worst, largest } = distance(ours[name]?.data as Float32Array ?? [], t.data as Float32Array);
    error = Math.max(error, worst);
    limit = Math.min(limit, allowed(form, largest));
  }
  return { error, allowed: limit };
}

/** One file at one thread count, in this process (whose onnxruntime-web runs on that many threads). */
async function benchFile(file: string, threads: number, o: Options): Promise<Record<string, unknown>> {
  const name = basename(file, ".onnx"), form = formOf(file);
  const bytes = readFileSync(file);
  say(`${name} (${form}), ${threads} thread${threads > 1 ? "s" : ""}: jitzoo loads it, a new device kind tunes it while it infers`);
  let t0 = performance.now();
  const model = await loadModel(bytes, { gateway: o.url, threads, fingerprint: `bench-exports-${randomUUID()}` });
  const loadMs = performance.now() - t0;
  const feeds = feedsFor(model, o.seq);
  t0 = performance.now();
  await model.run(feeds);
  const firstRunMs = performance.now() - t0;
  const tuned = await runUntilSettled(model, feeds, { maxSeconds: o.tuneSeconds });
  if (!tuned.settled) say(`  not every op settled within ${o.tuneSeconds} s (${tuned.runs} runs)`);
  tuned.notes.forEach((n) => say(`  note: ${n}`));

  say(`  onnxruntime-web ${ort.env.versions.common} (wasm): session and first run, then ${o.rounds} rounds interleaved with jitzoo`);
  t0 = performance.now();
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], graphOptimizationLevel: ortLevel(form) });
  const ortLoadMs = performance.now() - t0;
  const ortFeeds = toOrt(feeds);
  t0 = performance.now();
  await session.run(ortFeeds);
  const ortFirstRunMs = performance.now() - t0;
  let error = 0, limit = Infinity;
  const medians = await interleaved(o.rounds, { ort: () => session.run(ortFeeds), jitzoo: () => model.run(feeds) }, (out) => {
    const c = compare(form, out.jitzoo as Record<string, OutputTensor>, out.ort as ort.InferenceSession.OnnxValueMapType);
    error = Math.max(error, c.error);
    limit = Math.min(limit, c.allowed);
  }, threads > 1);
  await session.release();
  const stats = model.stats();
  const timed = stats.timeline.slice(-o.rounds);
  return {
    threads, kernel_threads: stats.threads, onnxruntime_web_ms: round(medians.ort), jitzoo_ms: round(medians.jitzoo),
    speedup_vs_onnxruntime_web: round(medians.ort / medians.jitzoo),
    host_ms: round(median(timed.map((r) => r.hostMs))), host_steps: stats.hostSteps, ops: stats.ops.length,
    ops_settled: stats.ops.filter((op) => op.settled).length,
    load_ms: round(loadMs, 1), first_run_ms: round(firstRunMs, 1), onnxruntime_web_load_ms: round(ortLoadMs, 1),
    onnxruntime_web_first_run_ms: round(ortFirstRunMs, 1),
    max_error: error, allowed_error: limit, outputs_equal: error <= limit,
  };
}

/**
 * Resident memory one runtime adds to a fresh process by loading a file and running it once
 * (Wasm memories, JS heap, everything), measured while the model is still loaded, after the
 * garbage from loading is collected; jitzoo on the Welcome's kernels.
 */
async function memoryOf(runtime: "jitzoo" | "onnxruntime-web", file: string, o: Options): Promise<Record<string, number>> {
  const bytes = readFileSync(file);
  const feeds = feedsFor({ inputs: decodeModel(bytes).inputs }, o.seq);
  const collect = async () => {
    await new Promise((resolve) => setTimeout(resolve, 200)); // what the run left for later (a worker's, a finalizer's) first
    (globalThis as { gc?: () => void }).gc?.();
  };
  await collect();
  const before = process.memoryUsage();
  const measure = async (jitzoo?: Record<string, number>) => {
    await collect();
    const after = process.memoryUsage();
    return { resident_bytes: after.rss - before.rss, js_heap_bytes: after.heapUsed - before.heapUsed, ...jitzoo };
  };
  if (runtime === "jitzoo") {
    const model = await loadModel(bytes, { gateway: o.url, threads: 1, fingerprint: `bench-exports-memory-${randomUUID()}`, tuning: { budget: 0 } });
    await runUntilServed(model, feeds); // the served kernels' memory, not the generic kernels' widened weights
    const { memoryBytes, weightBytes } = model.stats();
    // where the weights are: each once, in JavaScript or in the Wasm memory (unpacked, or their packed copy)
    const figures = await measure({ wasm_bytes: memoryBytes, weights_in_js_bytes: weightBytes!.javascript, weights_in_wasm_bytes: weightBytes!.arena + weightBytes!.packed });
    await model.close();
    return figures;
  }
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], graphOptimizationLevel: ortLevel(formOf(file)) });
  await session.run(toOrt(feeds));
  const figures = await measure();
  await session.release();
  return figures;
}

/** Runs this script again in a fresh process with `args`; its last stdout line is JSON. */
function table(files: FileRow[], threads: number[]): string {
  return fileTable(files, (add, at) => {
    add("form", (f) => String(f.form));
    for (const t of threads) {
      add(`${t} thread${t > 1 ? "s" : ""}: onnxruntime-web / jitzoo tuned`, (f) => `${at(f, t).onnxruntime_web_ms} / ${at(f, t).jitzoo_ms} ms (${at(f, t).speedup_vs_onnxruntime_web}x)`);
      add(`  jitzoo host steps per inference`, (f) => `${at(f, t).host_ms} ms (${at(f, t).host_steps} steps)`);
      add(`  outputs (max error / allowed)`, (f) => `${Number(at(f, t).max_error).toExponential(1)} / ${Number(at(f, t).allowed_error).toExponential(1)}${at(f, t).outputs_equal ? "" : " DIFFER"}`);
      add(`  load + first inference: jitzoo`, (f) => `${at(f, t).load_ms} + ${at(f, t).first_run_ms} ms`);
      add(`  load + first inference: onnxruntime-web`, (f) => `${at(f, t).onnxruntime_web_load_ms} + ${at(f, t).onnxruntime_web_first_run_ms} ms`);
    }
    const mib = (b: unknown) => (Number(b) / 2 ** 20).toFixed(1);
    add("memory: jitzoo / onnxruntime-web (resident, 1 thread)", (f) => `${mib(f.memory_bytes)} / ${mib(f.onnxruntime_web_memory_bytes)} MiB`);
    add("  jitzoo's Wasm memory / JS heap", (f) => `${mib(f.wasm_bytes)} / ${mib(f.js_heap_bytes)} MiB`);
    add("  jitzoo's weights: in the Wasm memory / in JavaScript", (f) => `${mib(f.weights_in_wasm_bytes)} / ${mib(f.weights_in_js_bytes)} MiB`);
  }, "did not load");
}

/** One measurement in a fresh process of this script. */
const child = (args: string[]) => inChild(fileURLToPath(import.meta.url), args);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const inner = argv.indexOf("--inner"); // --inner threads|memory-jitzoo|memory-ort FILE ARG: one measurement in this process
  if (inner >= 0) {
    const [what, file, arg] = argv.slice(inner + 1, inner + 4);
    const o = parse(argv.filter((_, i) => i < inner || i > inner + 3));
    ort.env.wasm.numThreads = what === "threads" ? Number(arg) : 1;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = "error";
    const result = what === "threads" ? await benchFile(file, Number(arg), o) : await memoryOf(what === "memory-jitzoo" ? "jitzoo" : "onnxruntime-web", file, o);
    console.log(JSON.stringify(result));
    process.exit(0); // onnxruntime-web's thread pool would keep the process alive
  }
  const o = parse(argv);
  const files = readdirSync(o.dir).filter((f) => f.endsWith(".onnx")).sort().map((f) => join(o.dir, f));
  if (files.length === 0) throw new Error(`no .onnx files in ${o.dir}`);
  const rows: Record<string, unknown>[] = [];
  for (const file of files) {
    const row: Record<string, unknown> = { model: basename(file, ".onnx"), form: formOf(file) };
    try {
      row.runs = o.threads.map((t) => child([...argv, "--inner", "threads", file, String(t)]));
      say(`${row.model}: memory, each runtime alone in a fresh process`);
      const ours = child([...argv, "--inner", "memory-jitzoo", file, "1"]) as Record<string, number>;
      const theirs = child([...argv, "--inner", "memory-ort", file, "1"]) as Record<string, number>;
      Object.assign(row, {
        memory_bytes: ours.resident_bytes, onnxruntime_web_memory_bytes: theirs.resident_bytes, wasm_bytes: ours.wasm_bytes,
        js_heap_bytes: ours.js_heap_bytes, weights_in_wasm_bytes: ours.weights_in_wasm_bytes, weights_in_js_bytes: ours.weights_in_js_bytes,
        memory_vs_onnxruntime_web: round(ours.resident_bytes / theirs.resident_bytes),
      });
    } catch (e) {
      row.error = (e as Error).message;
      say(`${row.model}: ${row.error}`);
    }
    rows.push(row);
  }
  console.log(table(rows, o.threads));
  if (o.json) {
    const fp32 = rows.filter((r) => r.form === "fp32" && !r.error).flatMap((r) => (r.runs as Record<string, unknown>[]).map((x) => Number(x.speedup_vs_onnxruntime_web)));
    console.log(JSON.stringify({
      bench: "exports", files_total: rows.length, files_loaded: rows.filter((r) => !r.error).length,
      min_speedup_vs_onnxruntime_web: fp32.length ? Math.min(...fp32) : null, files: rows,
    }));
  }
}

main().catch((e: Error) => {
  console.error(`bench exports failed: ${e.message}`);
  process.exitCode = 1;
});
