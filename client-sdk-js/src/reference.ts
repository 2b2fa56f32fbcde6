import { OpKind, type OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";

/** Named dimensions of a (batch) matmul. */
export interface MatMulDims {
  batch: number;
  m: number;
  k: number;
  n: number;
}

/** Reads [M,K,N] or [batch,M,K,N]; throws on anything else. */
export function dimsOf(op: OpSpec): MatMulDims {
  const s = op.shape;
  if (op.kind === OpKind.MATMUL && s.length === 3) return { batch: 1, m: s[0], k: s[1], n: s[2] };
  if (op.kind === OpKind.BATCH_MATMUL && s.length === 4) return { batch: s[0], m: s[1], k: s[2], n: s[3] };
  throw new Error(`unsupported op ${OpKind[op.kind]} with shape [${s.join(",")}]`);
}

/** Floating-point operations of one run. */
export function flopsOf(op: OpSpec): number {
  const d = dimsOf(op);
  return 2 * d.batch * d.m * d.k * d.n;
}

/** The oracle: C = A x B per batch, accumulated in float64. */
export function referenceMatMul(d: MatMulDims, a: Float32Array, b: Float32Array): Float32Array {
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
 * Largest |actual - expected| / max(|expected|, 1): relative for large values, absolute near
 * zero, where relative error means nothing. NaN anywhere counts as infinitely wrong.
 */
export function maxRelativeError(actual: Float32Array, expected: Float32Array): number {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.abs(actual[i] - expected[i]) / Math.max(Math.abs(expected[i]), 1);
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
