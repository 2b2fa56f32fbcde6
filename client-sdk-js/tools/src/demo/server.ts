// The demo's web server: the demo page (page.ts, built to tools/dist/demo/page.js), its settings, the
// model, the SDK and onnxruntime-web, on one local origin.
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SDK_LOADER, serveSite, type Site } from "../site.js";

/** The built page: tools/dist/demo/page.js, beside this file once built (found from tools/src/demo/ under a test runner too). */
const PAGE = join(dirname(fileURLToPath(import.meta.url)), "../../dist/demo/page.js");

export interface DemoOptions {
  /** The gateway the page tunes through. */
  gateway: string;
  /** The ONNX file. */
  model: string;
  /** Sequence length of the inputs (default 128). */
  seq?: number;
  /** onnxruntime-web runs once every this many inferences (default 5; a decoder's: generations). */
  ortEvery?: number;
  /** A decoder generates this many tokens a generation, after a prompt of `seq` tokens (default 32). */
  fresh?: number;
  /** The port (default any free one). */
  port?: number;
}

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jitzoo live</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #111827; background: #fafafa; }
  h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 14px; margin: 18px 0 6px; color: #374151; }
  .cards { display: flex; gap: 12px; margin-top: 12px; }
  .card { background: white; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px; min-width: 150px; }
  .card b { display: block; font-size: 22px; } .card span { color: #6b7280; font-size: 12px; }
  canvas { width: 100%; background: white; border: 1px solid #e5e7eb; border-radius: 8px; display: block; }
  #latency { height: 260px; } #timeline { height: 240px; }
  .legend i { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
  #tuning, #zoo { color: #374151; margin-top: 6px; }
</style></head>
<body>
  <h1>jitzoo, live</h1><div id="model">loading…</div>
  <div class="cards">
    <div class="card"><span id="now-label">jitzoo, last 20 inferences</span><b id="now">–</b></div>
    <div class="card"><span id="ort-label">onnxruntime-web (wasm, 1 thread)</span><b id="ort">–</b></div>
    <div class="card"><span>speedup</span><b id="speedup">–</b></div>
  </div>
  <div id="zoo"></div><div id="tuning">connecting…</div>
  <h2><span id="latency-title">Latency per inference</span> <span class="legend"><i style="background:#2563eb"></i>jitzoo<i style="background:#ea580c"></i>onnxruntime-web</span></h2>
  <canvas id="latency"></canvas>
  <h2>Each op's kernel over time (first: the lite space's first candidate; zoo: the zoo's best for this device kind; kept: kept on this device; ×: faster than the kernel it replaced)</h2>
  <canvas id="timeline"></canvas>
  ${SDK_LOADER}
  <script type="module" src="/demo/page.js"></script>
</body></html>`;

/** Serves the demo; its page starts inferring and tuning once opened. */
export function serveDemo(options: DemoOptions): Promise<Site> {
  const name = basename(options.model);
  const config = { gateway: options.gateway, model: name, seq: options.seq ?? 128, ortEvery: options.ortEvery ?? 5, fresh: options.fresh ?? 32 };
  return serveSite({
    models: { [name]: options.model },
    pages: { "/": HTML, "/demo/page.js": readFileSync(PAGE, "utf8"), "/demo/config.json": JSON.stringify(config) },
  }, options.port ?? 0);
}
