#!/usr/bin/env node
// ./jitzoo bench browser: the SDK in headless Chromium against the suite. A page tunes a model in
// its worker (the default) while main-thread long tasks are counted, then again on its main
// thread for contrast; times the tuned model (in the worker, and on the main thread from the
// kernels kept in IndexedDB) beside onnxruntime-web (wasm, one thread) in the same page, calls
// interleaved; reloads and times the first inference on the kept kernels against the gateway's
// first answer; and gives the size of the browser builds.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium, type Page } from "playwright-core";
import { parseOptions, wholeNumber } from "./args.js";
import { chromiumPath, DIST, SDK_PAGE, serveSite, type PageSdk } from "./site.js";

const usage = `usage: bench-browser [--models DIR] [--model FILE] [--seq N] [--rounds N] [--json]
  --models  directory of the ONNX files (default: $JITZOO_MODELS, else .jitzoo/models)
  --model   the model (default bert_layer.onnx)
  --seq     sequence length (default 128)
  --rounds  interleaved rounds of the comparison (default 20)`;

interface Options {
  dir: string;
  model: string;
  seq: number;
  rounds: number;
  json: boolean;
  gateway: string;
}

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    json: { type: "boolean", default: false },
    models: { type: "string", default: process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models") },
    model: { type: "string", default: "bert_layer.onnx" },
    seq: { type: "string", default: "128" },
    rounds: { type: "string", default: "20" },
  } }, usage);
  return {
    dir: v.models, model: v.model, seq: wholeNumber("seq", v.seq, usage), rounds: wholeNumber("rounds", v.rounds, usage), json: v.json,
    gateway: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

type Ort = typeof import("onnxruntime-web");
interface PageGlobals { jitzoo: PageSdk; ort: Ort; ready: boolean }

/** Tunes the model in the page until it settles, counting the main thread's long tasks (over 50 ms) meanwhile. */
function tuneInPage(page: Page, o: Options, fingerprint: string, worker: boolean) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq, worker }) => {
    const { jitzoo } = globalThis as unknown as PageGlobals;
    const longTasks: number[] = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); });
    const model = await jitzoo.loadModel(url, { gateway, fingerprint, worker, tuning: { budget: 1 } });
    const feeds = jitzoo.feedsFor(model, seq);
    observer.observe({ type: "longtask" });
    const start = performance.now();
    const stats = await jitzoo.runUntilSettled(model, feeds, { maxSeconds: 300 });
    const seconds = (performance.now() - start) / 1000;
    observer.disconnect();
    return {
      seconds, settled: stats.settled, runs: stats.runs, ops: stats.ops.length, notes: stats.notes, clock: stats.clock,
      longTasks: longTasks.length, longestTaskMs: longTasks.length ? Math.max(...longTasks) : 0,
    };
  }, { url: `/models/${o.model}`, gateway: o.gateway, fingerprint, seq: o.seq, worker });
}

/** The tuned model in its worker, the same kernels on the main thread (kept in IndexedDB), and onnxruntime-web, calls interleaved. */
function compareInPage(page: Page, o: Options, fingerprint: string) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq, rounds }) => {
    const { jitzoo, ort } = globalThis as unknown as PageGlobals;
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const inWorker = await jitzoo.loadModel(bytes, { gateway, fingerprint });
    const onMain = await jitzoo.loadModel(bytes, { gateway, fingerprint, worker: false });
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
    const feeds = jitzoo.feedsFor(onMain, seq);
    const ortFeeds = Object.fromEntries(Object.entries(feeds).map(([name, t]) => {
      const data = t.data as Float32Array | BigInt64Array;
      return [name, new ort.Tensor(data instanceof Float32Array ? "float32" : "int64", data, [...t.dims])];
    }));
    const samples = { worker: [] as number[], main: [] as number[], ort: [] as number[] };
    let error = 0;
    for (let r = 0; r <= rounds; r++) { // round 0 warms every path up, untimed
      const t0 = performance.now();
      const a = await inWorker.run(feeds);
      const t1 = performance.now();
      await onMain.run(feeds);
      const t2 = performance.now();
      const b = await session.run(ortFeeds);
      const t3 = performance.now();
      if (r > 0) { samples.worker.push(t1 - t0); samples.main.push(t2 - t1); samples.ort.push(t3 - t2); }
      for (const name of Object.keys(b)) error = Math.max(error, jitzoo.maxRelativeError(a[name].data as Float32Array, b[name].data as Float32Array));
    }
    const restored = onMain.stats().ops.filter((op) => op.restored).length;
    await inWorker.close();
    await onMain.close();
    return {
      workerMs: jitzoo.median(samples.worker), mainMs: jitzoo.median(samples.main), ortMs: jitzoo.median(samples.ort),
      error, restored, ops: onMain.stats().ops.length, ortVersion: ort.env.versions.common,
    };
  }, { url: `/models/${o.model}`, gateway: o.gateway, fingerprint, seq: o.seq, rounds: o.rounds });
}

/** After a reload: from the model's bytes in hand to its first inference on the kept kernels, against the gateway's Welcome. */
function secondLoad(page: Page, o: Options, fingerprint: string) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq }) => {
    const { jitzoo } = globalThis as unknown as PageGlobals;
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const start = performance.now();
    const model = await jitzoo.loadModel(bytes, { gateway, fingerprint });
    let welcomeMs = NaN;
    // the sessions open at the first run: the Welcome is the gateway's first answer
    const welcomed = new Promise<void>((resolve) => model.on("connection", (e) => {
      if (e.state === "open") { welcomeMs = performance.now() - start; resolve(); }
    }));
    await model.run(jitzoo.feedsFor(model, seq));
    const firstMs = performance.now() - start;
    const ops = model.stats().ops;
    await Promise.race([welcomed, new Promise((r) => setTimeout(r, 30_000))]);
    await model.close();
    return { firstMs, welcomeMs, restored: ops.filter((op) => op.restored).length, ops: ops.length };
  }, { url: `/models/${o.model}`, gateway: o.gateway, fingerprint, seq: o.seq });
}

function sizes(): { bundle_bytes: number; bundle_gzip_bytes: number; worker_bytes: number; worker_gzip_bytes: number } {
  const size = (file: string) => {
    const bytes = readFileSync(join(DIST, "browser", file));
    return [bytes.length, gzipSync(bytes, { level: 9 }).length];
  };
  const [bundle, bundleGz] = size("jitzoo.js");
  const [worker, workerGz] = size("worker.js");
  return { bundle_bytes: bundle, bundle_gzip_bytes: bundleGz, worker_bytes: worker, worker_gzip_bytes: workerGz };
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const site = await serveSite({ models: { [o.model]: join(o.dir, o.model) }, pages: { "/": SDK_PAGE } });
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--no-first-run"] });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on("pageerror", (e) => say(`page error: ${e.message}`));
    await page.goto(site.url);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).ready);
    const fingerprint = `bench-browser-${randomUUID()}`;
    say(`${o.model} at seq ${o.seq} in ${await browser.version()}: tuning in the page's worker (a new device kind)...`);
    const worker = await tuneInPage(page, o, fingerprint, true);
    if (!worker.settled) say(`  not settled within the limit: ${worker.notes.join("; ")}`);
    say(`  settled in ${worker.seconds.toFixed(1)} s (${worker.runs} runs); main-thread long tasks meanwhile: ${worker.longTasks}`);
    say("tuning on the page's main thread, for contrast (another new device kind)...");
    const main = await tuneInPage(page, o, `bench-browser-main-${randomUUID()}`, false);
    say(`  settled in ${main.seconds.toFixed(1)} s; main-thread long tasks: ${main.longTasks} (longest ${main.longestTaskMs.toFixed(0)} ms)`);
    say(`the tuned model beside onnxruntime-web, ${o.rounds} rounds interleaved...`);
    const compared = await compareInPage(page, o, fingerprint);
    await page.reload();
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).ready);
    const second = await secondLoad(page, o, fingerprint);
    const figures = {
      model: o.model, seq: o.seq, chromium: await browser.version(), onnxruntime_web: compared.ortVersion, clock: worker.clock.name,
      clock_resolution_ms: worker.clock.resolutionMs,
      tuned_worker_ms: round(compared.workerMs), tuned_main_thread_ms: round(compared.mainMs), ort_web_ms: round(compared.ortMs),
      speedup_vs_ort_web: round(compared.ortMs / compared.workerMs), speedup_vs_ort_web_main_thread: round(compared.ortMs / compared.mainMs),
      max_rel_error_vs_ort_web: Number(compared.error.toExponential(2)),
      tuning_worker_s: round(worker.seconds, 1), long_tasks_worker: worker.longTasks, longest_task_worker_ms: round(worker.longestTaskMs, 0),
      tuning_main_thread_s: round(main.seconds, 1), long_tasks_main_thread: main.longTasks, longest_task_main_thread_ms: round(main.longestTaskMs, 0),
      second_load_first_tuned_inference_ms: round(second.firstMs, 0), second_load_gateway_welcome_ms: round(second.welcomeMs, 0),
      second_load_restored_ops: second.restored, ops: second.ops,
      ...sizes(),
    };
    if (o.json) {
      console.log(JSON.stringify(figures));
      return;
    }
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    console.log(`
${o.model}, seq ${o.seq}, Chromium ${figures.chromium}, clock ${figures.clock} (${figures.clock_resolution_ms} ms)
  latency after tuning (median of ${o.rounds})   jitzoo in its worker ${figures.tuned_worker_ms} ms, on the main thread ${figures.tuned_main_thread_ms} ms, onnxruntime-web ${figures.onnxruntime_web} ${figures.ort_web_ms} ms
  speedup vs onnxruntime-web                 ${figures.speedup_vs_ort_web}× (worker), ${figures.speedup_vs_ort_web_main_thread}× (main thread)   target ≥ 1.3×; outputs agree within ${figures.max_rel_error_vs_ort_web}
  main-thread long tasks while tuning         worker mode ${figures.long_tasks_worker} (longest ${figures.longest_task_worker_ms} ms) in ${figures.tuning_worker_s} s; main-thread mode ${figures.long_tasks_main_thread} (longest ${figures.longest_task_main_thread_ms} ms) in ${figures.tuning_main_thread_s} s   target: none in worker mode
  second load                                first inference on the kept kernels after ${figures.second_load_first_tuned_inference_ms} ms (${figures.second_load_restored_ops} of ${figures.ops} ops kept); the gateway's first answer after ${figures.second_load_gateway_welcome_ms} ms
  browser build                              jitzoo.js ${kb(figures.bundle_bytes)} (${kb(figures.bundle_gzip_bytes)} gzipped), worker.js ${kb(figures.worker_bytes)} (${kb(figures.worker_gzip_bytes)} gzipped)`);
  } finally {
    await browser.close();
    await site.close();
  }
}

main().catch((e: Error) => {
  say(`bench-browser: ${e.message}`);
  process.exit(1);
});
