// Timing: medians of repeated calls, after a warm-up, with enough repetitions to smooth a noisy machine.

/** Median of an array of numbers. */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const DEFAULTS = { warmup: 3, warmupMs: 200, minReps: 7, maxReps: 200, minMs: 600, burstMs: 0 };

async function timed(call) {
  const t = performance.now();
  await call();
  return performance.now() - t;
}

/**
 * Times several calls (sync or async) side by side: each warmed up (`warmup` calls and at least
 * `warmupMs`), then taken in turn, round after round, until `minReps` rounds and `minMs` have
 * passed (or `maxReps` rounds), so a noisy neighbour slows them all alike. With `burstMs`, each
 * turn is one unmeasured call (to bring its data back into cache after the others ran) and then
 * as many measured calls as fill about `burstMs`. Returns, by name, the median milliseconds of
 * one call and the number of calls timed.
 */
export async function timeSideBySide(calls, options = {}) {
  const { warmup, warmupMs, minReps, maxReps, minMs, burstMs } = { ...DEFAULTS, ...options };
  const names = Object.keys(calls);
  const burst = {};
  for (const name of names) {
    const started = performance.now();
    const warm = [];
    for (let i = 0; i < warmup || performance.now() - started < warmupMs; i++) warm.push(await timed(calls[name]));
    burst[name] = burstMs > 0 ? Math.max(1, Math.round(burstMs / median(warm))) : 1;
  }
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  const started = performance.now();
  for (let round = 0; round < maxReps && (round < minReps || performance.now() - started < minMs); round++) {
    for (const name of names) {
      if (burstMs > 0) await calls[name]();
      for (let i = 0; i < burst[name]; i++) samples[name].push(await timed(calls[name]));
    }
  }
  return Object.fromEntries(names.map((n) => [n, { ms: median(samples[n]), reps: samples[n].length }]));
}

/** Times one call; see timeSideBySide. */
export async function timeCalls(call, options) {
  return (await timeSideBySide({ call }, options)).call;
}

/** GFLOP/s of `flops` done in `ms`. */
export const gflops = (flops, ms) => flops / ms / 1e6;
