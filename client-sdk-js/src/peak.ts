// The device's single-thread Wasm SIMD peak: a loop of independent f32x4 multiply-add chains, as
// f32x4.mul + f32x4.add and as f32x4.relaxed_madd, encoded here byte by byte. The zoo refuses a
// kernel's latency that would beat its device kind's peak; benches judge kernels against it.
import { time } from "./timing.js";

/** Independent accumulators: enough to cover the multiply-add latency on two ports. */
const CHAINS = 12;
const LANES = 4;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const f32 = (x: number) => [...new Uint8Array(new Float32Array([x]).buffer)];
const simd = (op: number) => [0xfd, ...leb(op)];

const F32X4_SPLAT = 0x13, F32X4_EXTRACT_LANE = 0x1f, F32X4_ADD = 0xe4, F32X4_MUL = 0xe6, F32X4_RELAXED_MADD = 0x105;
const I32X4_ADD = 0xae, I32X4_DOT_I16X8_S = 0xba;

/** The instruction forms of a multiply-add peak: f32x4.mul + f32x4.add, f32x4.relaxed_madd, i32x4.dot_i16x8_s + i32x4.add. */
export type PeakForm = "madd" | "relaxed" | "dot";
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;

/** Dot chains: each dot takes a vector the loop changes and a constant of its own, so no two are alike. */
const DOT_CHAINS = 6;

/**
 * `peak(iterations) -> f32`: each iteration does CHAINS × (acc = acc × a + b) on four lanes, or in
 * the dot form a += step, then DOT_CHAINS × (acc = acc + dot(a, bᵢ)): eight i16 products summed in
 * pairs into four lanes. A dot of two loop constants would be one dot for every chain, hoisted out
 * of the loop (the loop would time its adds alone); a dot of its own accumulator would wait on it.
 */
function peakModule(form: PeakForm): Uint8Array<ArrayBuffer> {
  const chains = form === "dot" ? DOT_CHAINS : CHAINS;
  const a = chains, b = chains + 1;
  const body: number[] = [];
  const splat = (local: number, x: number) => body.push(0x43, ...f32(x), ...simd(F32X4_SPLAT), LOCAL_SET, local + 1);
  const dot = (i: number) => b + 1 + i; // the dot form's constant of chain i (a local after b)
  for (let i = 0; i < chains; i++) splat(i, 1 + i / 64);
  splat(a, 0.9999);
  splat(b, 0.0001);
  if (form === "dot") for (let i = 0; i < chains; i++) splat(dot(i), 3 + i);
  body.push(0x03, 0x40); // loop
  if (form === "dot") body.push(LOCAL_GET, a + 1, LOCAL_GET, b + 1, ...simd(I32X4_ADD), LOCAL_SET, a + 1);
  for (let i = 0; i < chains; i++) {
    body.push(LOCAL_GET, i + 1, LOCAL_GET, a + 1);
    if (form === "relaxed") body.push(LOCAL_GET, b + 1, ...simd(F32X4_RELAXED_MADD));
    else if (form === "dot") body.push(LOCAL_GET, dot(i), ...simd(I32X4_DOT_I16X8_S), ...simd(I32X4_ADD));
    else body.push(...simd(F32X4_MUL), LOCAL_GET, b + 1, ...simd(F32X4_ADD));
    body.push(LOCAL_SET, i + 1);
  }
  body.push(LOCAL_GET, 0, 0x41, 1, 0x6b, LOCAL_TEE, 0, 0x0d, 0, 0x0b); // count -= 1; br_if loop; end
  body.push(LOCAL_GET, 1);
  for (let i = 1; i < chains; i++) body.push(LOCAL_GET, i + 1, ...simd(F32X4_ADD));
  body.push(...simd(F32X4_EXTRACT_LANE), 0, 0x0b);
  const locals = chains + 2 + (form === "dot" ? chains : 0);
  const func = [1, ...leb(locals), 0x7b, ...body]; // one local group of v128
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]),
    ...section(3, [1, 0]),
    ...section(7, [1, 4, ...new TextEncoder().encode("peak"), 0, 0]),
    ...section(10, [1, ...leb(func.length), ...func]),
  ]);
}

/** The peak loop of one instruction form, ready to call. */
export interface PeakLoop {
  /** Runs the loop once. */
  call(): void;
  /** Floating-point operations of one call. */
  flops: number;
}

/**
 * The peak loop of one form (`relaxed`: f32x4.relaxed_madd, else mul + add; or `"dot"`); null where
 * the engine lacks it. A dot form's "flops" are its integer operations: 16 a dot (8 multiply-adds).
 */
export function peakLoop(relaxed: boolean | PeakForm, iterations = 400_000): PeakLoop | null {
  const form: PeakForm = relaxed === true ? "relaxed" : relaxed === false ? "madd" : relaxed;
  const bytes = peakModule(form);
  if (!WebAssembly.validate(bytes)) return null;
  const { peak } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as { peak: (n: number) => number };
  return { call: () => void peak(iterations), flops: iterations * (form === "dot" ? DOT_CHAINS * 16 : CHAINS * LANES * 2) };
}

/**
 * This device's single-thread Wasm SIMD peak in GFLOP/s: the faster of the two multiply-add forms
 * it runs (relaxed SIMD where the engine has it), each timed as a median of samples of about
 * `sampleMs` (default 20 ms; about half a second in all).
 */
export function measurePeakGflops(options: { sampleMs?: number } = {}): number {
  const { sampleMs = 20 } = options;
  let best = 0;
  for (const relaxed of [false, true]) {
    const loop = peakLoop(relaxed);
    if (!loop) continue;
    const { medianMs } = time(loop.call, { warmups: 2, warmupMs: 50, samples: 7, sampleMs });
    best = Math.max(best, loop.flops / medianMs / 1e6);
  }
  return best;
}
