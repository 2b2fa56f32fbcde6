// The SDK in each browser engine here: Chromium (V8), Firefox (SpiderMonkey) and WebKitGTK
// (JavaScriptCore, Safari's engine), Debian's builds, driven alike (tools/src/engines.ts). In a
// cross-origin-isolated page each one probes its engine, loads a model in its worker, tunes it
// through the suite while it infers (on two kernel threads where the engine gives pages
// SharedArrayBuffer), matches the reference kernels run in the same page, and a later page starts
// every op on the kernel the first one settled on, kept in IndexedDB. The space serves each engine
// only kernels it can run: none is refused. Chromium's other flows are in browser.test.ts.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES, engineMissing, launchEngine, type EngineBrowser } from "../../tools/src/engines.js";
import { serveSite, SDK_PAGE, type PageSdk, type Site } from "../../tools/src/site.js";
import { MODELS_DIR, modelsMissing } from "../support/models.js";
import { GATEWAY } from "./support.js";

const SEQ = 8;
const MODEL = "/models/bert_layer.onnx";
type Jitzoo = PageSdk;

/** Engines the run must have (`./jitzoo test` installs them): missing, they fail the run instead of skipping. */
const REQUIRED = (process.env.JITZOO_ENGINES ?? "").split(",").filter(Boolean);

for (const engine of ENGINES) {
  const missing = engineMissing(engine);
  if (missing && REQUIRED.includes(engine)) throw new Error(`JITZOO_ENGINES names ${engine}, but ${missing}`);
  describe.skipIf(!GATEWAY || modelsMissing || missing)(`the SDK in ${engine}`, () => {
    let browser: EngineBrowser;
    let site: Site;

    beforeAll(async () => {
      site = await serveSite({ models: { "bert_layer.onnx": join(MODELS_DIR, "bert_layer.onnx") }, pages: { "/": SDK_PAGE } }, 0, { isolated: true });
      browser = await launchEngine(engine);
    });
    afterAll(async () => {
      await browser?.close();
      await site?.close();
    });

    it("probes its engine, tunes a model in its worker on the suite's kernels, matches the reference, and a later page starts from IndexedDB", async () => {
      const fingerprint = `e2e-${engine}-${randomUUID()}`;
      const page = await browser.newPage();
      await page.goto(site.url);
      await page.waitFor(() => (globalThis as unknown as { ready?: boolean }).ready === true);
      const result = await page.evaluate(async ({ gateway, fingerprint, seq, model: url }) => {
        const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
        const features = await j.probeFeatures();
        const reference = await j.loadModel(url, { worker: false }); // the reference kernels, on the page's thread
        const want = Object.values(await reference.run(j.feedsFor(reference, seq)))[0].data as Float32Array;
        const lines: string[] = [];
        const t0 = performance.now();
        const log = (line: string) => lines.push(`${Math.round(performance.now() - t0)} ms ${line}`);
        const model = await j.loadModel(url, { gateway, fingerprint, threads: 2, tuning: { budget: 1 }, log });
        const stats = await j.runUntilSettled(model, j.feedsFor(model, seq), { maxSeconds: 150 });
        const got = Object.values(await model.run(j.feedsFor(model, seq)))[0].data as Float32Array;
        await model.close();
        return {
          features, isolated: globalThis.crossOriginIsolated, sharedMemory: typeof SharedArrayBuffer === "function",
          settled: stats.settled, threads: stats.threads, notes: stats.notes, clock: stats.clock, runs: stats.runs, lines,
          ops: stats.ops.map((o) => ({ key: o.key, kernelId: o.kernelId, source: o.source, refused: o.refused, settled: o.settled, incumbents: o.history.length })),
          error: j.maxRelativeError(got, want),
        };
      }, { gateway: GATEWAY!, fingerprint, seq: SEQ, model: MODEL });

      const { features: f, threads, notes, clock } = result;
      console.log(`${engine}: ${JSON.stringify({ engine: f.engine, simd: f.simd, relaxedSimd: f.relaxedSimd, threads: f.threads, sharedMemory: result.sharedMemory, kernelThreads: threads, clock, notes })}`);
      // what each engine is, as the probe names it for the device kind
      expect(result.features.engine).toMatch({ chromium: /^chromium \d+$/, firefox: /^firefox \d+$/, webkit: /^safari \d+$/ }[engine]);
      expect(result.features.simd).toBe(true);
      expect(result.isolated).toBe(true);
      // unsettled, the message says which ops still tune and how far the tuning got
      expect(result.settled, `${result.runs} runs; ${JSON.stringify(result.ops.filter((o) => !o.settled))}\n${result.lines.slice(-30).join("\n")}`).toBe(true);
      expect(result.ops.length).toBe(8);
      for (const op of result.ops) {
        expect(op.source, op.key).toBe("wasm");
        expect(op.refused, op.key).toBe(0); // nothing served the engine cannot run (relaxed SIMD where it has none)
      }
      expect(result.error).toBeLessThanOrEqual(1e-4);
      // two kernel threads where the page has SharedArrayBuffer, one (and a note saying why) where it has none
      if (result.sharedMemory) expect({ threads: result.threads, notes: result.notes }).toEqual({ threads: 2, notes: [] });
      else {
        expect(result.threads).toBe(1);
        expect(result.notes).toEqual([expect.stringMatching(/^kernels run on one thread: no SharedArrayBuffer here though the page is cross-origin isolated/)]);
      }

      // a later page of the same browser takes for every op the kernel the first settled on, kept in IndexedDB
      // (its first runs on the generic kernels while the kept ones are checked)
      const later = await browser.newPage();
      await later.goto(site.url);
      await later.waitFor(() => (globalThis as unknown as { ready?: boolean }).ready === true);
      // (the page gives up after 2 minutes, with the model's log: a stuck load says where it stuck)
      const reloaded = await later.evaluate(async ({ gateway, fingerprint, seq, model: url }) => {
        const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
        const lines: string[] = [];
        const t0 = performance.now();
        const log = (line: string) => lines.push(`${Math.round(performance.now() - t0)} ms ${line}`);
        const work = (async () => {
          const model = await j.loadModel(url, { gateway, fingerprint, threads: 2, tuning: { budget: 0 }, log });
          await j.runUntil(model, j.feedsFor(model, seq), (s) => s.ops.every((o) => o.restored));
          const ops = model.stats().ops.map((o) => ({ key: o.key, kernelId: o.kernelId, restored: o.restored }));
          await model.close();
          return ops;
        })();
        const ops = await Promise.race([work, new Promise<undefined>((resolve) => setTimeout(resolve, 120_000))]);
        return { ops, lines };
      }, { gateway: GATEWAY!, fingerprint, seq: SEQ, model: MODEL });
      expect(reloaded.ops, `the later page did not finish within 2 minutes:\n${reloaded.lines.join("\n")}`).toBeDefined();
      const tuned = new Map(result.ops.map((o) => [o.key, o.kernelId]));
      expect(reloaded.ops!.map((o) => [o.key, o.restored, o.kernelId])).toEqual(reloaded.ops!.map((o) => [o.key, true, tuned.get(o.key)]));
    }, 300_000);
  });
}
