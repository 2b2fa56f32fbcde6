// ./jitzoo bench dynamic: FTuner's composed uKernel plans against padding to one fixed tile, in V8,
// for a MatMul whose M axis (a sequence length) varies over a range.

import fs from 'node:fs';
import path from 'node:path';
import { readCases } from './cases.mjs';
import { random, relativeError } from './data.mjs';
import { reference } from './reference.mjs';
import { gflops, median, timeSideBySide } from './timing.mjs';
import { TOLERANCE } from './check.mjs';
import { describeSchedule, f1, log, table } from './bench.mjs';

const KINDS = ['ukernel', 'padded', 'exact'];
const LABEL = /^(ukernel|padded|exact)-r(\d+)-/;
const PAGE = 65536;
const ALIGN = 64;

/**
 * Every kernel of a dynamic MatMul instantiated over one memory that holds A (the largest padded
 * extent's rows), B, one packed copy of B per distinct layout, and a C per approach, so a plan's
 * calls are the entry called on row slices of A and C, exactly as a host would run it.
 */
export class DynamicMemory {
  constructor(k, n, maxRows, seed = 7) {
    this.k = k;
    this.n = n;
    this.maxRows = maxRows;
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.end = PAGE;
    this.packed = [];
    const next = random(seed);
    this.A = this.alloc(maxRows * k);
    this.B = this.alloc(k * n);
    this.floats(this.A, maxRows * k).forEach((_, i, a) => { a[i] = next(); });
    this.floats(this.B, k * n).forEach((_, i, a) => { a[i] = next(); });
    this.C = Object.fromEntries(KINDS.map((kind) => [kind, this.alloc(maxRows * n)]));
  }

  /** Offset of `count` fresh floats, the memory grown to hold them. */
  alloc(count) {
    const at = this.end;
    this.end = Math.ceil((at + 4 * count) / ALIGN) * ALIGN;
    const pages = Math.ceil(this.end / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
    return at;
  }

  floats(offset, count) {
    return new Float32Array(this.memory.buffer, offset, count);
  }

  /** A kernel of this op: { rows, entry(a, c), meta }, its B packed once when it asks (copies shared when identical). */
  load(c) {
    const { meta } = c;
    const [rows, k, n] = meta.shape;
    if (meta.op !== 'matmul' || k !== this.k || n !== this.n || rows > this.maxRows) {
      throw new Error(`${c.name}: not a ${this.maxRows}-row-or-fewer matmul of K=${this.k}, N=${this.n}`);
    }
    const exports = new WebAssembly.Instance(new WebAssembly.Module(c.code), { env: { memory: this.memory } }).exports;
    let b = this.B;
    if (meta.pack) {
      const scratch = this.alloc(meta.pack.floats);
      exports[meta.pack.entry](this.B, scratch);
      const fresh = this.floats(scratch, meta.pack.floats);
      const same = this.packed.find((p) => p.floats === meta.pack.floats
        && this.floats(p.offset, p.floats).every((x, i) => Object.is(x, fresh[i])));
      if (same) {
        this.end = scratch; // give the scratch copy back
        b = same.offset;
      } else {
        this.packed.push({ offset: scratch, floats: meta.pack.floats });
        b = scratch;
      }
    }
    const entry = exports[meta.entry];
    return { rows, meta, entry: (a, cOffset) => entry(a, b, cOffset) };
  }

  /** Runs a plan's pieces over consecutive row slices of A into C.ukernel. */
  runPlan(plan, ukernels) {
    let row = 0;
    for (const piece of plan.pieces) {
      const u = ukernels.get(piece.rows);
      for (let i = 0; i < piece.count; i++, row += piece.rows) {
        u.entry(this.A + 4 * row * this.k, this.C.ukernel + 4 * row * this.n);
      }
    }
  }

  /** The float64 reference of the first `rows` rows of C. */
  reference(rows) {
    return reference({ op: 'matmul', shape: [rows, this.k, this.n] },
      { A: this.floats(this.A, rows * this.k), B: this.floats(this.B, this.k * this.n) });
  }

  /** The first `rows` rows of C[kind], copied. */
  result(kind, rows) {
    return this.floats(this.C[kind], rows * this.n).slice();
  }

  /** C[kind] filled with NaN, so an element no call writes shows. */
  poison(kind) {
    this.floats(this.C[kind], this.maxRows * this.n).fill(NaN);
  }
}

/** The kernels by kind and rows, through the labels index that `codegen cases --requests` writes (a kernel asked for twice is written once). */
function readKernels(dir) {
  const index = path.join(dir, 'labels.json');
  if (!fs.existsSync(index)) throw new Error(`${dir}: no labels.json (write it with codegen cases --requests)`);
  const byFile = new Map(readCases(dir).map((c) => [path.basename(c.file), c]));
  const out = Object.fromEntries(KINDS.map((k) => [k, new Map()]));
  for (const [label, file] of Object.entries(JSON.parse(fs.readFileSync(index, 'utf8')))) {
    const m = LABEL.exec(`${label}-`);
    if (!m) throw new Error(`${label}: not a label of \`space dynamic --requests\` (ukernel-rN, padded-rN, exact-rN)`);
    if (!byFile.has(file)) throw new Error(`${label}: its kernel ${file} is not in ${dir}`);
    out[m[1]].set(Number(m[2]), byFile.get(file));
  }
  return out;
}

/**
 * `./jitzoo test`: every uKernel alone and every extent's composed plan against the float64
 * reference (C poisoned first, so a row no call writes shows). Returns one result per check, as
 * `checkCases` does: { name, ok, error, message }.
 */
export function checkPlans(dir, planFile) {
  const plans = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  const cases = readKernels(dir).ukernel;
  const memory = new DynamicMemory(plans.k, plans.n, Math.max(...plans.plans.map((p) => p.paddedExtent), ...cases.keys()));
  const ukernels = new Map([...cases].map(([rows, c]) => [rows, memory.load(c)]));
  const expect = (rows, run) => {
    memory.poison('ukernel');
    run();
    return relativeError(memory.result('ukernel', rows), memory.reference(rows));
  };
  const results = [];
  const record = (name, measure) => {
    const started = performance.now();
    try {
      const error = measure();
      results.push({ name, backend: 'wasm', ok: error <= TOLERANCE, error, message: `relative error ${error.toExponential(2)}`, ms: performance.now() - started });
    } catch (e) {
      results.push({ name, backend: 'wasm', ok: false, error: Infinity, message: e.message, ms: performance.now() - started });
    }
  };
  for (const [rows, u] of ukernels) record(`ukernel-r${rows}`, () => expect(rows, () => u.entry(memory.A, memory.C.ukernel)));
  for (const plan of plans.plans) {
    const pieces = plan.pieces.map((p) => `${p.count}x${p.rows}`).join('+');
    record(`plan-${plan.extent}-${pieces}`, () => expect(plan.extent, () => memory.runPlan(plan, ukernels)));
  }
  return results;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const geomean = (xs) => Math.exp(mean(xs.map(Math.log)));

/**
 * For every extent of the plans' range (every eighth with `quick`): the composed plan, the padded
 * kernel (M rounded up to the fixed tile) and the kernel compiled for the exact extent, timed side
 * by side; each checked against the others, and against the float64 reference at a few extents.
 */
export async function benchDynamic(dir, planFile, { quick = false } = {}) {
  const plans = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  const { k, n, range: [lo, hi] } = plans;
  const cases = readKernels(dir);
  const tile = Math.min(...cases.padded.keys());
  if (!Number.isFinite(tile)) throw new Error(`${dir}: no padded-rN kernels (space dynamic --padded-tile)`);
  const maxRows = Math.max(Math.ceil(hi / tile) * tile, ...plans.plans.map((p) => p.paddedExtent));
  const memory = new DynamicMemory(k, n, maxRows);
  const load = (map) => new Map([...map].map(([rows, c]) => [rows, memory.load(c)]));
  const kernels = { ukernel: load(cases.ukernel), padded: load(cases.padded), exact: load(cases.exact) };
  const approaches = (plan) => {
    const s = plan.extent;
    const padded = kernels.padded.get(Math.ceil(s / tile) * tile);
    const exact = kernels.exact.get(s);
    if (!padded || !exact) throw new Error(`extent ${s}: no padded or exact kernel in ${dir}`);
    return {
      ukernel: () => memory.runPlan(plan, kernels.ukernel),
      padded: () => padded.entry(memory.A, memory.C.padded),
      exact: () => exact.entry(memory.A, memory.C.exact),
    };
  };

  log(`each uKernel alone (${kernels.ukernel.size})`);
  const alone = await timeSideBySide(Object.fromEntries([...kernels.ukernel].map(([rows, u]) => [rows, () => u.entry(memory.A, memory.C.ukernel)])),
    { warmup: 2, warmupMs: 0, minReps: quick ? 3 : 7, minMs: 0, burstMs: 20 });
  const ukernels = [...kernels.ukernel].sort(([a], [b]) => a - b).map(([rows, u]) => ({ rows, schedule: u.meta.schedule, gflops: gflops(u.meta.flops, alone[rows].ms) }));

  const extents = plans.plans.filter((p) => !quick || p.extent % 8 === 1 || p.extent % 64 === 0 || p.extent === hi);
  const checkAt = new Set([lo, Math.min(hi, 53), Math.floor((lo + hi) / 2) + 1, hi]);
  const options = quick ? { warmup: 1, warmupMs: 0, minReps: 3, maxReps: 3, minMs: 0, burstMs: 2 }
    : { warmup: 1, warmupMs: 0, minReps: 5, maxReps: 5, minMs: 0, burstMs: 5 };
  log(`${extents.length} extents of ${lo}..${hi} x ${k} x ${n}: composed plan, padded to a multiple of ${tile}, exact kernel, side by side`);
  let worst = 0;
  const rows = [];
  for (const plan of extents) {
    const s = plan.extent;
    const calls = approaches(plan);
    for (const kind of KINDS) {
      memory.poison(kind);
      calls[kind]();
    }
    const results = Object.fromEntries(KINDS.map((kind) => [kind, memory.result(kind, s)]));
    const want = checkAt.has(s) ? memory.reference(s) : results.exact;
    for (const kind of KINDS) {
      const error = relativeError(results[kind], want);
      if (!(error <= TOLERANCE)) throw new Error(`extent ${s}: the ${kind} result is off by ${error.toExponential(2)}`);
      worst = Math.max(worst, error);
    }
    const t = await timeSideBySide(calls, options);
    rows.push({ extent: s, plan: plan.pieces, calls: plan.calls, paddedExtent: plan.paddedExtent,
      ms: { plan: t.ukernel.ms, padded: t.padded.ms, exact: t.exact.ms } });
    if (rows.length % 64 === 0) log(`  ${rows.length}/${extents.length}`);
  }

  const ragged = rows.filter((r) => r.extent % tile !== 0);
  const whole = rows.filter((r) => r.extent % tile === 0);
  const speedup = (r) => r.ms.padded / r.ms.plan;
  const ofExact = (r) => r.ms.exact / r.ms.plan;
  const sum = (rs, key) => rs.reduce((a, r) => a + r.ms[key], 0);
  const buckets = [];
  for (let b = Math.floor((lo - 1) / tile); b * tile < hi; b++) {
    const rs = ragged.filter((r) => Math.floor((r.extent - 1) / tile) === b);
    if (rs.length) {
      buckets.push({ from: Math.max(lo, b * tile + 1), to: Math.min(hi, (b + 1) * tile), extents: rs.length,
        speedup_mean: mean(rs.map(speedup)), of_exact_mean: mean(rs.map(ofExact)) });
    }
  }
  const json = {
    bench: 'dynamic', op: 'matmul', range: [lo, hi], k, n, padded_tile: tile, extents: rows.length,
    ukernels,
    speedup_vs_padded: {
      mean_not_multiple: mean(ragged.map(speedup)), geomean_not_multiple: geomean(ragged.map(speedup)),
      min_not_multiple: Math.min(...ragged.map(speedup)), mean_multiple: whole.length ? mean(whole.map(speedup)) : null,
      summed_latency: sum(rows, 'padded') / sum(rows, 'plan'),
    },
    plan_of_exact: { mean: mean(rows.map(ofExact)), min: Math.min(...rows.map(ofExact)), summed_latency: sum(rows, 'exact') / sum(rows, 'plan') },
    median_calls: median(rows.map((r) => r.calls)),
    worst_relative_error: worst,
    buckets,
    per_extent: rows.map((r) => ({ extent: r.extent, calls: r.calls, padded_extent: r.paddedExtent, ...r.ms })),
  };
  const s = json.speedup_vs_padded;
  const text = [
    `MatMul M x ${k} x ${n}, M = ${lo}..${hi}; Wasm, one thread, V8; medians; every extent's three results checked against each other`,
    `(and the float64 reference at ${[...checkAt].join(', ')}; worst relative error ${worst.toExponential(1)})`,
    '',
    'uKernels (FTuner set for this machine):',
    table(['rows', 'schedule', 'GFLOP/s alone'], ukernels.map((u) => [String(u.rows), describeSchedule(u.schedule), f1(u.gflops)])),
    '',
    `composed plan vs padding M up to a multiple of ${tile} (speedup = padded time / plan time), and plan vs a kernel compiled for the exact extent:`,
    table(['extents', 'not multiples of ' + tile, 'mean speedup', 'plan speed / exact'],
      buckets.map((b) => [`${b.from}..${b.to}`, String(b.extents), `${b.speedup_mean.toFixed(2)}x`, `${Math.round(b.of_exact_mean * 100)}%`])),
    '',
    `not multiples of ${tile} (${ragged.length} extents): mean speedup ${s.mean_not_multiple.toFixed(2)}x (target >= 1.3x), `
      + `geometric mean ${s.geomean_not_multiple.toFixed(2)}x, least ${s.min_not_multiple.toFixed(2)}x`,
    `multiples of ${tile}: mean ${s.mean_multiple?.toFixed(2) ?? '-'}x; all extents' latency summed: padded / plan ${s.summed_latency.toFixed(2)}x; `
      + `plan at ${Math.round(json.plan_of_exact.summed_latency * 100)}% of exact kernels' speed (summed); median ${json.median_calls} calls per plan`,
  ].join('\n');
  return { text, json };
}
