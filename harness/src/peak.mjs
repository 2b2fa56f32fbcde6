// The single-thread Wasm SIMD peak of this machine: a loop of independent f32x4 multiply-add chains,
// as f32x4.mul + f32x4.add and as f32x4.relaxed_madd, encoded here byte by byte.

import './wasm.mjs'; // sets the relaxed SIMD flag
import { timeCalls } from './timing.mjs';

const CHAINS = 12; // independent accumulators: enough to cover the multiply-add latency on two ports
const LANES = 4;

const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const section = (id, body) => [id, ...leb(body.length), ...body];
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
const simd = (op) => [0xfd, ...leb(op)];

const F32X4_SPLAT = 0x13, F32X4_EXTRACT_LANE = 0x1f, F32X4_ADD = 0xe4, F32X4_MUL = 0xe6, F32X4_RELAXED_MADD = 0x105;
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;

/** `peak(iterations) -> f32`: each iteration does CHAINS × (acc = acc × a + b) on four lanes. */
function peakModule(relaxed) {
  const a = CHAINS, b = CHAINS + 1;
  const body = [];
  const splat = (local, x) => body.push(0x43, ...f32(x), ...simd(F32X4_SPLAT), LOCAL_SET, local + 1);
  for (let i = 0; i < CHAINS; i++) splat(i, 1 + i / 64);
  splat(a, 0.9999);
  splat(b, 0.0001);
  body.push(0x03, 0x40); // loop
  for (let i = 0; i < CHAINS; i++) {
    body.push(LOCAL_GET, i + 1, LOCAL_GET, a + 1);
    if (relaxed) body.push(LOCAL_GET, b + 1, ...simd(F32X4_RELAXED_MADD));
    else body.push(...simd(F32X4_MUL), LOCAL_GET, b + 1, ...simd(F32X4_ADD));
    body.push(LOCAL_SET, i + 1);
  }
  body.push(LOCAL_GET, 0, 0x41, 1, 0x6b, LOCAL_TEE, 0, 0x0d, 0, 0x0b); // count -= 1; br_if loop; end
  body.push(LOCAL_GET, 1);
  for (let i = 1; i < CHAINS; i++) body.push(LOCAL_GET, i + 1, ...simd(F32X4_ADD));
  body.push(...simd(F32X4_EXTRACT_LANE), 0, 0x0b);
  const func = [1, ...leb(CHAINS + 2), 0x7b, ...body]; // one local group: CHAINS + 2 v128
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]),
    ...section(3, [1, 0]),
    ...section(7, [1, 4, ...new TextEncoder().encode('peak'), 0, 0]),
    ...section(10, [1, ...leb(func.length), ...func]),
  ]);
}

/**
 * The peak loop of one form (`relaxed` or not) ready to call: { call, flops } with `flops` per
 * call; null when this engine lacks relaxed SIMD.
 */
export function peakRuntime(relaxed, iterations = 400_000) {
  const bytes = peakModule(relaxed);
  if (!WebAssembly.validate(bytes)) return null;
  const { peak } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
  return { call: () => peak(iterations), flops: iterations * CHAINS * LANES * 2 };
}

/** Measured GFLOP/s of one form (`relaxed` or not); null when this engine lacks relaxed SIMD. */
export async function measurePeak(relaxed, { iterations = 2_000_000 } = {}) {
  const runtime = peakRuntime(relaxed, iterations);
  if (!runtime) return null;
  const { ms } = await timeCalls(runtime.call, { warmup: 2, minReps: 9, minMs: 500 });
  return runtime.flops / ms / 1e6;
}
