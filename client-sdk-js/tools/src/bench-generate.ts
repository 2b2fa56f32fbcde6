#!/usr/bin/env node
// ./jitzoo bench generate: decoders generating on jitzoo beside onnxruntime-web driving the same
// loop (generate.ts's generateTokens) over the same file. Per file and thread count, in a process
// of its own (onnxruntime-web fixes its threads once per process): jitzoo tunes while it generates
// (a new device kind), then both generate in turns, greedy, the same prompt; prefill ms, decode
// tokens/s (the steps after the prompt's), and whether the tokens agree. A plain decoder runs with
// the KV cache withKvCache() builds around it (both runtimes the same rewritten file), unless --plain.
import "@jitzoo/client/node";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-web";
import { decodeModel, decoderLayout, generateTokens, loadModel, median, withKvCache, type DecoderLayout } from "@jitzoo/client/internal";
import { parseOptions, wholeNumber } from "./args.js";
import { ortStep } from "./exports.js";
import { interleaved } from "./interleave.js";
import { FILE_BENCH_OPTIONS, fileBenchOptions, fileTable, inChild, type FileRow } from "./per-file.js";

const usage = `usage: bench-generate [--models DIR] [--prompt N] [--new N] [--threads N,N] [--rounds N] [--tune-seconds N] [--json]
  --models        directory of decoders (.onnx files generate() can drive; default: ../shared/models/real-exports/bench)
  --prompt        prompt tokens (default 64)
  --new           new tokens, greedy (default 64)
  --threads       thread counts, each run by both runtimes (default 1,2)
  --rounds        generations of each runtime timed, in turns (default 3)
  --tune-seconds  most seconds jitzoo generates (tuning) before it is timed (default 60)
  --plain         a plain decoder feeds the whole sequence each step (default: the KV cache withKvCache() builds)`;

interface Options {
  dir: string;
  prompt: number;
  fresh: number;
  threads: number[];
  rounds: number;
  tuneSeconds: number;
  plain: boolean;
  json: boolean;
  url: string;
}

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    ...FILE_BENCH_OPTIONS,
    prompt: { type: "string", default: "64" },
    new: { type: "string", default: "64" },
    rounds: { type: "string", default: "3" },
    "tune-seconds": { type: "string", default: "60" },
    plain: { type: "boolean", default: false },
  } }, usage);
  return {
    ...fileBenchOptions(v, usage), prompt: wholeNumber("prompt", v.prompt, usage), fresh: wholeNumber("new", v.new, usage),
    rounds: wholeNumber("rounds", v.rounds, usage), tuneSeconds: wholeNumber("tune-seconds", v["tune-seconds"], usage, 0),
    plain: v.plain as boolean,
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A decoder's layout, or undefined for a file generate() cannot drive (an encoder). */
function layoutOf(file: string): DecoderLayout | undefined {
  try {
    return decoderLayout(decodeModel(readFileSync(file)));
  } catch {
    return undefined;
  }
}

/** The same prompt for every runtime: token ids spread over the vocabulary. */
const promptFor = (layout: DecoderLayout, n: number) => Array.from({ length: n }, (_, i) => (i * 37 + 11) % layout.vocab);

/** The file both runtimes generate over: a plain decoder with the KV cache built around it (unless `plain`), and which cache it has. */
function decoderFile(file: string, plain: boolean): { bytes: Uint8Array; kvCache: "file" | "built" | "none" } {
  const bytes = readFileSync(file);
  if (decoderLayout(decodeModel(bytes)).cache.length) return { bytes, kvCache: "file" };
  return plain ? { bytes, kvCache: "none" } : { bytes: withKvCache(bytes), kvCache: "built" };
}

/** One file at one thread count, in this process (whose onnxruntime-web runs on that many threads). */
async function benchFile(file: string, threads: number, o: Options): Promise<Record<string, unknown>> {
  const { bytes, kvCache } = decoderFile(file, o.plain);
  const layout = decoderLayout(decodeModel(bytes));
  const prompt = promptFor(layout, o.prompt), options = { maxNewTokens: o.fresh };
  say(`${basename(file, ".onnx")}, ${threads} thread${threads > 1 ? "s" : ""}: jitzoo generates ${o.fresh} tokens after ${o.prompt}, tuning, for up to ${o.tuneSeconds} s`);
  const model = await loadModel(bytes, { gateway: o.url, threads, worker: false, store: null, fingerprint: `bench-generate-${randomUUID()}` });
  const started = performance.now();
  let tuning = 0;
  do {
    await model.generate(prompt, options);
    tuning++;
  } while (performance.now() - started < o.tuneSeconds * 1000);
  say(`  ${tuning} generations while tuning; then ${o.rounds} of each runtime in turns`);
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  const step = ortStep(session);
  await generateTokens(layout, step, prompt, options); // its first runs
  const ours: { prefill: number[]; decode: number[]; tokens: number[] } = { prefill: [], decode: [], tokens: [] };
  const theirs: typeof ours = { prefill: [], decode: [], tokens: [] };
  const record = (into: typeof ours) => (r: { prefillMs: number; decodeTokensPerSecond: number; tokens: number[] }) => {
    into.prefill.push(r.prefillMs);
    into.decode.push(r.decodeTokensPerSecond);
    into.tokens = r.tokens;
  };
  await interleaved(o.rounds, {
    ort: () => generateTokens(layout, step, prompt, options).then(record(theirs)),
    jitzoo: () => model.generate(prompt, options).then(record(ours)),
  }, () => undefined, threads > 1);
  await session.release();
  const stats = model.stats();
  await model.close();
  const decode = median(ours.decode), ortDecode = median(theirs.decode);
  return {
    threads, kv_cache: kvCache, prompt_tokens: o.prompt, new_tokens: o.fresh,
    prefill_ms: round(median(ours.prefill), 1), onnxruntime_web_prefill_ms: round(median(theirs.prefill), 1),
    decode_tokens_per_s: round(decode, 2), onnxruntime_web_decode_tokens_per_s: round(ortDecode, 2),
    speedup_vs_onnxruntime_web: round(decode / ortDecode), tokens_equal: ours.tokens.join() === theirs.tokens.join(),
    ops: stats.ops.length, notes: stats.notes,
  };
}

function table(files: FileRow[], threads: number[]): string {
  return fileTable(files, (add, at) => {
    add("KV cache", (f) => String(at(f, threads[0]).kv_cache));
    for (const t of threads) {
      add(`${t} thread${t > 1 ? "s" : ""}: decode tokens/s, onnxruntime-web / jitzoo`, (f) =>
        `${at(f, t).onnxruntime_web_decode_tokens_per_s} / ${at(f, t).decode_tokens_per_s} (${at(f, t).speedup_vs_onnxruntime_web}x)`);
      add(`  prefill ms, onnxruntime-web / jitzoo`, (f) => `${at(f, t).onnxruntime_web_prefill_ms} / ${at(f, t).prefill_ms}`);
      add(`  the same tokens`, (f) => (at(f, t).tokens_equal ? "yes" : "NO"));
    }
    add("jitzoo's decode, most threads / one", (f) => `${f.thread_speedup}x`);
  });
}

/** One file at one thread count in a fresh process of this script. */
const child = (args: string[]) => inChild(fileURLToPath(import.meta.url), args);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const inner = argv.indexOf("--inner"); // --inner FILE THREADS: one file at one thread count in this process
  if (inner >= 0) {
    const [file, threads] = argv.slice(inner + 1, inner + 3);
    const o = parse(argv.filter((_, i) => i < inner || i > inner + 2));
    ort.env.wasm.numThreads = Number(threads);
    ort.env.wasm.proxy = false;
    ort.env.logLevel = "error";
    console.log(JSON.stringify(await benchFile(file, Number(threads), o)));
    process.exit(0); // onnxruntime-web's thread pool would keep the process alive
  }
  const o = parse(argv);
  const files = readdirSync(o.dir).filter((f) => f.endsWith(".onnx")).sort().map((f) => join(o.dir, f)).filter((f) => layoutOf(f));
  if (files.length === 0) throw new Error(`no decoders generate() can drive in ${o.dir}`);
  const rows: Record<string, unknown>[] = [];
  for (const file of files) {
    const row: Record<string, unknown> = { model: basename(file, ".onnx") };
    try {
      const runs = o.threads.map((t) => child([...argv, "--inner", file, String(t)]));
      const rate = (t: number) => Number(runs.find((r) => r.threads === t)?.decode_tokens_per_s);
      Object.assign(row, { runs, thread_speedup: round(rate(Math.max(...o.threads)) / rate(Math.min(...o.threads))) });
    } catch (e) {
      row.error = (e as Error).message;
      say(`${row.model}: ${row.error}`);
    }
    rows.push(row);
  }
  console.log(table(rows, o.threads));
  if (o.json) console.log(JSON.stringify({ bench: "generate", files: rows }));
}

main().catch((e) => {
  say(`bench-generate: ${(e as Error).message}`);
  process.exit(1);
});
