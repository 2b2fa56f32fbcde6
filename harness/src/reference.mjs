// Reference results, in float64, for every op of ABI v1 (docs/kernel-abi.md): what a kernel's C must be.

import { size } from './data.mjs';

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** erf in float64: its Maclaurin series below 2.5, the continued fraction of erfc above. */
export function erf(x) {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    // Maclaurin series: converges fast enough below 2.5 in float64.
    let term = ax;
    let sum = ax;
    const x2 = ax * ax;
    for (let n = 1; n < 80; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // Continued fraction for erfc, accurate for large |x|.
  let f = 0;
  for (let n = 60; n >= 1; n--) f = (n / 2) / (ax + f);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f);
  return Math.sign(x) * (1 - erfc);
}

function epilogueStep(step, v, j, index, inputs) {
  switch (step.kind) {
    case 'scale': return v * step.value;
    case 'bias': return v + inputs.Bias[j];
    case 'relu': return v > 0 ? v : 0;
    case 'gelu_tanh': return 0.5 * v * (1 + Math.tanh(SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)));
    case 'gelu_erf': return 0.5 * v * (1 + erf(v / Math.SQRT2));
    case 'residual': return v + inputs.Residual[index];
    default: throw new Error(`unknown epilogue step '${step.kind}'`);
  }
}

function matmul(meta, inputs) {
  const batched = meta.op === 'batch_matmul';
  const [batch, m, k, n] = batched ? meta.shape : [1, ...meta.shape];
  const { A, B } = inputs;
  const bStride = meta.broadcastB ? 0 : k * n;
  const epilogue = meta.epilogue ?? [];
  const C = new Float64Array(batch * m * n);
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let r = 0; r < k; r++) {
          const bv = meta.transposeB ? B[b * bStride + j * k + r] : B[b * bStride + r * n + j];
          acc += A[(b * m + i) * k + r] * bv;
        }
        const index = (b * m + i) * n + j;
        for (const step of epilogue) acc = epilogueStep(step, acc, j, index, inputs);
        C[index] = acc;
      }
    }
  }
  return C;
}

function rows(meta, inputs, perRow) {
  const [r, c] = meta.shape;
  const C = new Float64Array(r * c);
  for (let i = 0; i < r; i++) perRow(inputs.A.subarray(i * c, (i + 1) * c), C.subarray(i * c, (i + 1) * c), c);
  return C;
}

/** C for a kernel's metadata and inputs (named operands, as `inputsFor` makes them). */
export function reference(meta, inputs) {
  switch (meta.op) {
    case 'matmul':
    case 'batch_matmul':
      return matmul(meta, inputs);
    case 'add':
    case 'mul': {
      const { A, B } = inputs;
      const C = new Float64Array(size(meta.shape));
      for (let i = 0; i < C.length; i++) C[i] = meta.op === 'add' ? A[i] + B[i] : A[i] * B[i];
      return C;
    }
    case 'softmax':
      return rows(meta, inputs, (a, c, n) => {
        let max = -Infinity;
        for (let j = 0; j < n; j++) max = Math.max(max, a[j]);
        let sum = 0;
        for (let j = 0; j < n; j++) sum += (c[j] = Math.exp(a[j] - max));
        for (let j = 0; j < n; j++) c[j] /= sum;
      });
    case 'layer_norm':
      return rows(meta, inputs, (a, c, n) => {
        let mean = 0;
        for (let j = 0; j < n; j++) mean += a[j];
        mean /= n;
        let variance = 0;
        for (let j = 0; j < n; j++) variance += (a[j] - mean) ** 2;
        const inv = 1 / Math.sqrt(variance / n + 1e-5);
        for (let j = 0; j < n; j++) c[j] = (a[j] - mean) * inv * inputs.Gamma[j] + inputs.Beta[j];
      });
    default:
      throw new Error(`no reference for op '${meta.op}'`);
  }
}
