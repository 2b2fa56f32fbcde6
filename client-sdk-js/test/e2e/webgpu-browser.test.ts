// WebGPU in headless Chromium (`--enable-unsafe-webgpu`: SwiftShader, a software GPU), through the
// suite: the page's MiniLM-shaped encoder runs on jitzoo's WGSL kernels and tunes every op through
// a WGSL session; its outputs match the reference kernels run in the same page; a device destroyed
// under a run is replaced and the page's run() goes on; after a reload the kernels and shaders kept
// in IndexedDB have their pipelines built while the model loads, none on a run's path.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveSite, SDK_PAGE, type PageSdk, type Site } from "../../tools/src/site.js";
import { MODELS_DIR, modelsMissing } from "../support/models.js";
import { GATEWAY, zooGet } from "./support.js";

const CHROMIUM = process.env.JITZOO_CHROMIUM ?? "/usr/bin/chromium";
const SEQ = 8;
type Jitzoo = PageSdk;
/** What the page sees of a GPU model (its `gpu` context is not part of the Model interface). */
type GpuHandle = { gpu: { device: GPUDevice } };

describe.skipIf(!GATEWAY || modelsMissing || !existsSync(CHROMIUM))("WebGPU in headless Chromium", () => {
  let browser: Browser;
  let site: Site;

  beforeAll(async () => {
    site = await serveSite({ models: { "minilm.onnx": join(MODELS_DIR, "minilm.onnx") }, pages: { "/": SDK_PAGE } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run", "--enable-unsafe-webgpu"] });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("tunes every op as WGSL, matches the reference, recovers a lost device mid-run, and reloads with no pipeline built in a run", async () => {
    const context = await browser.newContext(); // one context: the reload keeps its IndexedDB
    const page = await context.newPage();
    page.on("console", (m) => { if (m.type() === "error") console.error(`chromium: ${m.text()}`); });
    await page.goto(site.url);
    await page.waitForFunction(() => "jitzoo" in globalThis);
    const fingerprint = `e2e-webgpu-browser-${randomUUID()}`;
    const result = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const output = async (m: Awaited<ReturnType<Jitzoo["loadModel"]>>) => Object.values(await m.run(j.feedsFor(m, seq)))[0].data as Float32Array;
      const adapter = await (navigator as unknown as { gpu: GPU }).gpu.requestAdapter();
      const want = await output(await j.loadModel("/models/minilm.onnx", { worker: false }));
      const model = await j.loadModel("/models/minilm.onnx", { gateway, fingerprint, backend: "webgpu", worker: false, tuning: { budget: 1 } });
      const refused: string[] = [];
      model.on("kernel-refused", (e) => refused.push(`${e.op}: ${e.why}`));
      const errors = [j.maxRelativeError(await output(model), want)];
      const running = output(model);
      (model as unknown as GpuHandle).gpu.device.destroy();
      errors.push(j.maxRelativeError(await running, want));
      const stats = await j.runUntilSettled(model, j.feedsFor(model, seq), { maxSeconds: 200 });
      errors.push(j.maxRelativeError(await output(model), want));
      await model.close();
      return {
        adapter: adapter ? { vendor: adapter.info?.vendor, architecture: adapter.info?.architecture } : null,
        backend: stats.backend, gpu: stats.gpu, settled: stats.settled, notes: stats.notes, refused, errors,
        ops: stats.ops.map((o) => ({ key: o.key, kernelId: o.kernelId, source: o.source, swaps: o.history.length })),
      };
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });

    expect(result.adapter).not.toBeNull();
    expect(result.backend).toBe("webgpu");
    expect(result.notes).toEqual([]);
    expect(result.settled).toBe(true);
    expect(result.refused).toEqual([]);
    for (const error of result.errors) expect(error).toBeLessThanOrEqual(1e-4);
    expect(result.gpu!.deviceLosses).toBe(1);
    expect(result.gpu!.submitsPerRun).toBe(1);
    expect(result.gpu!.timer).toBe("timestamp-query");
    expect(result.gpu!.timestampQuantumNs).toBeGreaterThan(0);
    expect(result.ops.length).toBeGreaterThanOrEqual(8);
    for (const op of result.ops) expect(op.source, op.key).toBe("wgsl");
    expect(result.ops.some((op) => op.swaps > 1)).toBe(true);

    await page.reload();
    await page.waitForFunction(() => "jitzoo" in globalThis);
    const reloaded = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const model = await j.loadModel("/models/minilm.onnx", { gateway, fingerprint, backend: "webgpu", worker: false, tuning: { budget: 0 } });
      await model.run(j.feedsFor(model, seq));
      const stats = model.stats();
      await model.close();
      return { gpu: stats.gpu, ops: stats.ops.map((o) => ({ key: o.key, kernelId: o.kernelId, restored: o.restored })) };
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });
    const tuned = new Map(result.ops.map((o) => [o.key, o.kernelId]));
    for (const op of reloaded.ops) {
      expect(op.restored, op.key).toBe(true);
      expect(op.kernelId, op.key).toBe(tuned.get(op.key));
    }
    expect(reloaded.gpu!.pipelinesBuiltInRuns).toBe(0);

    // a page's default: the model in a dedicated worker, on WebGPU there too
    const inWorker = await page.evaluate(async ({ gateway, fingerprint, seq }) => {
      const j = (globalThis as unknown as { jitzoo: Jitzoo }).jitzoo;
      const model = await j.loadModel("/models/minilm.onnx", { gateway, fingerprint, backend: "webgpu", tuning: { budget: 0 } });
      const got = Object.values(await model.run(j.feedsFor(model, seq)))[0].data as Float32Array;
      const reference = await j.loadModel("/models/minilm.onnx", { worker: false });
      const expected = Object.values(await reference.run(j.feedsFor(reference, seq)))[0].data as Float32Array;
      const stats = model.stats();
      await model.close();
      return { backend: stats.backend, restored: stats.ops.every((o) => o.restored), error: j.maxRelativeError(got, expected) };
    }, { gateway: GATEWAY!, fingerprint, seq: SEQ });
    expect(inWorker.backend).toBe("webgpu");
    expect(inWorker.restored).toBe(true); // the worker reads the same IndexedDB
    expect(inWorker.error).toBeLessThanOrEqual(1e-4);
    const count = Number((await zooGet(`/api/v1/reports/count?fingerprint=${fingerprint}`)).body.count ?? 0);
    expect(count).toBeGreaterThanOrEqual(1);
  }, 300_000);
});
