import { batchSize, clockInfo, MIN_TICKS, SLICE_MS } from "./clock.js";

/** A latency measurement. */
export interface Timing {
  /** Median over the samples of the mean time of one call, in milliseconds. */
  medianMs: number;
  /** How many samples the median was taken over. */
  samples: number;
  /** Calls per sample. */
  repetitions: number;
}

/** How {@link time} measures. */
export interface TimingOptions {
  /** Calls before measuring, at least (default 3). */
  warmups?: number;
  /**
   * Keep warming up until this long has passed (default 20 ms): engines compile Wasm with a
   * baseline tier first and swap in optimized code once a function is hot.
   */
  warmupMs?: number;
  /** Samples to take the median of (default 7). */
  samples?: number;
  /** Target duration of one sample; calls are repeated to reach it (default 5 ms). */
  sampleMs?: number;
}

const now = () => performance.now();

/**
 * Times `run`: warm-up batches (each twice the last until a batch spans {@link MIN_TICKS} clock
 * ticks, so a coarse browser clock still resolves it), then `samples` samples, each the mean of
 * enough calls to last about `sampleMs`, never a batch longer than {@link SLICE_MS}. The median
 * resists the noise of a busy machine.
 */
export function time(run: () => void, options: TimingOptions = {}): Timing {
  const { warmups = 3, warmupMs = 20, samples = 7, sampleMs = 5 } = options;
  const { resolutionMs } = clockInfo();
  const warmupEnd = now() + warmupMs;
  let batch = 1;
  let perCall = 0;
  for (let i = 0; i < warmups || now() < warmupEnd; i++) {
    const t0 = now();
    for (let r = 0; r < batch; r++) run();
    const took = now() - t0;
    perCall = took / batch; // the last warm-up batch sizes the samples
    if (took < MIN_TICKS * resolutionMs && 2 * took < SLICE_MS) batch *= 2;
  }
  const repetitions = batchSize(perCall, sampleMs, resolutionMs);
  const perCallSamples: number[] = [];
  for (let s = 0; s < samples; s++) {
    const start = now();
    for (let r = 0; r < repetitions; r++) run();
    perCallSamples.push((now() - start) / repetitions);
  }
  return { medianMs: median(perCallSamples), samples, repetitions };
}

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) throw new Error("median of nothing");
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
