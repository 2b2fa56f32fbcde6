import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";
const P = "/work/main/client-sdk-js/";
const files = { "/browser/jitzoo.js": readFileSync(P + "dist/browser/jitzoo.js", "utf8"), "/browser/worker.js": readFileSync(P + "dist/browser/worker.js", "utf8") };
const model = readFileSync("/work/main/.jitzoo/models/bert_layer.onnx");
const server = createServer((req, res) => {
  if (files[req.url]) res.writeHead(200, { "content-type": "text/javascript" }).end(files[req.url]);
  else if (req.url === "/model.onnx") res.writeHead(200).end(model);
  else res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><script type="module">import * as jitzoo from "/browser/jitzoo.js"; globalThis.jitzoo = jitzoo;</script>');
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
const page = await browser.newPage();
page.on("console", (m) => console.log("page:", m.text()));
page.on("worker", (w) => { console.log("worker", w.url()); w.on("console", (m) => console.log("worker:", m.text())); });
await page.goto(url);
await page.waitForFunction(() => "jitzoo" in globalThis);
const pr = page.evaluate(async ({ worker }) => {
  const j = globalThis.jitzoo;
  const model = await j.loadModel("/model.onnx", { gateway: "ws://127.0.0.1:8080/v1/session", fingerprint: "dbg-" + Date.now(), tuning: { budget: 1 }, worker, log: (l) => console.log(l), reconnect: { attempts: 60, baseDelayMs: 250, maxDelayMs: 2000 } });
  model.on("connection", (e) => console.log("connection", e.state, e.detail));
  const t0 = performance.now();
  const stats = await j.runUntilSettled(model, j.feedsFor(model, 8), { maxSeconds: 90, onRun: (r, s) => { if (r % 100 === 0) console.log("run", r, s.ops.filter((o) => o.settled).length, (performance.now() - t0).toFixed(0)); } });
  console.log("settled", stats.settled, (performance.now() - t0).toFixed(0));
  return stats.runs;
}, { worker: process.argv[2] === "worker" });
if (process.argv[3] === "restart") {
  await new Promise((r) => setTimeout(r, 3000));
  const { readFileSync: rf } = await import("node:fs");
  const { spawnSync } = await import("node:child_process");
  process.kill(Number(rf("/work/main/.jitzoo/run/gateway.pid", "utf8")), "SIGKILL");
  console.log("killed");
  const up = spawnSync("/work/main/jitzoo", ["up"], { encoding: "utf8" });
  console.log("up", up.status);
}
console.log("runs", await pr);
await browser.close(); server.close();
