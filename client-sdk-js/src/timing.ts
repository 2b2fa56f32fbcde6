/** A latency measurement: the median over samples, each the mean of `repetitions` calls. */
export interface Timing {
  medianMs: number;
  samples: number;
}

const now = () => performance.now();

/**
 * Times `run`: two warm-up calls, then `samples` samples of enough calls to last about
 * `sampleMs` each. The median resists the noise of a busy machine.
 */
export function time(run: () => void, samples = 7, sampleMs = 5): Timing {
  run();
  const t0 = now();
  run();
  const once = Math.max(now() - t0, 1e-3);
  const repetitions = Math.max(1, Math.round(sampleMs / once));
  const perCall: number[] = [];
  for (let s = 0; s < samples; s++) {
    const start = now();
    for (let r = 0; r < repetitions; r++) run();
    perCall.push((now() - start) / repetitions);
  }
  perCall.sort((x, y) => x - y);
  return { medianMs: perCall[Math.floor(perCall.length / 2)], samples };
}
