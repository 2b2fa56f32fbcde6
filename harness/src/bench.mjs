// The benchmarks behind `./jitzoo bench passes|codegen|kernels`: kernels timed side by side in one
// process, with the same data placement and copies for every runtime.

import fs from 'node:fs';
import path from 'node:path';
import { inputsFor, relativeError, scratchOf, size } from './data.mjs';
import { reference } from './reference.mjs';
import { BASE, WasmKernel, startPool } from './wasm.mjs';
import { gflops, median, timeSideBySide } from './timing.mjs';
import { peakRuntime } from './peak.mjs';
import { onnxRuntime, onnxRuntimeConv, onnxRuntimeInt8, onnxRuntimeQ4, tensorflowJs } from './peers.mjs';
import { readCase, readCases } from './cases.mjs';
import { TOLERANCE } from './check.mjs';

/** Operands a model holds as constants, written once at load (and packed then); every other input is copied in per call. */
const CONSTANT = { matmul: ['B', 'Bias'], batch_matmul: ['Bias'], matmul_int8: ['B', 'BScale', 'Bias'], matmul_q4: ['B', 'BScale', 'BZero', 'Bias'] };

/**
 * A runtime's session call over a kernel placed in memory: the activations copied in (B packed
 * again when B is one), `run`, and C copied out into a buffer of the caller's, reused as a session
 * reuses its own. Returns { call, result }.
 */
function sessionCall(kernel, inputs, run) {
  const { meta } = kernel;
  const constant = CONSTANT[meta.op] ?? [];
  const activations = meta.operands.filter((n) => n !== 'C' && !constant.includes(n) && !scratchOf(meta).includes(n));
  const out = new Float32Array(size(meta.operandShapes.C));
  const call = () => {
    for (const name of activations) kernel.write(name, inputs[name]);
    run();
    out.set(kernel.view('C'));
    return out;
  };
  return { call, result: call().slice() };
}

/** One Wasm kernel ready to call as a runtime's session call ({@link sessionCall}). */
export function wasmRuntime(c, inputs) {
  const kernel = new WasmKernel(c.code, c.meta);
  kernel.load(inputs);
  return sessionCall(kernel, inputs, () => kernel.run());
}

/**
 * A split kernel ready to call on a worker pool, as a session call and in place: its operands
 * placed in the pool's memory past those of the kernels before it (`place` keeps the next free offset).
 */
function pooledRuntime(c, inputs, { pool, memory }, place) {
  const kernel = new WasmKernel(c.code, c.meta, memory, place.next);
  place.next = kernel.end;
  kernel.load(inputs);
  const loaded = pool.load(kernel.module, c.meta.entry, kernel.units, memory);
  const args = Int32Array.from(kernel.args);
  const run = () => pool.run(loaded, args, args.length);
  const session = sessionCall(kernel, inputs, run);
  return { ...session, inPlace: { call: run, result: session.result }, close: () => pool.release(loaded) };
}

/** A one-thread kernel called in place: operands already in its memory, as a model's are. */
function inPlaceRuntime(c, inputs) {
  const kernel = new WasmKernel(c.code, c.meta);
  kernel.load(inputs);
  kernel.run();
  return { call: () => kernel.run(), result: kernel.result() };
}

/** Times prepared runtimes side by side; by name: { ms, reps, result }. */
export async function timeRuntimes(runtimes, options) {
  const calls = Object.fromEntries(Object.entries(runtimes).map(([n, r]) => [n, r.call]));
  const times = await timeSideBySide(calls, options);
  return Object.fromEntries(Object.entries(runtimes).map(([n, r]) => [n, { ...times[n], result: r.result }]));
}

/**
 * The paper kernel (K0..K3) a case was generated for, from its file name: `codegen cases` and
 * `space cases` name them K0-..., after the one list of paper kernels (PaperKernels in the proto jar).
 */
const paperName = (c) => /^(K\d+)-/.exec(c.name)?.[1];

/** Wasm cases grouped by the paper kernel they were generated for; other cases are left out. */
export function byPaperKernel(cases) {
  const groups = new Map();
  for (const c of cases) {
    const name = paperName(c);
    if (!name || c.backend !== 'wasm') continue;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(c);
  }
  return groups;
}

export function checked(meta, inputs, result, who) {
  const error = relativeError(result, reference(meta, inputs));
  if (!(error <= TOLERANCE)) throw new Error(`${who} on ${meta.op} [${meta.shape}]: relative error ${error.toExponential(2)}`);
  return error;
}

export function describeSchedule(s) {
  const parts = [`${s.y0}x${s.x0}`];
  if (s.r0) parts.push(`r0=${s.r0}`);
  if (s.x1 || s.y1 || s.r1) parts.push(`block ${s.y1}x${s.x1}x${s.r1}`);
  if (s.unroll > 1) parts.push(`unroll ${s.unroll}`);
  if (s.packB) parts.push('packB');
  if (s.relaxedSimd) parts.push('relaxed');
  if (s.columnsOuter) parts.push('columns outer');
  return parts.join(' ');
}

/** A plain text table, columns right-aligned but the first. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')).join('\n');
}

export const f1 = (x) => (x == null ? '-' : x.toFixed(1));
export const log = (s) => process.stderr.write(`${s}\n`);

/**
 * `bench kernels`: for each paper kernel K0..K3 in `dir`, every candidate timed briefly, then the
 * best two of each instruction form (mul+add, relaxed madd) at length, side by side with the
 * peers and the SIMD peak loops.
 */
export async function benchKernels(dir, { out, quick = false } = {}) {
  const groups = byPaperKernel(readCases(dir));
  if (groups.size === 0) throw new Error(`${dir}: no Wasm kernels of K0..K3 in it`);
  const screen = { warmup: 1, warmupMs: 0, minReps: 3, maxReps: 3, minMs: 0 };
  const full = quick ? { warmup: 1, minReps: 3, maxReps: 5, minMs: 0, burstMs: 30 }
    : { warmup: 2, warmupMs: 1000, minReps: 9, minMs: 4000, burstMs: 100 };
  const peakLoops = { madd: peakRuntime(false), relaxed: peakRuntime(true) };
  const peaks = [];
  const kernels = [];
  for (const [name, cases] of [...groups.entries()].sort()) {
    const meta = cases[0].meta;
    const inputs = inputsFor(meta, 7);
    log(`${name} ${meta.op} ${meta.shape.join('x')}: screening ${cases.length} candidates`);
    const screened = [];
    for (const c of cases) screened.push({ c, ms: (await timeRuntimes({ c: wasmRuntime(c, inputs) }, screen)).c.ms });
    screened.sort((a, b) => a.ms - b.ms);
    // the fastest few of each instruction form, so each is judged against its own peak
    const perForm = quick ? 1 : 3;
    const finalists = ['madd', 'relaxed'].flatMap((form) => screened
      .filter(({ c }) => c.meta.schedule.relaxedSimd === (form === 'relaxed')).slice(0, perForm).map(({ c }) => c));
    const runtimes = Object.fromEntries(finalists.map((c, i) => [`jitzoo${i}`, wasmRuntime(c, inputs)]));
    runtimes.ort = await onnxRuntime(meta, inputs);
    runtimes.tf = await tensorflowJs(meta, inputs);
    for (const [form, loop] of Object.entries(peakLoops)) if (loop) runtimes[`peak_${form}`] = loop;
    log(`${name}: the best ${finalists.length} beside onnxruntime-web, TF.js and the peak loops`);
    const times = await timeRuntimes(runtimes, full);
    const peak = Object.fromEntries(Object.entries(peakLoops).map(([form, loop]) =>
      [form, loop ? gflops(loop.flops, times[`peak_${form}`].ms) : null]));
    peaks.push(peak);
    runtimes.ort.close();
    runtimes.tf.close();
    const timed = finalists.map((c, i) => ({ c, t: times[`jitzoo${i}`] }));
    const fastest = (list) => list.reduce((a, b) => (b.t.ms < a.t.ms ? b : a));
    const best = fastest(timed);
    const { ort, tf } = times;
    for (const f of timed) checked(meta, inputs, f.t.result, `jitzoo ${describeSchedule(f.c.meta.schedule)}`);
    checked(meta, inputs, ort.result, 'onnxruntime-web');
    checked(meta, inputs, tf.result, 'TF.js');
    const ours = gflops(meta.flops, best.t.ms);
    const byForm = Object.fromEntries(['madd', 'relaxed'].map((form) => {
      const list = timed.filter((f) => f.c.meta.schedule.relaxedSimd === (form === 'relaxed'));
      if (!list.length || peak[form] == null) return [form, null];
      const f = fastest(list);
      const g = gflops(meta.flops, f.t.ms);
      return [form, { schedule: f.c.meta.schedule, gflops: g, of_peak: g / peak[form] }];
    }));
    kernels.push({
      kernel: name, op: meta.op, shape: meta.shape, candidates: cases.length,
      schedule: best.c.meta.schedule, file: path.basename(best.c.file),
      jitzoo: { ms: best.t.ms, gflops: ours },
      onnxruntime_web: { ms: ort.ms, gflops: gflops(meta.flops, ort.ms) },
      tfjs_wasm: { ms: tf.ms, gflops: gflops(meta.flops, tf.ms) },
      vs_onnxruntime_web: ours / gflops(meta.flops, ort.ms),
      peak, madd: byForm.madd, relaxed: byForm.relaxed,
    });
    if (out) {
      fs.mkdirSync(out, { recursive: true });
      fs.copyFileSync(best.c.file, path.join(out, `${name}.wasm`));
      fs.writeFileSync(path.join(out, `${name}.wasm.json`), JSON.stringify(best.c.meta));
    }
  }
  const ofPeak = (f) => (f ? `${f1(f.gflops)} (${Math.round(f.of_peak * 100)}%)` : '-');
  const text = table(
    ['kernel', 'shape', 'best schedule', 'jitzoo', 'ort-web', 'tfjs-wasm', 'vs ort', 'mul+add (of peak)', 'relaxed (of peak)', 'peaks'],
    kernels.map((k) => [k.kernel, k.shape.join('x'), describeSchedule(k.schedule), f1(k.jitzoo.gflops),
      f1(k.onnxruntime_web.gflops), f1(k.tfjs_wasm.gflops), `${k.vs_onnxruntime_web.toFixed(2)}x`,
      ofPeak(k.madd), ofPeak(k.relaxed), `${f1(k.peak.madd)} / ${f1(k.peak.relaxed)}`]));
  const peak = Object.fromEntries(Object.keys(peakLoops).map((form) => [form, peaks.length && peaks[0][form] != null
    ? median(peaks.map((p) => p[form])) : null]));
  return {
    text: 'GFLOP/s, one thread, medians; each row timed side by side (activations copied in and C out in every call;\n' +
      'the peak loops, mul+add / relaxed madd, in the same rounds); the best kernel of each instruction form beside its peak\n' +
      text,
    json: { bench: 'kernels', unit: 'GFLOP/s', peak, kernels },
  };
}

/**
 * The ops `bench kernels` times beside an onnxruntime-web op of their own: their cases' labels
 * (`space cases` writes <LABEL>-<M>X<K>X<N>-..., a conv's dimensions then its window), their peer
 * and the peak loop of their instruction.
 */
const QUANTIZED = {
  int8: {
    label: 'MATMUL_INT8', peer: onnxRuntimeInt8, peerName: "onnxruntime-web's int8 product", peak: 'dot', peakName: 'dot peak',
    unit: 'GOP/s', title: 'int8 matmuls (A quantized in the call, as DynamicQuantizeLinear does), GOP/s (2 a multiply-add)',
  },
  q4: {
    label: 'MATMUL_Q4', peer: onnxRuntimeQ4, peerName: "onnxruntime-web's MatMulNBits", peak: false, peakName: 'mul+add peak',
    unit: 'GFLOP/s', title: '4-bit matmuls (MatMulNBits: blocks of 32, the weights widened in registers), GFLOP/s',
  },
  conv: {
    label: 'CONV', pattern: /^(CONV-[\dX]+(?:-(?:STRIDE|DILATION|PADS|GROUP)-[\dX]+)*)-/, peer: onnxRuntimeConv,
    peerName: "onnxruntime-web's Conv", peak: false, peakName: 'mul+add peak', unit: 'GFLOP/s',
    title: 'convolutions (implicit GEMM: windows gathered once per tile, the float register tile over them), GFLOP/s',
  },
};

/** A form's cases grouped by their op: `space cases` labels them <LABEL>-<M>X<K>X<N>-... */
export function byQuantizedOp(cases, form) {
  const pattern = QUANTIZED[form].pattern ?? new RegExp(`^(${QUANTIZED[form].label}-\\d+X\\d+X\\d+)-`);
  const groups = new Map();
  for (const c of cases) {
    const name = pattern.exec(c.name)?.[1];
    if (!name || c.backend !== 'wasm' || c.meta.split) continue;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(c);
  }
  return groups;
}

/**
 * `bench kernels`, a quantized form's part (`int8` or `q4`): for each of its matmuls in `dir`
 * (MiniLM's products), every candidate timed briefly, then the best few at length beside
 * onnxruntime-web's own product on the same operands (int8: DynamicQuantizeLinear, MatMulInteger,
 * Cast, Mul; q4: MatMulNBits) and the peak loop of the kernel's instruction (int8: i32x4.dot_i16x8_s
 * + i32x4.add chains; q4: f32x4 mul + add). Integer operations are counted as flops are (2 a
 * multiply-add). Null when `dir` has no such kernels.
 */
export async function benchQuantizedKernels(dir, form, { quick = false } = {}) {
  const spec = QUANTIZED[form];
  const groups = byQuantizedOp(readCases(dir), form);
  if (groups.size === 0) return null;
  const screen = { warmup: 1, warmupMs: 0, minReps: 3, maxReps: 3, minMs: 0 };
  const full = quick ? { warmup: 1, minReps: 3, maxReps: 5, minMs: 0, burstMs: 30 }
    : { warmup: 2, warmupMs: 1000, minReps: 9, minMs: 4000, burstMs: 100 };
  const peakLoop = peakRuntime(spec.peak);
  const kernels = [];
  for (const [name, cases] of [...groups.entries()].sort()) {
    const meta = cases[0].meta;
    const inputs = inputsFor(meta, 7);
    log(`${name}: screening ${cases.length} candidates`);
    const screened = [];
    for (const c of cases) screened.push({ c, ms: (await timeRuntimes({ c: wasmRuntime(c, inputs) }, screen)).c.ms });
    screened.sort((a, b) => a.ms - b.ms);
    const finalists = screened.slice(0, quick ? 1 : 3).map(({ c }) => c);
    const runtimes = Object.fromEntries(finalists.map((c, i) => [`jitzoo${i}`, wasmRuntime(c, inputs)]));
    runtimes.ort = await spec.peer(meta, inputs);
    runtimes.peak = peakLoop;
    log(`${name}: the best ${finalists.length} beside ${spec.peerName} and the ${spec.peakName} loop`);
    const times = await timeRuntimes(runtimes, full);
    runtimes.ort.close();
    const timed = finalists.map((c, i) => ({ c, t: times[`jitzoo${i}`] }));
    const best = timed.reduce((a, b) => (b.t.ms < a.t.ms ? b : a));
    for (const f of timed) checked(meta, inputs, f.t.result, `jitzoo ${describeSchedule(f.c.meta.schedule)}`);
    checked(meta, inputs, times.ort.result, 'onnxruntime-web');
    const ours = gflops(meta.flops, best.t.ms), peak = gflops(peakLoop.flops, times.peak.ms);
    const peakKey = spec.peak === 'dot' ? 'dot_peak_gops' : 'madd_peak_gflops';
    kernels.push({
      kernel: name, op: meta.op, shape: meta.shape, candidates: cases.length, schedule: best.c.meta.schedule,
      jitzoo: { ms: best.t.ms, gops: ours }, onnxruntime_web: { ms: times.ort.ms, gops: gflops(meta.flops, times.ort.ms) },
      vs_onnxruntime_web: times.ort.ms / best.t.ms, [peakKey]: peak, of_peak: ours / peak,
    });
  }
  const text = table([`${form} kernel`, 'shape', 'best schedule', 'jitzoo', `ort-web ${form}`, 'vs ort', `${spec.peakName} (of peak)`],
    kernels.map((k) => [k.kernel, k.shape.join('x'), describeSchedule(k.schedule), f1(k.jitzoo.gops), f1(k.onnxruntime_web.gops),
      `${k.vs_onnxruntime_web.toFixed(2)}x`, `${f1(k.dot_peak_gops ?? k.madd_peak_gflops)} (${Math.round(k.of_peak * 100)}%)`]));
  return { text: `${spec.title}, one thread, medians, side by side\n${text}`, json: { unit: spec.unit, kernels } };
}

/**
 * `bench kernels --threads T`: for each paper kernel, the best one-thread kernel (the unsplit
 * candidates) and the best split kernel on the SDK's worker pool of T threads (the candidates of a
 * T-thread device, labels ending -T<T>), each screened briefly, then side by side with
 * onnxruntime-web on T threads (its wasm backend's own thread pool). Two ways of calling ours:
 * in place (the operands already in memory, as in a model: how the split scales against one
 * thread) and as a session call (activations copied in and C out, on the calling thread, as
 * onnxruntime-web's session.run must: how it compares with the peer).
 */
export async function benchKernelsThreaded(dir, { threads, quick = false } = {}) {
  const all = readCases(dir);
  const split = byPaperKernel(all.filter((c) => c.meta.split));
  const single = byPaperKernel(all.filter((c) => !c.meta.split));
  if (split.size === 0) throw new Error(`${dir}: no split kernels of K0..K3 in it (space cases --threads ${threads})`);
  const screen = { warmup: 1, warmupMs: 0, minReps: 3, maxReps: 3, minMs: 0 };
  const full = quick ? { warmup: 1, minReps: 3, maxReps: 5, minMs: 0, burstMs: 30 }
    : { warmup: 2, warmupMs: 1000, minReps: 9, minMs: 4000, burstMs: 100 };
  const pool = await startPool(threads);
  const kernels = [];
  try {
    for (const [name, cases] of [...split.entries()].sort()) {
      const meta = cases[0].meta;
      const inputs = inputsFor(meta, 7);
      const ones = single.get(name) ?? [];
      log(`${name} ${meta.op} ${meta.shape.join('x')}: screening ${ones.length} one-thread and ${cases.length} split candidates `
        + `(${pool.threads} threads)`);
      const fastest = async (list, runtime) => {
        let best;
        for (const c of list) {
          const r = await runtime(c);
          const { ms } = (await timeRuntimes({ c: r }, screen)).c;
          r.close?.();
          if (!best || ms < best.ms) best = { c, ms };
        }
        return best?.c;
      };
      const place = { next: BASE };
      const oneThread = await fastest(ones, (c) => wasmRuntime(c, inputs));
      const splitBest = await fastest(cases, (c) => { place.next = BASE; return pooledRuntime(c, inputs, pool, place); });
      place.next = BASE;
      const threaded = pooledRuntime(splitBest, inputs, pool, place);
      const runtimes = { threaded, threadedInPlace: threaded.inPlace };
      if (oneThread) runtimes.single = inPlaceRuntime(oneThread, inputs);
      runtimes.ort = await onnxRuntime(meta, inputs, threads);
      log(`${name}: split on ${pool.threads} threads beside one thread and onnxruntime-web on ${threads}`);
      const times = await timeRuntimes(runtimes, full);
      runtimes.ort.close();
      threaded.close();
      checked(meta, inputs, times.threaded.result, `jitzoo ${describeSchedule(splitBest.meta.schedule)} on ${pool.threads} threads`);
      if (oneThread) checked(meta, inputs, times.single.result, `jitzoo ${describeSchedule(oneThread.meta.schedule)}`);
      checked(meta, inputs, times.ort.result, 'onnxruntime-web');
      const ms = times.threadedInPlace.ms;
      kernels.push({
        kernel: name, op: meta.op, shape: meta.shape, threads: pool.threads,
        schedule: splitBest.meta.schedule, split: splitBest.meta.split,
        one_thread_schedule: oneThread?.meta.schedule ?? null,
        kernel_ms: ms, kernel_gflops: gflops(meta.flops, ms),
        one_thread_kernel_ms: times.single?.ms ?? null,
        call_ms: times.threaded.ms,
        onnxruntime_web_call_ms: times.ort.ms,
        speedup_vs_one_thread: times.single ? times.single.ms / ms : null,
        speedup_vs_onnxruntime_web: times.ort.ms / times.threaded.ms,
      });
    }
  } finally {
    pool.close();
  }
  const text = table(
    ['kernel', 'shape', 'split schedule', `kernel ${threads}T`, 'kernel 1T', 'vs 1 thread', `call ${threads}T`,
      `ort-web ${threads}T`, 'vs ort'],
    kernels.map((k) => [k.kernel, k.shape.join('x'), `${describeSchedule(k.schedule)} ${k.split.axis}/${k.split.grain} (${k.split.units} units)`,
      k.kernel_ms.toFixed(2), k.one_thread_kernel_ms?.toFixed(2) ?? '-',
      k.speedup_vs_one_thread ? `${k.speedup_vs_one_thread.toFixed(2)}x` : '-', k.call_ms.toFixed(2),
      k.onnxruntime_web_call_ms.toFixed(2), `${k.speedup_vs_onnxruntime_web.toFixed(2)}x`]));
  return {
    text: `milliseconds, medians, ${threads} threads (the SDK's worker pool; onnxruntime-web's own), each row timed side by side;\n`
      + 'kernel: called in place (operands in memory, as in a model); call: activations copied in and C out, as session.run\n' + text,
    json: { bench: 'kernels_threads', threads, kernels },
  };
}

/** `bench passes`: one kernel compiled with each pass set (from `codegen passes`), timed side by side. */
export async function benchPasses(dir) {
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
  const cases = index.map((entry) => readCase(path.join(dir, `${entry.name}.wasm`)));
  const { meta } = cases[0];
  const inputs = inputsFor(meta, 7);
  log(`timing ${cases.length} pass sets side by side`);
  const times = await timeRuntimes(Object.fromEntries(cases.map((c) => [c.name, wasmRuntime(c, inputs)])),
    { warmup: 2, minReps: 9, minMs: 4000 });
  const baseline = times[cases[0].name].ms;
  const rows = index.map((entry, i) => {
    const t = times[cases[i].name];
    checked(meta, inputs, t.result, entry.name);
    return { ...entry, ms: t.ms, gflops: gflops(meta.flops, t.ms), speedup: baseline / t.ms, shape: meta.shape };
  });
  const text = table(['row', 'passes on', 'bytes', 'generate µs', 'kernel ms', 'GFLOP/s', 'speedup'],
    rows.map((r) => [r.name.replace(/^passes-/, ''), r.passes, r.bytes, f1(r.generation_us), r.ms.toFixed(2), f1(r.gflops), `${r.speedup.toFixed(2)}x`]));
  return { text: `kernel ${rows[0].shape.join('x')}, passes on and off (speedup over none)\n${text}`, json: { bench: 'passes', rows } };
}

/** `bench codegen`, the kernel half: ours and clang's kernel for the same schedule, timed side by side. */
export async function benchCodegenKernels(dir, generation) {
  const ours = readCase(path.join(dir, 'jitzoo.wasm'));
  const inputs = inputsFor(ours.meta, 7);
  const runtimes = { jitzoo: wasmRuntime(ours, inputs) };
  const clangFile = path.join(dir, 'clang.wasm');
  if (generation.clang && fs.existsSync(clangFile)) runtimes.clang = wasmRuntime(readCase(clangFile), inputs);
  const times = await timeRuntimes(runtimes, { warmup: 2, minReps: 9, minMs: 3000 });
  const t = times.jitzoo;
  checked(ours.meta, inputs, t.result, 'jitzoo kernel');
  const result = { ...generation, jitzoo: { ...generation.jitzoo, kernel_ms: t.ms, gflops: gflops(ours.meta.flops, t.ms) } };
  if (times.clang) {
    const ct = times.clang;
    checked(ours.meta, inputs, ct.result, 'clang kernel');
    Object.assign(result.clang, { kernel_ms: ct.ms, gflops: gflops(ours.meta.flops, ct.ms) });
    result.produce_speedup = (generation.clang.median_ms * 1000) / generation.jitzoo.median_us;
    result.kernel_speed_ratio = result.jitzoo.gflops / result.clang.gflops;
  }
  const rows = [['jitzoo (Wasm)', `${generation.jitzoo.median_us.toFixed(1)} µs`, generation.jitzoo.bytes, f1(result.jitzoo.gflops)]];
  if (generation.wgsl) rows.push(['jitzoo (WGSL)', `${generation.wgsl.median_us.toFixed(1)} µs`, generation.wgsl.bytes, '-']);
  if (result.clang?.gflops) rows.push(['C → clang -O3 → wasm-ld', `${generation.clang.median_ms.toFixed(1)} ms`, generation.clang.bytes, f1(result.clang.gflops)]);
  let text = `${generation.op} ${generation.schedule}\n${table(['pipeline', 'generate (median)', 'bytes', 'kernel GFLOP/s'], rows)}`;
  if (result.produce_speedup) {
    text += `\nours: ${Math.round(result.produce_speedup)}x faster to produce; kernel speed ${result.kernel_speed_ratio.toFixed(2)}x clang's`;
  } else text += '\nconventional pipeline skipped (clang or wasm-ld missing)';
  return { text, json: { bench: 'codegen', ...result } };
}
