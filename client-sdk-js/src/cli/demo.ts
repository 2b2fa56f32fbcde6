#!/usr/bin/env node
// ./jitzoo demo: serves the live demo page against the running suite, or (--screenshot) opens it in
// headless Chromium for a while and saves a picture of it.
import "../node-platform.js";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { createClient } from "../client.js";
import { serveDemo } from "../demo/server.js";
import { chromiumPath } from "./site.js";

const usage = `usage: demo [--port N] [--model FILE] [--seq N] [--screenshot FILE.png [--seconds N]]
  --port        where to serve the page (default 8090)
  --model       the ONNX file (default $JITZOO_MODELS/bert_layer.onnx)
  --seq         sequence length (default 128)
  --screenshot  open the page in headless Chromium, wait, save a screenshot there and exit
  --seconds     how long the page runs before the screenshot (default 45)`;

interface Options { port: number; model: string; seq: number; screenshot?: string; seconds: number; gateway: string }

function parse(argv: string[]): Options {
  const o: Options = {
    port: 8090, model: join(process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models"), "bert_layer.onnx"), seq: 128, seconds: 45,
    gateway: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--model") o.model = argv[++i];
    else if (a === "--screenshot") o.screenshot = argv[++i];
    else if (a === "--port" || a === "--seq" || a === "--seconds") {
      const n = Number(argv[++i]);
      if (!(Number.isInteger(n) && n >= 0)) throw new Error(`${a} must be a whole number\n${usage}`);
      o[a.slice(2) as "port" | "seq" | "seconds"] = n;
    } else throw new Error(`unknown option ${a}\n${usage}`);
  }
  return o;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const probe = createClient(o.gateway, { connectTimeoutMs: 3000 });
  await probe.ready().catch(() => { throw new Error(`no gateway at ${o.gateway}: start the suite first (./jitzoo up)`); });
  probe.close();
  const site = await serveDemo({ gateway: o.gateway, model: o.model, seq: o.seq, port: o.screenshot ? 0 : o.port });
  if (!o.screenshot) {
    say(`the demo is at ${site.url} (tuning through ${o.gateway}); Ctrl-C stops it`);
    process.on("SIGINT", () => void site.close().then(() => process.exit(0)));
    return;
  }
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--no-first-run"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (e) => say(`page error: ${e.message}`));
    await page.goto(site.url);
    say(`the demo runs in headless Chromium for ${o.seconds} s...`);
    await page.waitForTimeout(o.seconds * 1000);
    await page.screenshot({ path: o.screenshot, fullPage: true });
    const seen = await page.evaluate(() => {
      const d = (globalThis as unknown as { demo: { jitzoo: unknown[]; ort: unknown[]; swaps: unknown[]; settled: number; ops: number } }).demo;
      return { inferences: d.jitzoo.length, ort: d.ort.length, swaps: d.swaps.length - d.ops, settled: d.settled, ops: d.ops };
    });
    say(`saved ${o.screenshot}: ${seen.inferences} inferences, ${seen.ort} onnxruntime-web runs, ${seen.swaps} kernel swaps, ${seen.settled} of ${seen.ops} ops settled`);
  } finally {
    await browser.close();
    await site.close();
  }
}

main().catch((e: Error) => {
  say(`demo: ${e.message}`);
  process.exit(1);
});
