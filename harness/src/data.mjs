// Operand data for a kernel: seeded, so every runtime and every run sees the same numbers.

/** A small, fast, seeded generator (mulberry32) of floats uniform in [-1, 1). */
export function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

/** Number of floats of a shape. */
export const size = (shape) => shape.reduce((a, b) => a * b, 1);

/** The operands a kernel reads (every one but C), filled from one seed, keyed by name. */
export function inputsFor(meta, seed = 1) {
  const next = random(seed);
  const inputs = {};
  for (const name of meta.operands) {
    if (name === 'C') continue;
    const data = new Float32Array(size(meta.operandShapes[name]));
    for (let i = 0; i < data.length; i++) data[i] = next();
    inputs[name] = data;
  }
  return inputs;
}

/**
 * How far a result is from the reference: the largest absolute difference over the largest
 * reference magnitude (at least 1), so sums that cancel to near zero do not inflate it.
 * NaN anywhere (an element never written) is an infinite error.
 */
export function relativeError(got, want) {
  if (got.length !== want.length) return Infinity;
  let diff = 0;
  let scale = 1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= diff)) diff = Number.isNaN(d) ? Infinity : d;
    const w = Math.abs(want[i]);
    if (w > scale) scale = w;
  }
  return diff / scale;
}
