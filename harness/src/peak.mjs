// The single-thread Wasm SIMD peak of this machine: the SDK's peak loops (f32x4 multiply-add
// chains, as mul + add and as relaxed_madd), timed here as the benches time kernels.

import './wasm.mjs'; // sets the relaxed SIMD flag
import { peakLoop } from '@jitzoo/client/internal';
import { timeCalls } from './timing.mjs';

/**
 * The peak loop of one form (`relaxed` or not) ready to call: { call, flops } with `flops` per
 * call; null when this engine lacks relaxed SIMD.
 */
export { peakLoop as peakRuntime };

/** Measured GFLOP/s of one form (`relaxed` or not); null when this engine lacks relaxed SIMD. */
export async function measurePeak(relaxed, { iterations = 2_000_000 } = {}) {
  const runtime = peakLoop(relaxed, iterations);
  if (!runtime) return null;
  const { ms } = await timeCalls(runtime.call, { warmup: 2, minReps: 9, minMs: 500 });
  return runtime.flops / ms / 1e6;
}
