#!/usr/bin/env node
// ./jitzoo bench browser: the SDK in each browser engine (Chromium, Firefox, WebKit; --engine)
// against the suite. Per engine, a page times the first inference from the model's bytes in hand
// (jitzoo on a new device kind, jitzoo once the zoo has elected its kernels, onnxruntime-web), tunes
// the model in its worker (the default) while the main thread's long tasks are counted, then on its
// main thread for contrast; times the tuned model (in the worker, and on the main thread from the
// kernels kept in IndexedDB) beside onnxruntime-web (wasm, one thread) in the same page, calls
// interleaved; a later page times the first inference on the kept kernels against the gateway's
// first answer; and gives the size of the browser builds.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { parseOptions, wholeNumber } from "./args.js";
import { ENGINES, engineMissing, launchEngine, type EngineName, type EnginePage } from "./engines.js";
import { DIST, SDK_PAGE, serveSite, type PageSdk } from "./site.js";

const usage = `usage: bench-browser [--engine chromium|firefox|webkit|all] [--models DIR] [--model FILE] [--seq N] [--rounds N] [--json]
  --engine  the browser engine, or all three in turn (default chromium)
  --models  directory of the ONNX files (default: $JITZOO_MODELS, else .jitzoo/models)
  --model   the model (default bert_layer.onnx)
  --seq     sequence length (default 128)
  --rounds  interleaved rounds of the comparison (default 20)`;

interface Options {
  engines: EngineName[];
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
    engine: { type: "string", default: "chromium" },
    models: { type: "string", default: process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models") },
    model: { type: "string", default: "bert_layer.onnx" },
    seq: { type: "string", default: "128" },
    rounds: { type: "string", default: "20" },
  } }, usage);
  const engines = v.engine === "all" ? [...ENGINES] : [v.engine as EngineName];
  if (!engines.every((e) => ENGINES.includes(e))) throw new Error(`--engine must be ${ENGINES.join(", ")} or all, got '${v.engine}'\n${usage}`);
  return {
    engines, dir: v.models, model: v.model, seq: wholeNumber("seq", v.seq, usage), rounds: wholeNumber("rounds", v.rounds, usage), json: v.json,
    gateway: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

type Ort = typeof import("onnxruntime-web");
interface PageGlobals { jitzoo: PageSdk; ort: Ort; toOrt: (feeds: ReturnType<PageSdk["feedsFor"]>) => Record<string, InstanceType<Ort["Tensor"]>>; ready: boolean }

/**
 * Tunes the model in the page until it settles, counting the main thread's long tasks (over 50 ms)
 * meanwhile: from the engine's long task entries where it has them (Chromium), else from a 10 ms
 * timer's lateness (a turn that comes over 50 ms late waited on one).
 */
function tuneInPage(page: EnginePage, o: Options, fingerprint: string, worker: boolean) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq, worker }) => {
    const { jitzoo } = globalThis as unknown as PageGlobals;
    const longTasks: number[] = [];
    const entries = PerformanceObserver.supportedEntryTypes?.includes("longtask");
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); });
    let timer: ReturnType<typeof setInterval> | undefined;
    const model = await jitzoo.loadModel(url, { gateway, fingerprint, worker, tuning: { budget: 1 } });
    const feeds = jitzoo.feedsFor(model, seq);
    if (entries) observer.observe({ type: "longtask" });
    else {
      let last = performance.now();
      timer = setInterval(() => {
        const now = performance.now();
        if (now - last > 60) longTasks.push(now - last - 10);
        last = now;
      }, 10);
    }
    const start = performance.now();
    const stats = await jitzoo.runUntilSettled(model, feeds, { maxSeconds: 300 });
    const seconds = (performance.now() - start) / 1000;
    observer.disconnect();
    clearInterval(timer);
    await model.close();
    return {
      seconds, settled: stats.settled, runs: stats.runs, ops: stats.ops.length, notes: stats.notes, clock: stats.clock,
      longTasks: longTasks.length, longestTaskMs: longTasks.length ? Math.max(...longTasks) : 0, longTaskSource: entries ? "longtask" : "timer",
    };
  }, { url: `/models/${o.model}`, gateway: o.gateway, fingerprint, seq: o.seq, worker });
}

/**
 * From the model's bytes in hand to its first output: jitzoo (in its worker; `kept` false: no
 * kernels kept on the device, only what the gateway and the zoo give) or onnxruntime-web (its
 * session created, then its first run).
 */
function firstInference(page: EnginePage, o: Options, fingerprint: string, runtime: "jitzoo" | "ort", kept = true) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq, runtime, kept }) => {
    const { jitzoo, ort, toOrt } = globalThis as unknown as PageGlobals;
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    if (runtime === "ort") {
      const ortFeeds = toOrt(jitzoo.feedsFor(await jitzoo.loadModel(bytes, { worker: false }), seq)); // made before the clock starts
      const start = performance.now();
      const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
      await session.run(ortFeeds);
      const ms = performance.now() - start;
      await session.release();
      return ms;
    }
    const start = performance.now();
    const model = await jitzoo.loadModel(bytes, { gateway, fingerprint, ...(kept ? {} : { store: null }) });
    await model.run(jitzoo.feedsFor(model, seq));
    const ms = performance.now() - start;
    await model.close();
    return ms;
  }, { url: `/models/${o.model}`, gateway: o.gateway, fingerprint, seq: o.seq, runtime, kept });
}

/** Calls of a kernel timed one by one, from its module's bytes: where an engine's optimizing tier takes over. */
const TIER_CALLS = 40;

/**
 * An engine's compile and tiers, on the SDK's generic matmul (a kernel every page has, no suite
 * needed) at [128, 768, 768]: compiling its bytes, then each of its first calls timed alone.
 * Steady is the median of the last ten calls; the first fast call is the first within 25% of it.
 */
function tierUp(page: EnginePage) {
  return page.evaluate(async ({ calls }) => {
    const { jitzoo } = globalThis as unknown as PageGlobals;
    const [m, k, n] = [128, 768, 768];
    const t0 = performance.now();
    const module = await WebAssembly.compile(jitzoo.genericModuleBytes());
    const compileMs = performance.now() - t0;
    const memory = new WebAssembly.Memory({ initial: Math.ceil((4 * (m * k + k * n + m * n) + 64) / 65536) });
    const { matmul } = new WebAssembly.Instance(module, { env: { memory } }).exports as { matmul: (...args: number[]) => void };
    const a = 64, b = a + 4 * m * k, c = b + 4 * k * n;
    const floats = new Float32Array(memory.buffer);
    for (let i = 0; i < m * k + k * n; i++) floats[a / 4 + i] = Math.sin(i);
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      matmul(a, b, c, m, k, n);
      times.push(performance.now() - t);
    }
    return { compileMs, times };
  }, { calls: TIER_CALLS });
}

/** What {@link tierUp} measured, as figures: the first call against the steady one, and the calls until fast. */
function tiers({ compileMs, times }: { compileMs: number; times: number[] }) {
  const steady = [...times.slice(-10)].sort((x, y) => x - y)[5];
  const fastFrom = times.findIndex((t) => t <= 1.25 * steady);
  return {
    generic_compile_ms: round(compileMs, 2), generic_first_call_ms: round(times[0]), generic_steady_call_ms: round(steady),
    generic_calls_until_fast: fastFrom + 1, generic_gflops: round((2 * 128 * 768 * 768) / steady / 1e6, 1),
  };
}

/** The tuned model in its worker, the same kernels on the main thread (kept in IndexedDB), and onnxruntime-web, calls interleaved. */
function compareInPage(page: EnginePage, o: Options, fingerprint: string) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq, rounds }) => {
    const { jitzoo, ort, toOrt } = globalThis as unknown as PageGlobals;
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const inWorker = await jitzoo.loadModel(bytes, { gateway, fingerprint });
    const onMain = await jitzoo.loadModel(bytes, { gateway, fingerprint, worker: false });
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
    const feeds = jitzoo.feedsFor(onMain, seq);
    const ortFeeds = toOrt(feeds);
    // both take the kept kernels (checked while their first runs go on the generic ones) before any is timed
    for (const model of [inWorker, onMain]) await jitzoo.runUntil(model, feeds, (s) => s.ops.every((op) => op.restored));
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

/**
 * A later page: from the model's bytes in hand to its first inference (kernels kept on the device:
 * the generic ones run while they are checked), to every op on its kept kernel, and to the
 * gateway's Welcome.
 */
function secondLoad(page: EnginePage, o: Options, fingerprint: string) {
  return page.evaluate(async ({ url, gateway, fingerprint, seq }) => {
    const { jitzoo } = globalThis as unknown as PageGlobals;
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const start = performance.now();
    const model = await jitzoo.loadModel(bytes, { gateway, fingerprint, tuning: { budget: 0 } });
    let welcomeMs = NaN;
    // the sessions open at the first run: the Welcome is the gateway's first answer
    const welcomed = new Promise<void>((resolve) => model.on("connection", (e) => {
      if (e.state === "open") { welcomeMs = performance.now() - start; resolve(); }
    }));
    const feeds = jitzoo.feedsFor(model, seq);
    await model.run(feeds);
    const firstMs = performance.now() - start;
    let keptMs = NaN;
    for (const end = performance.now() + 60_000; performance.now() < end;) {
      if (model.stats().ops.every((op) => op.restored)) {
        keptMs = performance.now() - start;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      await model.run(feeds);
    }
    const ops = model.stats().ops;
    await Promise.race([welcomed, new Promise((r) => setTimeout(r, 30_000))]);
    await model.close();
    return { firstMs, keptMs, welcomeMs, restored: ops.filter((op) => op.restored).length, ops: ops.length };
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

/** A new page of the SDK's site, loaded. */
async function openPage(browser: { newPage(): Promise<EnginePage> }, url: string): Promise<EnginePage> {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitFor(() => (globalThis as unknown as PageGlobals).ready === true, 60_000);
  return page;
}

/** Every figure of one engine: first inferences, tuning with its long tasks, the tuned model beside onnxruntime-web. */
async function benchEngine(engine: EngineName, o: Options, url: string) {
  const browser = await launchEngine(engine);
  try {
    const page = await openPage(browser, url);
    const fingerprint = `bench-browser-${engine}-${randomUUID()}`;
    say(`${engine} (${browser.version}): ${o.model} at seq ${o.seq}`);
    say("  first inferences: onnxruntime-web, then jitzoo on a new device kind...");
    const tier = tiers(await tierUp(page));
    say(`  the generic matmul [128, 768, 768]: compiled in ${tier.generic_compile_ms} ms, first call ${tier.generic_first_call_ms} ms, `
      + `steady ${tier.generic_steady_call_ms} ms (${tier.generic_gflops} GFLOP/s) from call ${tier.generic_calls_until_fast}`);
    const ortFirst = await firstInference(page, o, fingerprint, "ort");
    const coldFirst = await firstInference(page, o, fingerprint, "jitzoo");
    say(`    ${ortFirst.toFixed(0)} ms and ${coldFirst.toFixed(0)} ms; tuning in the page's worker...`);
    const worker = await tuneInPage(page, o, fingerprint, true);
    if (!worker.settled) say(`    not settled within the limit: ${worker.notes.join("; ")}`);
    say(`    settled in ${worker.seconds.toFixed(1)} s (${worker.runs} runs); main-thread long tasks meanwhile: ${worker.longTasks} (${worker.longTaskSource})`);
    say("  tuning on the page's main thread, for contrast (another new device kind)...");
    const main = await tuneInPage(page, o, `bench-browser-${engine}-main-${randomUUID()}`, false);
    say(`    settled in ${main.seconds.toFixed(1)} s; main-thread long tasks: ${main.longTasks} (longest ${main.longestTaskMs.toFixed(0)} ms)`);
    say(`  the tuned model beside onnxruntime-web, ${o.rounds} rounds interleaved...`);
    const compared = await compareInPage(page, o, fingerprint);
    const warmFirst = await firstInference(page, o, fingerprint, "jitzoo", false);
    const second = await secondLoad(await openPage(browser, url), o, fingerprint);
    return {
      engine, browser: browser.version, ...(engine === "chromium" ? { chromium: browser.version.replace(/^chromium /, "") } : {}),
      model: o.model, seq: o.seq, onnxruntime_web: compared.ortVersion, clock: worker.clock.name, clock_resolution_ms: worker.clock.resolutionMs,
      tuned_worker_ms: round(compared.workerMs), tuned_main_thread_ms: round(compared.mainMs), ort_web_ms: round(compared.ortMs),
      speedup_vs_ort_web: round(compared.ortMs / compared.workerMs), speedup_vs_onnxruntime_web: round(compared.ortMs / compared.workerMs),
      speedup_vs_ort_web_main_thread: round(compared.ortMs / compared.mainMs),
      max_rel_error_vs_ort_web: Number(compared.error.toExponential(2)),
      first_inference_ms: round(coldFirst, 0), first_inference_warm_zoo_ms: round(warmFirst, 0), first_inference_kept_ms: round(second.firstMs, 0),
      onnxruntime_web_first_inference_ms: round(ortFirst, 0),
      tuning_worker_s: round(worker.seconds, 1), long_tasks: worker.longTasks, long_tasks_worker: worker.longTasks,
      longest_task_worker_ms: round(worker.longestTaskMs, 0), long_task_source: worker.longTaskSource,
      tuning_main_thread_s: round(main.seconds, 1), long_tasks_main_thread: main.longTasks, longest_task_main_thread_ms: round(main.longestTaskMs, 0),
      second_load_first_tuned_inference_ms: round(second.firstMs, 0), second_load_gateway_welcome_ms: round(second.welcomeMs, 0),
      second_load_kept_kernels_in_use_ms: round(second.keptMs, 0),
      second_load_restored_ops: second.restored, ops: second.ops, ...tier,
    };
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const missing = o.engines.map(engineMissing).filter(Boolean);
  if (missing.length) throw new Error(missing.join("; "));
  const site = await serveSite({ models: { [o.model]: join(o.dir, o.model) }, pages: { "/": SDK_PAGE } });
  try {
    const engines = [];
    for (const engine of o.engines) engines.push(await benchEngine(engine, o, site.url));
    const build = sizes();
    if (o.json) {
      // one engine: its figures as one object (as before --engine); several: { engines: [...] }
      console.log(JSON.stringify(engines.length === 1 ? { ...engines[0], ...build } : { bench: "browser", model: o.model, seq: o.seq, engines, ...build }));
      return;
    }
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    for (const f of engines) {
      console.log(`
${f.model}, seq ${f.seq}, ${f.browser}, clock ${f.clock} (${f.clock_resolution_ms} ms)
  latency after tuning (median of ${o.rounds})   jitzoo in its worker ${f.tuned_worker_ms} ms, on the main thread ${f.tuned_main_thread_ms} ms, onnxruntime-web ${f.onnxruntime_web} ${f.ort_web_ms} ms
  speedup vs onnxruntime-web                 ${f.speedup_vs_ort_web}× (worker), ${f.speedup_vs_ort_web_main_thread}× (main thread)   target ≥ 1.3×; outputs agree within ${f.max_rel_error_vs_ort_web}
  first inference (bytes in hand to output)  jitzoo ${f.first_inference_ms} ms on a new device kind, ${f.first_inference_warm_zoo_ms} ms once the zoo has elected (nothing kept), ${f.first_inference_kept_ms} ms on the kept kernels; onnxruntime-web ${f.onnxruntime_web_first_inference_ms} ms   target ≤ 1.2× onnxruntime-web's
  main-thread long tasks while tuning         worker mode ${f.long_tasks_worker} (longest ${f.longest_task_worker_ms} ms) in ${f.tuning_worker_s} s; main-thread mode ${f.long_tasks_main_thread} (longest ${f.longest_task_main_thread_ms} ms) in ${f.tuning_main_thread_s} s (${f.long_task_source})   target: none in worker mode
  an engine's tiers (the generic matmul)     compiled in ${f.generic_compile_ms} ms; first call ${f.generic_first_call_ms} ms, steady ${f.generic_steady_call_ms} ms (${f.generic_gflops} GFLOP/s) from call ${f.generic_calls_until_fast}
  a later page                               first inference after ${f.second_load_first_tuned_inference_ms} ms; every op on its kept kernel after ${f.second_load_kept_kernels_in_use_ms} ms (${f.second_load_restored_ops} of ${f.ops} ops kept); the gateway's first answer after ${f.second_load_gateway_welcome_ms} ms`);
    }
    console.log(`  browser build                              jitzoo.js ${kb(build.bundle_bytes)} (${kb(build.bundle_gzip_bytes)} gzipped), worker.js ${kb(build.worker_bytes)} (${kb(build.worker_gzip_bytes)} gzipped)`);
  } finally {
    await site.close();
  }
}

main().catch((e: Error) => {
  say(`bench-browser: ${e.message}`);
  process.exit(1);
});
