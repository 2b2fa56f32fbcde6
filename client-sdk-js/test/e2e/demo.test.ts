// The live demo in headless Chromium against the suite: the page infers, runs onnxruntime-web
// beside it, tunes through the gateway, and its charts receive and draw the data.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Site } from "../../tools/src/site.js";
import { serveDemo } from "../../tools/src/demo/server.js";
import { MODELS_DIR, modelsMissing } from "../support/models.js";
import { REAL_EXPORTS } from "../support/real-exports.js";
import { GATEWAY } from "./support.js";

const CHROMIUM = process.env.JITZOO_CHROMIUM ?? "/usr/bin/chromium";

interface Seen { jitzoo: unknown[]; ort: unknown[]; swaps: { t: number }[]; timed: number; frames: number; ops: number; connection: string }

describe.skipIf(!GATEWAY || modelsMissing || !existsSync(CHROMIUM))("the demo page", () => {
  let browser: Browser;
  let site: Site;
  beforeAll(async () => {
    site = await serveDemo({ gateway: GATEWAY!, model: join(MODELS_DIR, "bert_layer.onnx"), seq: 8, ortEvery: 3 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run"] });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("opens, infers beside onnxruntime-web, tunes, and its charts update live", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(site.url);
    const seen = () => page.evaluate(() => (globalThis as unknown as { demo: Seen }).demo);
    await page.waitForFunction(() => {
      const d = (globalThis as unknown as { demo?: Seen }).demo;
      return d && d.jitzoo.length >= 30 && d.ort.length >= 3 && d.timed >= 1 && d.frames >= 2;
    }, null, { timeout: 90_000 });
    const first = await seen();
    expect(errors).toEqual([]);
    expect(first.ops).toBe(8);
    expect(first.connection).toBe("open");
    // the charts keep receiving data: more points a second later, and drawn (blue jitzoo points on the latency chart)
    await page.waitForTimeout(1500);
    const later = await seen();
    expect(later.jitzoo.length).toBeGreaterThan(first.jitzoo.length);
    expect(later.frames).toBeGreaterThan(first.frames);
    const blue = await page.evaluate(() => {
      const canvas = document.getElementById("latency") as HTMLCanvasElement;
      const pixels = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i] === 0x25 && pixels[i + 1] === 0x63 && pixels[i + 2] === 0xeb) n++;
      return n;
    });
    expect(blue).toBeGreaterThan(0);
    expect(await page.textContent("#speedup")).toMatch(/^\d+\.\d\d×$/);
  }, 120_000);
});

const DECODER = join(REAL_EXPORTS, "tiny", "gpt2_kv.onnx");

describe.skipIf(!GATEWAY || !existsSync(DECODER) || !existsSync(CHROMIUM))("the demo page with a decoder", () => {
  it("generates, beside onnxruntime-web driving the same loop, and shows tokens/s live", async () => {
    const site = await serveDemo({ gateway: GATEWAY!, model: DECODER, seq: 8, fresh: 12, ortEvery: 2 });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--no-first-run"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(site.url);
      await page.waitForFunction(() => {
        const d = (globalThis as unknown as { demo?: Seen & { generating: boolean } }).demo;
        return d && d.generating && d.jitzoo.length >= 6 && d.ort.length >= 3 && d.frames >= 2;
      }, null, { timeout: 90_000 });
      expect(errors).toEqual([]);
      expect(await page.textContent("#now")).toMatch(/^\d+\.\d tokens\/s$/);
      expect(await page.textContent("#ort")).toMatch(/^\d+\.\d tokens\/s$/);
      expect(await page.textContent("#now-label")).toContain("decode");
    } finally {
      await browser.close();
      await site.close();
    }
  }, 120_000);
});
