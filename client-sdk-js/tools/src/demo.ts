#!/usr/bin/env node
// ./jitzoo demo: serves the live demo page against the running suite, or (--screenshot) opens it in
// headless Chromium for a while and saves a picture of it.
import "@jitzoo/client/node";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { parseOptions, wholeNumber } from "./args.js";
import { chromiumPath } from "./site.js";
import { createClient } from "@jitzoo/client/internal";
import { serveDemo } from "./demo/server.js";

const usage = `usage: demo [--port N] [--model FILE] [--seq N] [--new N] [--screenshot FILE.png [--seconds N]]
  --port        where to serve the page (default 8090)
  --model       the ONNX file (default $JITZOO_MODELS/bert_layer.onnx); a decoder generates, its tokens/s live
  --seq         sequence length, a decoder's prompt (default 128)
  --new         a decoder's new tokens a generation (default 32)
  --screenshot  open the page in headless Chromium, wait, save a screenshot there and exit
  --seconds     how long the page runs before the screenshot (default 45)`;

interface Options { port: number; model: string; seq: number; fresh: number; screenshot?: string; seconds: number; gateway: string }

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    port: { type: "string", default: "8090" },
    model: { type: "string", default: join(process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models"), "bert_layer.onnx") },
    seq: { type: "string", default: "128" },
    new: { type: "string", default: "32" },
    screenshot: { type: "string" },
    seconds: { type: "string", default: "45" },
  } }, usage);
  return {
    port: wholeNumber("port", v.port, usage, 0), model: v.model, seq: wholeNumber("seq", v.seq, usage), fresh: wholeNumber("new", v.new, usage),
    screenshot: v.screenshot,
    seconds: wholeNumber("seconds", v.seconds, usage, 0), gateway: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const probe = createClient(o.gateway, { connectTimeoutMs: 3000 });
  await probe.ready().catch(() => { throw new Error(`no gateway at ${o.gateway}: start the suite first (./jitzoo up)`); });
  probe.close();
  const site = await serveDemo({ gateway: o.gateway, model: o.model, seq: o.seq, fresh: o.fresh, port: o.screenshot ? 0 : o.port });
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
