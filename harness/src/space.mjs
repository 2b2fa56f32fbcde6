// ./jitzoo bench space: the lite space against an exhaustive sweep of a large grid, in V8.

import { inputsFor } from './data.mjs';
import { gflops, timeSideBySide } from './timing.mjs';
import { readCases } from './cases.mjs';
import { byPaperKernel, checked, describeSchedule, f1, log, table, wasmRuntime } from './bench.mjs';

/** A lite candidate's place in the space's ordering, from its label `...-Lnn-<id>`. */
const rankOf = (c) => {
  const m = /-L(\d+)-/.exec(c.name);
  if (!m) throw new Error(`${c.name}: not a lite-space case (no -Lnn- rank in its name)`);
  return Number(m[1]);
};


/**
 * One quick timing per candidate, in order. A candidate whose first run is over `cutoff` times the
 * best median so far cannot win and is not repeated (its first run stands as its time).
 */
async function screen(cases, inputs, options, cutoff = Infinity) {
  const timed = [];
  let best = Infinity;
  for (const c of cases) {
    const runtime = wasmRuntime(c, inputs);
    const first = (await timeSideBySide({ c: runtime.call }, { warmup: 0, warmupMs: 0, minReps: 1, maxReps: 1, minMs: 0 })).c.ms;
    const ms = first > cutoff * best ? first : (await timeSideBySide({ c: runtime.call }, options)).c.ms;
    best = Math.min(best, ms);
    timed.push({ c, ms });
  }
  return timed;
}

/**
 * For each paper kernel in both directories: every sweep candidate screened (runs cut short when
 * hopeless), every lite candidate timed in the space's order, then the three best of each side by
 * side. Reports the lite best as a fraction of the sweep best, and the place in the space's order
 * of the first lite candidate within 5% of the lite best.
 */
export async function benchSpace(liteDir, sweepDir, { quick = false } = {}) {
  const lite = byPaperKernel(readCases(liteDir));
  const sweep = byPaperKernel(readCases(sweepDir));
  const quickScreen = { warmup: 1, warmupMs: 0, minReps: 2, maxReps: 2, minMs: 0 };
  const liteScreen = quick ? quickScreen : { warmup: 1, warmupMs: 0, minReps: 5, maxReps: 5, minMs: 0 };
  const final = quick ? { warmup: 1, minReps: 3, maxReps: 5, minMs: 0, burstMs: 30 }
    : { warmup: 2, warmupMs: 500, minReps: 9, minMs: 3000, burstMs: 100 };
  const kernels = [];
  for (const name of [...lite.keys()].sort()) {
    if (!sweep.has(name)) throw new Error(`${name}: in the lite directory but not in the sweep`);
    const ordered = lite.get(name).sort((a, b) => rankOf(a) - rankOf(b));
    const meta = ordered[0].meta;
    const inputs = inputsFor(meta, 7);
    log(`${name} ${meta.shape.join('x')}: sweeping ${sweep.get(name).length} candidates`);
    const swept = (await screen(sweep.get(name), inputs, quickScreen, 2)).sort((a, b) => a.ms - b.ms);
    log(`${name}: timing the ${ordered.length} lite candidates in the space's order`);
    const liteTimes = await screen(ordered, inputs, liteScreen);
    const liteSorted = [...liteTimes].sort((a, b) => a.ms - b.ms);
    const finalists = [...swept.slice(0, 3).map((t) => ['sweep', t.c]), ...liteSorted.slice(0, 3).map((t) => ['lite', t.c])];
    log(`${name}: the three best of each, side by side`);
    const runtimes = Object.fromEntries(finalists.map(([, c], i) => [`k${i}`, wasmRuntime(c, inputs)]));
    const times = await timeSideBySide(Object.fromEntries(Object.entries(runtimes).map(([k, r]) => [k, r.call])), final);
    finalists.forEach(([, c], i) => checked(meta, inputs, runtimes[`k${i}`].result, describeSchedule(c.meta.schedule)));
    const best = (side) => finalists.map(([s, c], i) => ({ s, c, ms: times[`k${i}`].ms })).filter((f) => f.s === side)
      .reduce((a, b) => (b.ms < a.ms ? b : a));
    const bestLite = best('lite');
    const bestSweep = best('sweep');
    const liteBestMs = liteSorted[0].ms;
    const first = liteTimes.findIndex((t) => t.ms <= liteBestMs * 1.05);
    kernels.push({
      kernel: name, shape: meta.shape, lite: ordered.length, sweep: sweep.get(name).length,
      lite_best: { gflops: gflops(meta.flops, bestLite.ms), schedule: bestLite.c.meta.schedule, rank: rankOf(bestLite.c) },
      sweep_best: { gflops: gflops(meta.flops, bestSweep.ms), schedule: bestSweep.c.meta.schedule },
      lite_of_sweep: bestSweep.ms / bestLite.ms,
      first_within_5pct: first + 1,
      first_candidate: { gflops: gflops(meta.flops, liteTimes[0].ms), schedule: ordered[0].meta.schedule },
    });
  }
  const text = table(
    ['kernel', 'lite', 'sweep', 'lite best (GFLOP/s, schedule, rank)', 'sweep best', 'lite/sweep', '1st within 5%'],
    kernels.map((k) => [k.kernel, String(k.lite), String(k.sweep),
      `${f1(k.lite_best.gflops)} ${describeSchedule(k.lite_best.schedule)} #${k.lite_best.rank + 1}`,
      `${f1(k.sweep_best.gflops)} ${describeSchedule(k.sweep_best.schedule)}`,
      `${Math.round(k.lite_of_sweep * 100)}%`, `#${k.first_within_5pct}`]));
  return {
    text: 'Wasm, one thread, V8; lite = the space service\'s candidates for this machine, sweep = the exhaustive grid;\n'
      + 'best of each timed side by side (medians); targets: lite/sweep >= 97%, first within 5% of the lite best at #8 or earlier\n'
      + text,
    json: { bench: 'space', unit: 'GFLOP/s', kernels },
  };
}
