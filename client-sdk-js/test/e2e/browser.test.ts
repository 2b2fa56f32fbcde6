// The SDK in a real browser: the package root bundled for the browser (esbuild), served with a
// model to headless Chromium (Debian's, driven by playwright-core), where the page loads the
// model, tunes it through the suite while it infers, and checks its outputs against the SDK's
// reference kernels run in the same page. Its reports reach the zoo like any device's, and a
// reload starts every op on the kernel it settled on, kept in IndexedDB. The gateway restarts
// under a tuning page, which reconnects and resumes; a page that leaves mid-tuning reports what it
// timed; an abort stops the page's loop.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveSite, SDK_PAGE, type PageSdk, type Site } from "../../tools/src/site.js";
import { MODELS_DIR, modelsMissing } from "../support/models.js";
import { REAL_EXPORTS } from "../support/real-exports.js";
import { awaitMeasurements, GATEWAY, restartGateway, zooGet } from "./support.js";

const CHROMIUM = process.env.JITZOO_CHROMIUM ?? "/usr/bin/chromium";
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SEQ = 8;

/** The package root bundled for the browser with esbuild, as an app's bundler would: what gets in. */
async function bundleInputs(): Promise<string[]> {
  const bundle = await build({
    entryPoints: [join(PACKAGE, "dist/index.js")], bundle: true, format: "esm", platform: "browser",
    write: false, metafile: true, logLevel: "silent",
  });
  return Object.keys(bundle.metafile.inputs);
}

/** A new page (in a context of its own, unless given) with the SDK loaded. */
async function open(browser: Browser, url: string, context?: BrowserContext): Promise<Page> {
  const page = await (context ?? await browser.newContext()).newPage();
  page.on("console", (m) => { if (m.type() === "error") console.error(`chromium: ${m.text()}`); });
  await page.goto(url);
  await page.waitForFunction(() => "jitzoo" in globalThis);
  return page;
}

type Jitzoo = PageSdk;
/** The note of a model whose kernels run on one thread because the page is not cross-origin isolated. */
const ONE_THREAD = expect.stringMatching(/^kernels run on one thread: no SharedArrayBuffer here \(the page is not cross-origin isolated/);
/** Users' own files (real exports: int8, 4-bit with grouped-query attention and rotary embeddings, float16 vision) a page runs. */
const USERS_FILES = ["bert_int8.onnx", "llama_q4.onnx", "vit_fp16.onnx"];
/** A decoder with a KV cache (`past_key_values.N.*` in, `present.N.*` out) to generate with. */
const DECODER = "gpt2_kv.onnx";

/** What a page keeps of its tuning, for the test to poll. */
interface Progress { timed: number; states: string[]; acked: number; ranked: number; settled: number; failed: string[]; log: string[] }

describe.skipIf(!GATEWAY || modelsMissing || !existsSync(CHROMIUM))("the SDK in headless Chromium", () => {
  let browser: Browser;
  let site: Site;

  beforeAll(async () => {
    // the single-file build (dist/browser/jitzoo.js, beside it the worker it starts) on a page of its own, the model beside it
    const users = Object.fromEntries([...USERS_FILES, DECODER].filter((f) => existsSync(join(REAL_EXPORTS, "tiny", f))).map((f) => [f, join(REAL_EXPORTS, "tiny", f)]));
    site = await serveSite({ models: { "bert_layer.onnx": join(MODELS_DIR, "bert_layer.onnx"), ...users }, pages: { "/": SDK_PAGE } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run"] });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("loads a model, tunes it through the suite while it infers, matches the reference, and starts from IndexedDB after a reload", async () => {
    expect((await bundleInputs()).filter((f) => f.startsWith("node:") || /node_modules\/ws\//.test(f))).toEqual([]);
    const context = await browser.newContext(); // one context: the reload keeps its IndexedDB
    const page = await open(browser, site.url, context);
    const fingerprint = `e2e-browser-${randomUUID()}`;
    const workers: string[] = [];
    page.on("worker", (w) => workers.push(new URL(w.url()).pathname));
    const result = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const reference = await j.loadModel("/models/bert_layer.onnx", { worker: false }); // the reference kernels, on the page's thread
      const want = Object.values(await reference.run(j.feedsFor(reference, seq)))[0].data as Float32Array;
      const model = await j.loadModel("/models/bert_layer.onnx", { gateway, fingerprint, tuning: { budget: 1 } });
      const events = { connection: [] as string[], acked: 0, newBest: 0 };
      model.on("connection", (e) => events.connection.push(e.state));
      model.on("new-best", () => events.newBest++);
      model.on("report-acked", () => events.acked++);
      const stats = await j.runUntilSettled(model, j.feedsFor(model, seq), { maxSeconds: 120 });
      const got = Object.values(await model.run(j.feedsFor(model, seq)))[0].data as Float32Array;
      const device = await j.probeFeatures();
      await model.close();
      return {
        settled: stats.settled, notes: stats.notes, clock: stats.clock, engine: device.engine, events,
        ops: stats.ops.map((o) => ({ key: o.key, kernelId: o.kernelId, source: o.source, refused: o.refused, swaps: o.history.length })),
        error: j.maxRelativeError(got, want),
      };
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });

    expect(result.notes).toEqual([ONE_THREAD]); // a plain page has no SharedArrayBuffer, and the model says so
    expect(result.settled).toBe(true);
    expect(result.ops.length).toBe(8);
    for (const op of result.ops) {
      expect(op.source, op.key).toBe("wasm");
      expect(op.refused, op.key).toBe(0);
    }
    expect(result.error).toBeLessThanOrEqual(1e-4);
    // the events an app listens to, through the real stack: the session opened, every op's report acknowledged
    expect(result.events.connection).toEqual(["open"]);
    expect(result.events.acked).toBe(8);
    expect(result.events.newBest).toBe(result.ops.reduce((n, o) => n + o.swaps - 1, 0));
    expect(result.engine).toMatch(/^chromium \d+$/);
    expect(result.clock.name).toBe("performance.now");
    expect(result.clock.crossOriginIsolated).toBe(false); // a plain page: the coarse clock the SDK times in batches against
    // the tuned model ran in a dedicated worker (the default in a page), the reference one on the page's thread
    expect(workers).toEqual(["/browser/worker.js"]);
    // a reload takes for every op the kernel the page settled on, kept in IndexedDB, once checked: nothing waits for the gateway
    await page.reload();
    await page.waitForFunction(() => "jitzoo" in globalThis);
    const reloaded = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const model = await j.loadModel("/models/bert_layer.onnx", { gateway, fingerprint, tuning: { budget: 0 } });
      await j.runUntil(model, j.feedsFor(model, seq), (s) => s.ops.every((o) => o.restored));
      const ops = model.stats().ops.map((o) => ({ key: o.key, kernelId: o.kernelId, restored: o.restored }));
      await model.close();
      return ops;
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });
    const tuned = new Map(result.ops.map((o) => [o.key, o.kernelId]));
    for (const op of reloaded) {
      expect(op.restored, op.key).toBe(true);
      expect(op.kernelId, op.key).toBe(tuned.get(op.key));
    }
    // the page's reports reach the zoo through Kafka, like any device's
    for (const deadline = Date.now() + 30_000; ;) {
      const count = Number((await zooGet(`/api/v1/reports/count?fingerprint=${fingerprint}`)).body.count ?? 0);
      if (count >= 8 || Date.now() > deadline) {
        expect(count).toBeGreaterThanOrEqual(8);
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 240_000);

  /** Starts tuning the model in the page (not awaited: `globalThis.done`), its progress in `globalThis.progress`. */
  async function startTuning(page: Page, fingerprint: string): Promise<void> {
    await page.evaluate(({ gateway, fingerprint, seq }) => {
      const w = globalThis as unknown as { jitzoo: Jitzoo; progress: Progress; done: Promise<unknown> };
      const j = w.jitzoo;
      w.progress = { timed: 0, states: [], acked: 0, ranked: 0, settled: 0, failed: [], log: [] };
      w.done = (async () => {
        const model = await j.loadModel("/models/bert_layer.onnx", {
          gateway, fingerprint, tuning: { budget: 1 }, reconnect: { attempts: 60, baseDelayMs: 250, maxDelayMs: 2000 },
          log: (line) => w.progress.log.push(line),
        });
        model.on("kernel-timed", () => w.progress.timed++);
        model.on("connection", (e) => w.progress.states.push(e.state));
        model.on("op-settled", () => w.progress.settled++);
        model.on("report-acked", (e) => { w.progress.acked++; w.progress.ranked += e.ranked; });
        model.on("report-failed", (e) => w.progress.failed.push(`${e.op}: ${e.why}`));
        const stats = await j.runUntilSettled(model, j.feedsFor(model, seq), { maxSeconds: 240 });
        await model.close();
        return { settled: stats.settled, notes: stats.notes, ops: stats.ops.length };
      })();
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });
  }

  const progress = (page: Page) => page.evaluate(() => (globalThis as unknown as { progress: Progress }).progress);

  it("reconnects and resumes its session when the gateway restarts mid-tuning; the zoo stores each report once", async () => {
    const page = await open(browser, site.url);
    const fingerprint = `e2e-restart-${randomUUID()}`;
    await startTuning(page, fingerprint);
    await page.waitForFunction(() => (globalThis as unknown as { progress: Progress }).progress.timed >= 2, null, { timeout: 120_000 });
    await restartGateway();
    const result = await page.evaluate(() => (globalThis as unknown as { done: Promise<{ settled: boolean; notes: string[]; ops: number }> }).done);
    const seen = await progress(page);
    expect(result.notes).toEqual([ONE_THREAD]);
    expect(result.settled).toBe(true);
    expect(seen.states).toContain("reconnecting");
    expect(seen.states).toContain("resumed");
    expect(seen.states).not.toContain("failed");
    // on a failure, the page's log says what the session went through
    expect({ acked: seen.acked, failed: seen.failed }, seen.log.join("\n")).toEqual({ acked: result.ops, failed: [] });
    // every measurement reported is in the zoo once, those resent after the restart included
    expect(await awaitMeasurements(fingerprint, seen.ranked)).toBe(seen.ranked);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await awaitMeasurements(fingerprint, seen.ranked)).toBe(seen.ranked);
  }, 300_000);

  it("reports what it timed when the page goes away mid-tuning (pagehide)", async () => {
    const page = await open(browser, site.url);
    const fingerprint = `e2e-pagehide-${randomUUID()}`;
    await startTuning(page, fingerprint);
    await page.waitForFunction(() => (globalThis as unknown as { progress: Progress }).progress.timed >= 4, null, { timeout: 120_000 });
    const before = await progress(page);
    expect(before.settled).toBeLessThan(8);
    await page.goto("about:blank"); // pagehide: every op still tuning reports
    expect(await awaitMeasurements(fingerprint, before.ranked + 1)).toBeGreaterThan(before.ranked);
  }, 300_000);

  it("stops loading and tuning in the page when aborted, with the signal's reason; a worker that cannot start fails the load", async () => {
    const page = await open(browser, site.url);
    const outcome = await page.evaluate(async ({ gateway, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const early = new AbortController();
      early.abort();
      const load = await j.loadModel("/models/bert_layer.onnx", { gateway, signal: early.signal }).then(() => "loaded", (e: Error) => e.name);
      const model = await j.loadModel("/models/bert_layer.onnx", { gateway, fingerprint: `e2e-abort-${Date.now()}` });
      const controller = new AbortController();
      const tuning = await j.runUntilSettled(model, j.feedsFor(model, seq), {
        signal: controller.signal, onRun: (r: number) => { if (r === 3) controller.abort(); },
      }).then(() => "settled", (e: Error) => e.name);
      // a worker script that is not there fails the load with a coded error, not a hang
      const missing = await j.loadModel("/models/bert_layer.onnx", { worker: { url: "/no-such-worker.js" } }).then(() => "loaded", (e: { code?: string }) => e.code);
      return { load, tuning, runs: model.stats().runs, missing };
    }, { gateway: GATEWAY!, seq: SEQ });
    expect(outcome).toEqual({ load: "AbortError", tuning: "AbortError", runs: 4, missing: "worker_failed" });
  }, 120_000);

  it.skipIf(!existsSync(join(REAL_EXPORTS, "tiny")))("runs users' own files in its worker on the suite's kernels: int8, 4-bit and float16 real exports, matching the reference kernels", async () => {
    const page = await open(browser, site.url);
    const results = await page.evaluate(async ({ gateway, files, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const rows = [];
      for (const file of files) {
        const url = `/models/${file}`;
        const reference = await j.loadModel(url, { worker: false }); // the reference kernels, on the page's thread
        const feeds = j.feedsFor(reference, seq);
        // token ids within the tiny vocabularies (512)
        if (feeds.input_ids) feeds.input_ids = { data: BigInt64Array.from(feeds.input_ids.data as BigInt64Array, (x) => x % 500n), dims: feeds.input_ids.dims };
        const want = Object.values(await reference.run(feeds))[0].data as Float32Array;
        const model = await j.loadModel(url, { gateway, fingerprint: `e2e-browser-users-${crypto.randomUUID()}`, tuning: { budget: 0 } });
        const got = Object.values((await j.runUntilServed(model, feeds)).outputs)[0].data as Float32Array; // past the generic kernels
        const stats = model.stats();
        await model.close();
        rows.push({ file, notes: stats.notes, sources: [...new Set(stats.ops.map((o) => o.source))], error: j.maxRelativeError(got, want) });
      }
      return rows;
    }, { gateway: GATEWAY!, files: USERS_FILES, seq: SEQ });
    for (const r of results) {
      expect(r, r.file).toMatchObject({ notes: [ONE_THREAD], sources: ["wasm"] });
      // float16 values are rounded after every op: a float32 kernel and the float64 reference may land a half's ulp apart
      expect(r.error, r.file).toBeLessThanOrEqual(r.file.includes("fp16") ? 2e-3 : 1e-4);
    }
  }, 120_000);

  it.skipIf(!existsSync(join(REAL_EXPORTS, "tiny", DECODER)))("generates in its worker on the suite's kernels: the reference kernels' tokens, streamed to the page, stopped by an abort", async () => {
    const page = await open(browser, site.url);
    const outcome = await page.evaluate(async ({ gateway, file }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const url = `/models/${file}`, prompt = [5, 17, 250, 3, 99], sampling = { maxNewTokens: 12, temperature: 1, seed: 5 };
      const reference = await j.loadModel(url, { worker: false }); // the reference kernels, on the page's thread
      const want = await reference.generate(prompt, sampling);
      const model = await j.loadModel(url, { gateway, fingerprint: `e2e-browser-generate-${crypto.randomUUID()}` });
      // the prompt's first runs are on the SDK's generic kernels: short generations until its ops' Welcome kernels are in
      for (const end = Date.now() + 60_000; !model.stats().ops.some((o) => o.source === "wasm") && Date.now() < end;) {
        await model.generate(prompt, { maxNewTokens: 1 });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const runsBefore = model.stats().runs;
      const streamed: number[] = [];
      const got = await model.generate(prompt, { ...sampling, onToken: (t: number) => streamed.push(t) });
      const controller = new AbortController();
      const aborted = await model.generate(prompt, { maxNewTokens: 200, signal: controller.signal, onToken: (_t: number, i: number) => { if (i === 2) controller.abort(); } })
        .then(() => "finished", (e: Error) => e.name);
      const stats = model.stats();
      return { want: want.tokens, got: got.tokens, streamed, aborted, runs: stats.runs - runsBefore, cache: stats.kvCacheBytes, notes: stats.notes, sources: [...new Set(stats.ops.map((o) => o.source))] };
    }, { gateway: GATEWAY!, file: DECODER });
    expect(outcome.got).toEqual(outcome.want);
    expect(outcome.streamed).toEqual(outcome.got);
    // the prompt's ops on generated kernels; the decode steps' ops (one-row products, a bucket's attention) tuned as they meet again
    expect(outcome).toMatchObject({ aborted: "AbortError", cache: 0, notes: [ONE_THREAD] });
    expect(outcome.sources).toContain("wasm");
    expect(outcome.runs).toBeGreaterThan(12 + 2);
    expect(outcome.runs).toBeLessThan(12 + 200);
  }, 120_000);

  it("runs the model's kernels on threads in a cross-origin-isolated page: split kernels, the worker pool in the model's worker", async () => {
    const isolated = await serveSite({ models: { "bert_layer.onnx": join(MODELS_DIR, "bert_layer.onnx") }, pages: { "/": SDK_PAGE } },
      0, { isolated: true });
    try {
      const page = await open(browser, isolated.url);
      const workers: string[] = [];
      page.on("worker", (w) => workers.push(new URL(w.url()).pathname));
      const result = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
        const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
        const reference = await j.loadModel("/models/bert_layer.onnx", { worker: false });
        const want = Object.values(await reference.run(j.feedsFor(reference, seq)))[0].data as Float32Array;
        const model = await j.loadModel("/models/bert_layer.onnx", { gateway, fingerprint, threads: 2, tuning: { budget: 1 } });
        const stats = await j.runUntilSettled(model, j.feedsFor(model, seq), { maxSeconds: 120 });
        const got = Object.values(await model.run(j.feedsFor(model, seq)))[0].data as Float32Array;
        await model.close();
        return {
          isolated: globalThis.crossOriginIsolated, threads: stats.threads, settled: stats.settled, notes: stats.notes,
          refused: stats.ops.reduce((n, o) => n + o.refused, 0), sources: [...new Set(stats.ops.map((o) => o.source))],
          error: j.maxRelativeError(got, want),
        };
      }, { gateway: GATEWAY!, fingerprint: `e2e-browser-threads-${randomUUID()}`, seq: SEQ });
      expect(result).toMatchObject({ isolated: true, threads: 2, settled: true, notes: [], refused: 0, sources: ["wasm"] });
      expect(result.error).toBeLessThanOrEqual(1e-4);
      // the page started one kernel thread for the model's worker
      expect(workers.sort()).toEqual(["/browser/thread.js", "/browser/worker.js"]);
    } finally {
      await isolated.close();
    }
  }, 240_000);
});
