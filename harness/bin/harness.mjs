#!/usr/bin/env node
// jitzoo harness: runs kernel artifacts outside the browser. `harness help` lists the commands.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { readCases } from '../src/cases.mjs';
import { checkCases, junitReport, TOLERANCE } from '../src/check.mjs';
import { benchCodegenKernels, benchKernels, benchKernelsThreaded, benchPasses, benchQuantizedKernels } from '../src/bench.mjs';
import { measurePeak } from '../src/peak.mjs';
import { benchSpace } from '../src/space.mjs';
import { benchDynamic, checkPlans } from '../src/dynamic.mjs';
import { microbench } from '../src/microbench.mjs';
import { median } from '../src/timing.mjs';

const USAGE = `usage: harness <command> [options]

  check DIR... [--junit FILE] [--suite NAME] [--adapter swiftshader|gpu] [--json]
      run every kernel (.wasm in V8, .wgsl in Dawn) on seeded inputs against the float64
      reference; fails when one is off by more than ${TOLERANCE}, leaves an element of C
      unwritten, or (Wasm) writes outside C; WebGPU itself keeps shaders inside their buffers;
      --json: kernels checked and failed, the worst error, the median and total time
  check-plans DIR PLANS [--junit FILE] [--suite NAME]
      every uKernel of DIR (\`space dynamic --requests\`, compiled) and every plan of PLANS
      (\`space dynamic\`'s JSON) run on row slices of one memory, against the float64 reference
  bench kernels DIR [--out DIR] [--threads T] [--quick] [--json]
      best candidate per paper kernel K0..K3, beside onnxruntime-web, TF.js and the SIMD peak, and
      per int8 and 4-bit matmul in DIR beside onnxruntime-web's own (MatMulInteger, MatMulNBits) and
      the peak of its instruction (dot, mul+add); with
      --threads T, the best split kernel on T threads beside the best on one and onnxruntime-web on T
  bench passes DIR [--json]           a kernel per pass set, from \`codegen passes\`
  bench codegen DIR FILE [--json]     ours and clang's kernel; FILE: the generation figures (JSON)
  bench space LITE SWEEP [--quick] [--json]
      the space service's candidates (from \`space cases\`) against an exhaustive sweep (\`codegen cases --set sweep\`)
  bench dynamic DIR PLANS [--quick] [--json]
      composed uKernel plans (PLANS: \`space dynamic\`'s JSON) against padding to a fixed tile and exact kernels
  microbench DIR [--runner node|chromium] [--device NAME] [--quick] [--json]
      the SDK's primitive microbenchmark over a \`codegen microbench\` directory, in Node or headless Chromium
  peak [--json]                       single-thread Wasm SIMD peak, mul+add and relaxed madd

Run under node --no-liftoff --no-wasm-dynamic-tiering for steady-state timings. --json prints the figures as
one JSON object on the last line.`;

function fail(message) {
  process.stderr.write(`harness: ${message}\n`);
  process.exit(2);
}

async function check(dirs, values) {
  const cases = dirs.flatMap((d) => readCases(d));
  let device;
  let runWgsl;
  if (cases.some((c) => c.backend === 'wgsl')) {
    const webgpu = await import('../src/webgpu.mjs');
    device = await webgpu.openDevice({ adapter: values.adapter ?? 'swiftshader' });
    runWgsl = webgpu.runWgsl;
  }
  let done = 0;
  const results = await checkCases(cases, {
    device, runWgsl,
    onResult: (r) => {
      done++;
      if (!r.ok) process.stderr.write(`FAIL ${r.backend} ${r.name}: ${r.message}\n`);
      else if (done % 50 === 0) process.stderr.write(`  ${done}/${cases.length} checked\n`);
    },
  });
  if (values.junit) fs.writeFileSync(values.junit, junitReport(values.suite ?? 'harness.check', results));
  const failed = results.filter((r) => !r.ok);
  const worst = Math.max(0, ...results.filter((r) => r.ok).map((r) => r.error));
  const backends = [...new Set(cases.map((c) => c.backend))].join(', ');
  const ms = results.map((r) => r.ms);
  const medianMs = ms.length ? median(ms) : 0;
  const totalS = ms.reduce((t, m) => t + m, 0) / 1000;
  console.log(`${results.length - failed.length}/${results.length} kernels (${backends}) match the reference; worst relative error ${worst.toExponential(2)}`);
  console.log(`${totalS.toFixed(1)} s in all, median ${medianMs.toFixed(1)} ms a kernel (build, run and compare)`);
  if (values.json) {
    console.log(JSON.stringify({
      kernels_checked: results.length, kernels_failed: failed.length, worst_relative_error: worst,
      median_check_ms: Number(medianMs.toFixed(1)), total_s: Number(totalS.toFixed(1)),
    }));
  }
  return failed.length ? 1 : 0;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      json: { type: 'boolean' }, quick: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      out: { type: 'string' }, threads: { type: 'string' }, runner: { type: 'string' }, device: { type: 'string' }, junit: { type: 'string' }, suite: { type: 'string' }, adapter: { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === 'check') {
    if (rest.length === 0) fail('check needs a directory of kernels');
    return check(rest, values);
  }
  if (command === 'check-plans') {
    if (rest.length !== 2) fail('check-plans needs the kernel directory and the plans file');
    const results = checkPlans(rest[0], rest[1]);
    if (values.junit) fs.writeFileSync(values.junit, junitReport(values.suite ?? 'harness.plans', results));
    const failed = results.filter((r) => !r.ok);
    for (const r of failed) process.stderr.write(`FAIL ${r.name}: ${r.message}\n`);
    const worst = Math.max(0, ...results.filter((r) => r.ok).map((r) => r.error));
    console.log(`${results.length - failed.length}/${results.length} uKernels and composed plans match the reference; worst relative error ${worst.toExponential(2)}`);
    return failed.length ? 1 : 0;
  }
  let report;
  if (command === 'microbench') {
    if (rest.length !== 1) fail('microbench needs the directory of `codegen microbench`');
    report = await microbench(rest[0], { runner: values.runner, device: values.device, quick: values.quick });
  } else if (command === 'peak') {
    const peak = { madd: await measurePeak(false), relaxed: await measurePeak(true) };
    report = { text: `single-thread Wasm SIMD peak: mul+add ${peak.madd.toFixed(1)} GFLOP/s, relaxed madd ${peak.relaxed?.toFixed(1) ?? 'n/a'} GFLOP/s`, json: { bench: 'peak', ...peak } };
  } else if (command === 'bench') {
    const [name, dir, file] = rest;
    if (!['kernels', 'passes', 'codegen', 'space', 'dynamic'].includes(name)) fail(`unknown bench '${name ?? ''}'; known: kernels, passes, codegen, space, dynamic`);
    if (!dir) fail(`bench ${name} needs a directory`);
    const second = { space: 'the sweep directory', dynamic: 'the plans file', codegen: 'the generation figures file' }[name];
    if (second && !file) fail(`bench ${name} needs ${second} after the directory`);
    const threads = values.threads === undefined ? 1 : Number(values.threads);
    if (!(Number.isInteger(threads) && threads >= 1 && threads <= 64)) fail(`--threads must be a whole number from 1 to 64, got ${values.threads}`);
    if (name === 'kernels' && threads > 1) report = await benchKernelsThreaded(dir, { threads, quick: values.quick });
    else if (name === 'kernels') {
      report = await benchKernels(dir, { out: values.out, quick: values.quick });
      for (const form of ['int8', 'q4', 'conv']) {
        const part = await benchQuantizedKernels(dir, form, { quick: values.quick });
        if (part) report = { text: `${report.text}\n\n${part.text}`, json: { ...report.json, [form]: part.json } };
      }
    }
    else if (name === 'passes') report = await benchPasses(dir);
    else if (name === 'space') report = await benchSpace(dir, file, { quick: values.quick });
    else if (name === 'dynamic') report = await benchDynamic(dir, file, { quick: values.quick });
    else report = await benchCodegenKernels(dir, JSON.parse(fs.readFileSync(file, 'utf8')));
  } else {
    fail(`unknown command '${command}'; see harness help`);
  }
  console.log(report.text);
  if (values.json) console.log(JSON.stringify(report.json));
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  process.stderr.write(`harness: ${e.message}\n`);
  process.exit(1);
});
