import { OpKind, type OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";

/** Named dimensions of a (batch) matmul; `batch` is 1 for a plain matmul. */
export interface MatMulDims {
  batch: number;
  m: number;
  k: number;
  n: number;
}

/** The ABI name of an op kind (`matmul`, `batch_matmul`), as in kernel metadata and the zoo. */
export function opName(kind: OpKind): string {
  switch (kind) {
    case OpKind.MATMUL: return "matmul";
    case OpKind.BATCH_MATMUL: return "batch_matmul";
    default: throw new Error(`unsupported op kind ${OpKind[kind] ?? kind}`);
  }
}

/** Reads [M,K,N] (matmul) or [batch,M,K,N] (batch matmul); throws on anything else. */
export function dimsOf(op: OpSpec): MatMulDims {
  const s = op.shape;
  if (s.some((d) => !Number.isInteger(d) || d < 1)) throw new Error(`every dimension must be at least 1: [${s.join(",")}]`);
  if (op.kind === OpKind.MATMUL && s.length === 3) return { batch: 1, m: s[0], k: s[1], n: s[2] };
  if (op.kind === OpKind.BATCH_MATMUL && s.length === 4) return { batch: s[0], m: s[1], k: s[2], n: s[3] };
  throw new Error(`unsupported op ${OpKind[op.kind]} with shape [${s.join(",")}]`);
}

/** Floating-point operations of one run: 2·batch·M·K·N. */
export function flopsOf(op: OpSpec): number {
  const d = dimsOf(op);
  return 2 * d.batch * d.m * d.k * d.n;
}

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
 * The largest element-wise error of `actual` against `expected`:
 * `max_i |actual[i] - expected[i]| / max(|expected[i]|, floor)`.
 * Relative where |expected| is at least `floor`, absolute (scaled by `floor`) below it.
 * NaN anywhere, or a length mismatch, counts as infinitely wrong.
 */
export function maxRelativeError(actual: Float32Array, expected: Float32Array, floor = RELATIVE_ERROR_FLOOR): number {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.abs(actual[i] - expected[i]) / Math.max(Math.abs(expected[i]), floor);
    if (Number.isNaN(e)) return Infinity;
    if (e > worst) worst = e;
  }
  return worst;
}

/** Deterministic inputs in [-1, 1) (xorshift32), so every kernel of an op sees the same data. */
export function seededFloats(count: number, seed: number): Float32Array {
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
