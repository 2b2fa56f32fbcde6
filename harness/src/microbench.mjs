// ./jitzoo microbench: the SDK's primitive microbenchmark (runMicrobench) on a runner: in Node
// directly, or in headless Chromium as a page would run it (the SDK bundled by esbuild).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, table } from './bench.mjs';

/** What a runner needs of the SDK: its internal entry (built: `cd client-sdk-js && npm run build`). */
const SDK_NEEDS = "export { runMicrobench, measurePeakGflops } from '@jitzoo/client/internal';";
const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.JITZOO_CHROMIUM ?? '/usr/bin/chromium';

/** The pairs of a `codegen microbench` directory, as plain data: { primitive, description, off, on } with bytes and metadata. */
function readSuite(dir) {
  const file = path.join(dir, 'suite.json');
  if (!fs.existsSync(file)) throw new Error(`${dir}: no suite.json (write it with ./jitzoo codegen microbench)`);
  const artifact = (name) => ({
    wasm: [...fs.readFileSync(path.join(dir, name))],
    metadataJson: fs.readFileSync(path.join(dir, name.replace(/\.wasm$/, '.json')), 'utf8'),
  });
  return JSON.parse(fs.readFileSync(file, 'utf8'))
    .map((p) => ({ primitive: p.primitive, description: p.description, off: artifact(p.off), on: artifact(p.on) }));
}

/** What runMicrobench takes: artifacts shaped as the SDK's KernelArtifact (bytes in `code`). */
const toArtifact = (a) => ({ code: { case: 'wasm', value: Uint8Array.from(a.wasm) }, metadataJson: a.metadataJson });

async function inNode(suite, options) {
  const { runMicrobench, measurePeakGflops } = await import('@jitzoo/client/internal');
  const results = await runMicrobench(suite.map((p) => ({ primitive: p.primitive, off: toArtifact(p.off), on: toArtifact(p.on) })),
    { ...options, onProgress: (r, n) => log(`  round ${r}/${n}`) });
  return { results, peakGflops: measurePeakGflops(), engine: `node ${process.versions.node} (V8 ${process.versions.v8})`, arch: process.arch };
}

async function inChromium(suite, options) {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set JITZOO_CHROMIUM)`);
  const esbuild = await import('esbuild');
  const { chromium } = await import('playwright-core');
  const bundle = esbuild.buildSync({
    stdin: { contents: SDK_NEEDS, resolveDir: HERE }, bundle: true, format: 'iife', globalName: 'jitzooMicrobench', write: false,
  }).outputFiles[0].text;
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
      '--disable-sync'], // playwright gives it a fresh profile
  });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => log(`  chromium: ${m.text()}`));
    await page.addScriptTag({ content: bundle });
    const run = await page.evaluate(async ({ suite: pairs, options: opts }) => {
      const artifact = (a) => ({ code: { case: 'wasm', value: Uint8Array.from(a.wasm) }, metadataJson: a.metadataJson });
      const results = await globalThis.jitzooMicrobench.runMicrobench(
        pairs.map((p) => ({ primitive: p.primitive, off: artifact(p.off), on: artifact(p.on) })),
        { ...opts, onProgress: (r, n) => console.log(`round ${r}/${n}`) });
      return { results, peakGflops: globalThis.jitzooMicrobench.measurePeakGflops(), engine: navigator.userAgent };
    }, { suite, options });
    return { ...run, arch: process.arch };
  } finally {
    await browser.close();
  }
}

/**
 * Runs the suite of `dir` on `runner` ('node' or 'chromium') and reports each primitive's speedup
 * (off / on). `json` is the stored result: { runner, device, engine, primitives: { name: speedup } }.
 */
export async function microbench(dir, { runner = 'node', device = 'this-machine', quick = false } = {}) {
  const suite = readSuite(dir);
  const options = quick ? { rounds: 3, sampleMs: 10 } : { rounds: 7, sampleMs: 40 };
  log(`${suite.length} primitives, each pair checked against the reference, then timed side by side (${runner})`);
  let run;
  if (runner === 'node') run = await inNode(suite, options);
  else if (runner === 'chromium') run = await inChromium(suite, options);
  else throw new Error(`unknown runner '${runner}'; use node or chromium`);
  const meta = JSON.parse(suite[0].off.metadataJson);
  const text = [
    `primitive microbenchmark, MatMul ${meta.shape.join('x')}, one thread, ${run.engine}; medians, side by side`,
    `single-thread Wasm SIMD peak: ${run.peakGflops.toFixed(1)} GFLOP/s`,
    table(['primitive', 'what it turns on', 'off ms', 'on ms', 'speedup'],
      run.results.map((r, i) => [r.primitive, suite[i].description, r.offMs.toFixed(2), r.onMs.toFixed(2), `${r.speedup.toFixed(2)}x`])),
  ].join('\n');
  const json = {
    bench: 'microbench', runner, device, engine: run.engine, arch: run.arch, shape: meta.shape,
    measured: new Date().toISOString().slice(0, 10),
    primitives: Object.fromEntries(run.results.map((r) => [r.primitive, Number(r.speedup.toFixed(3))])),
    peak_gflops: Number(run.peakGflops.toFixed(2)),
    detail: run.results.map((r) => ({ primitive: r.primitive, off_ms: r.offMs, on_ms: r.onMs, gflops_on: meta.flops / r.onMs / 1e6 })),
  };
  return { text, json };
}
