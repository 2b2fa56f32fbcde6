/**
 * The clock kernels are timed with, and how big a timed batch may be. Browsers coarsen
 * `performance.now()` (100 µs in Chrome without cross-origin isolation, more with jitter
 * elsewhere): a call shorter than a tick reads as 0 or as one tick. Timing therefore runs calls
 * in batches that span many ticks, and never a batch that blocks the thread longer than a slice.
 */
export interface ClockInfo {
  /** What was read: `performance.now`. */
  name: string;
  /** The smallest step it was seen to take, in milliseconds. */
  resolutionMs: number;
  /** Whether the page is cross-origin isolated (browsers then give finer time); true in Node. */
  crossOriginIsolated: boolean;
}

/** Ticks a timed batch spans at least, so a coarse clock's rounding is a few percent at most. */
export const MIN_TICKS = 20;
/** The longest a timed batch may block the thread, in milliseconds (about a frame's budget). */
export const SLICE_MS = 8;

let measured: ClockInfo | undefined;

/** The clock's resolution, measured once: the smallest nonzero step of successive readings. */
export function clockInfo(): ClockInfo {
  if (measured) return measured;
  const now = () => performance.now();
  let smallest = Infinity;
  const deadline = now() + 5;
  for (let steps = 0; steps < 20 && now() < deadline;) {
    const t0 = now();
    let t1 = now();
    while (t1 === t0) t1 = now();
    smallest = Math.min(smallest, t1 - t0);
    steps++;
  }
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  measured = {
    name: "performance.now",
    resolutionMs: Number.isFinite(smallest) ? smallest : 1,
    crossOriginIsolated: isolated ?? typeof (globalThis as { window?: unknown }).window === "undefined",
  };
  return measured;
}

/**
 * Calls per timed batch for a call estimated at `estimateMs`: enough to last `targetMs` and to
 * span {@link MIN_TICKS} ticks of a clock of `resolutionMs`, but never more than fit in
 * `sliceMs` (at least 1). An estimate of 0 (a call that read as no time) counts as a whole tick,
 * the most it may take, so the batch stays inside the slice; batches then measure it better.
 */
export function batchSize(estimateMs: number, targetMs: number, resolutionMs = clockInfo().resolutionMs,
  sliceMs = SLICE_MS): number {
  const perCall = Math.max(estimateMs > 0 ? estimateMs : resolutionMs, 1e-4);
  const wanted = Math.ceil(Math.max(targetMs, MIN_TICKS * resolutionMs) / perCall);
  const fits = Math.floor(Math.max(sliceMs, perCall) / perCall);
  return Math.max(1, Math.min(wanted, fits));
}

/** Most calls a batch grows to while it reads as too short (a call that takes no measurable time at all). */
const MOST_CALLS = 1 << 20;

/**
 * Times `batch.calls` calls of `call`, in milliseconds per call. A batch that spans fewer than
 * {@link MIN_TICKS} ticks (its size was estimated from a slower call, or from a coarse reading)
 * is not taken: it doubles and runs again while it stays within a slice, and `batch.calls` keeps
 * the size found for the call's next batch. So a call faster than its estimate never reads as 0.
 */
export function timeBatch(call: () => void, batch: { calls: number }, resolutionMs = clockInfo().resolutionMs,
  now: () => number = () => performance.now()): number {
  for (;;) {
    const t0 = now();
    for (let r = 0; r < batch.calls; r++) call();
    const took = now() - t0;
    if (took >= MIN_TICKS * resolutionMs || 2 * took >= SLICE_MS || batch.calls >= MOST_CALLS) return took / batch.calls;
    batch.calls *= 2;
  }
}
