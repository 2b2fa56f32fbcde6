import type { MatMulDims } from "./ops.js";

/**
 * The oracle: C = A × B for each batch, row-major, accumulated in float64 and rounded to
 * float32 once per element. A is [batch, M, K], B is [batch, K, N], C is [batch, M, N].
 */
export function referenceMatMul(d: MatMulDims, a: Float32Array, b: Float32Array): Float32Array {
  if (a.length !== d.batch * d.m * d.k || b.length !== d.batch * d.k * d.n) {
    throw new Error(`operand sizes ${a.length}, ${b.length} do not fit [${d.batch}, ${d.m}, ${d.k}, ${d.n}]`);
  }
  const c = new Float32Array(d.batch * d.m * d.n);
  for (let t = 0; t < d.batch; t++) {
    const ao = t * d.m * d.k, bo = t * d.k * d.n, co = t * d.m * d.n;
    for (let i = 0; i < d.m; i++) {
      for (let j = 0; j < d.n; j++) {
        let sum = 0;
        for (let k = 0; k < d.k; k++) sum += a[ao + i * d.k + k] * b[bo + k * d.n + j];
        c[co + i * d.n + j] = sum;
      }
    }
  }
  return c;
}

/**
 * Default floor of {@link maxRelativeError}'s denominator. Inputs in [-1, 1) give outputs of
 * magnitude about sqrt(K); a few of them land near zero by cancellation, where float32 rounding
 * in a different summation order (about 1e-6 absolute for K = 256) would look like a huge
 * relative error. A floor of 1 keeps the test relative for typical outputs and absolute near zero.
 */
export const RELATIVE_ERROR_FLOOR = 1;

/**
 * The largest {@link maxRelativeError} a kernel may have against the reference: what the SDK's
 * checks, its tuning, the benches and the harness all accept.
 */
export const TOLERANCE = 1e-4;

/**
 * The largest element-wise error of `actual` against `expected`:
 * `max_i |actual[i] - expected[i]| / max(|expected[i]|, floor)`.
 * Relative where |expected| is at least `floor`, absolute (scaled by `floor`) below it.
 * Equal infinities agree, and so do NaNs where the reference has one (a mask of −∞ added to
 * scores, a fully masked softmax row); any other NaN, or a length mismatch, counts as infinitely wrong.
 */
export function maxRelativeError(actual: Float32Array, expected: Float32Array, floor = RELATIVE_ERROR_FLOOR): number {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], x = expected[i];
    if (a === x || (a !== a && x !== x)) continue; // only NaN differs from itself
    const e = Math.abs(a - x) / Math.max(Math.abs(x), floor);
    if (Number.isNaN(e)) return Infinity;
    if (e > worst) worst = e;
  }
  return worst;
}

/** A small seeded generator (mulberry32) of numbers in [0, 1): generation's sampling, the harness's data. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic inputs in [-1, 1) (xorshift32), so every kernel of an op sees the same data. */
export function seededFloats(count: number, seed: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(count);
  let x = seed | 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = ((x >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/** erf's numerator and denominator coefficients in x², lowest first (the compiler's GELU kernels use them too). */
const ERF_P = [-1.60960333262415e-2, -2.95459980854025e-3, -7.34990630326855e-4, -5.69250639462346e-5, -2.10102402082508e-6,
  2.77068142495902e-8, -2.72614225801306e-10];
const ERF_Q = [-1.42647390514189e-2, -7.37332916720468e-3, -1.68282697438203e-3, -2.13374055278905e-4, -1.45660718464996e-5];

/**
 * erf for float32 values, fast: x·P(x²)/Q(x²) over x clamped to [−4, 4] (Eigen's float form, the
 * one the kernels' GELU computes), within 3e-7 of {@link erf}; about 20 times faster, what a host
 * Erf over a whole activation wants.
 */
export function erfFloat(x: number): number {
  const z = x > 4 ? 4 : x < -4 ? -4 : x, z2 = z * z; // NaN passes through
  // Horner written out, the coefficients in constants: V8 keeps it all in registers (three times
  // faster than loops over the arrays, on a host Erf of 196,608 values: 1.4 against 3.4 ms)
  const p = (((((P6 * z2 + P5) * z2 + P4) * z2 + P3) * z2 + P2) * z2 + P1) * z2 + P0;
  const q = (((Q4 * z2 + Q3) * z2 + Q2) * z2 + Q1) * z2 + Q0;
  return (z * p) / q;
}

const [P0, P1, P2, P3, P4, P5, P6] = ERF_P;
const [Q0, Q1, Q2, Q3, Q4] = ERF_Q;

/** The nearest integer, ties to even (ONNX's Round, the quantizers' nearbyint, Wasm's `f32.nearest`). */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r; // Math.round takes a tie up: back down to the even one
}

/** erf in float64: its Maclaurin series below 2.5, the continued fraction of erfc above. */
export function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let term = ax, sum = ax;
    const x2 = ax * ax;
    for (let n = 1; n < 80; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  let f = 0;
  for (let n = 60; n >= 1; n--) f = n / 2 / (ax + f);
  return Math.sign(x) * (1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f));
}
