import { EpilogueKind, OpKind, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { GENERIC_KERNELS } from "../gen/generic-kernels.js";
import { halfToFloat, roundToHalf } from "../graph/tensor.js";
import { dequantizeQ4, dimsOf, dynamicQuantize, operandView, type MatMulDims } from "../ops.js";
import { erfFloat } from "../reference.js";
import type { Arena } from "./arena.js";
import { referenceKernel, type Bindings, type Bound, type OpKernel, type Weight } from "./kernels.js";

// The SDK's generic kernels: products whose shapes are given at call time (the compiler's
// GenericKernels, built into the SDK), what a model's ops run on before the gateway's kernels for
// its device are checked, so that a first inference never waits for the network. Not tuned: about
// half a tuned kernel's speed, some 30 times the float64 reference's. Products only: the row
// and element ops (softmax, layer_norm, add, mul) are cheap in the reference, and a conv keeps it.

/** A product export, at these byte offsets, row-major float32: C[m, n] = A[m, k] × B[k, n] (`matmul`) or × B[n, k]ᵀ (`matmul_bt`). */
type GenericMatmul = (a: number, b: number, c: number, m: number, k: number, n: number) => void;

/** The module's exports on one arena's memory, and the compact weights widened there (shared by every bind of a weight). */
interface OnArena {
  matmul: GenericMatmul;
  matmulBt: GenericMatmul;
  widened: Map<Weight, { offset: number; floats: number; binds: number }>;
}

/** Ops a generic kernel computes. */
const GENERIC_KINDS = new Set([OpKind.MATMUL, OpKind.BATCH_MATMUL, OpKind.MATMUL_F16, OpKind.MATMUL_Q4, OpKind.MATMUL_INT8]);

const modules: { plain?: WebAssembly.Module | null; shared?: WebAssembly.Module | null } = {};
const instances = new WeakMap<Arena, OnArena>();

/**
 * Why this engine runs no generic kernel (no WebAssembly, or no Wasm SIMD: its ops start on the
 * reference), or undefined when it does.
 */
export function genericUnavailable(): string | undefined {
  if (typeof WebAssembly !== "object") return "WebAssembly is unavailable here";
  return moduleFor(false) ? undefined : "this engine has no Wasm SIMD";
}

/** The module of the generic kernels for an unshared or a shared memory; null where the engine cannot compile it. */
function moduleFor(shared: boolean): WebAssembly.Module | null {
  const form = shared ? "shared" : "plain";
  if (typeof WebAssembly !== "object") return null;
  if (modules[form] === undefined) {
    const bytes = genericModuleBytes(shared);
    modules[form] = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  }
  return modules[form];
}

/** The generic kernels' module as bytes (for an unshared memory, or a shared one): what benches compile to time an engine's tiers. */
export const genericModuleBytes = (shared = false): Uint8Array<ArrayBuffer> => decodeBase64(GENERIC_KERNELS[shared ? "shared" : "plain"]);

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function instanceOn(arena: Arena): OnArena | undefined {
  let on = instances.get(arena);
  if (!on) {
    const module = moduleFor(arena.pool !== undefined);
    if (!module) return undefined;
    const { exports } = new WebAssembly.Instance(module, { env: { memory: arena.memory } });
    on = { matmul: exports.matmul as GenericMatmul, matmulBt: exports.matmul_bt as GenericMatmul, widened: new Map() };
    instances.set(arena, on);
  }
  return on;
}

/** The kernel an op starts on: its generic kernel where there is one, else the reference. */
export function baseKernel(op: OpSpec, arena: Arena): OpKernel {
  return genericKernel(op, arena) ?? referenceKernel(op, arena);
}

/** The op's generic kernel on this arena, or undefined (not a product, or no Wasm SIMD here). */
export function genericKernel(op: OpSpec, arena: Arena): OpKernel | undefined {
  if (!GENERIC_KINDS.has(op.kind)) return undefined;
  const on = instanceOn(arena);
  if (!on) return undefined;
  return { id: "generic", source: "generic", bind: (bindings) => bindProduct(op, arena, on, bindings) };
}

/**
 * The calls of one product: B read in place (transposed or not), a compact B (float16, 4-bit,
 * int8) widened to floats once per weight while a bind holds it, an int8 product's A quantized at
 * each call, then the batches, then the epilogue over C.
 */
function bindProduct(op: OpSpec, arena: Arena, on: OnArena, { operands, weights }: Bindings): Bound {
  const dims = dimsOf(op);
  const { batch, m, k, n } = dims;
  const releases: (() => void)[] = [];
  /** An operand's offset: an activation's, or a weight held in the arena while bound. */
  const place = (name: string): number => {
    if (operands[name]) return operands[name].offset;
    releases.push(() => weights[name].unhold());
    return weights[name].hold().offset;
  };
  /** An operand's values now (a view of the arena, or a weight's own). */
  const valuesOf = (name: string): Float32Array | undefined =>
    operands[name] ? arena.f32(operands[name].offset, operands[name].floats) : weights[name]?.values;
  /** A block of the arena for this bind alone. */
  const scratch = (floats: number): number => {
    const offset = arena.alloc(floats * 4);
    releases.push(() => arena.release(offset, floats * 4));
    return offset;
  };

  const compact = op.kind === OpKind.MATMUL_F16 || op.kind === OpKind.MATMUL_Q4 || op.kind === OpKind.MATMUL_INT8;
  const b = compact ? widen(op, dims, arena, on, operands.B ? undefined : weights.B, valuesOf, releases) : place("B");
  const matmul = op.transposeB ? on.matmulBt : on.matmul;
  const quantized = op.kind === OpKind.MATMUL_INT8 ? scratch(m * k) : undefined;
  const a = quantized ?? place("A");
  const c = operands.C;
  const bScale = op.kind === OpKind.MATMUL_INT8 ? valuesOf("BScale") : undefined;
  return {
    call: () => {
      let scale = 1;
      if (quantized !== undefined) {
        const q = dynamicQuantize(valuesOf("A")!, m * k);
        arena.f32(quantized, m * k).set(q.values);
        scale = q.scale;
      }
      for (let t = 0; t < batch; t++) {
        matmul(a + t * m * k * 4, b + (op.broadcastB ? 0 : t * k * n * 4), c.offset + t * m * n * 4, m, k, n);
      }
      epilogue(op, arena.f32(c.offset, c.floats), n, valuesOf, bScale && ((j) => scale * bScale[j]));
    },
    release: () => releases.splice(0).forEach((release) => release()),
  };
}

/**
 * A compact B as the floats `[K, N]` it stands for, in the arena: one copy per weight, shared by
 * its binds and freed with the last (a decode step's plan per length binds the same weights again).
 */
function widen(op: OpSpec, dims: MatMulDims, arena: Arena, on: OnArena, weight: Weight | undefined,
  valuesOf: (name: string) => Float32Array | undefined, releases: (() => void)[]): number {
  const floats = dims.k * dims.n;
  const widened = (): number => {
    const offset = arena.alloc(floats * 4);
    arena.f32(offset, floats).set(widenedB(op, dims, (name) => {
      const words = valuesOf(name);
      return words && operandView(op, name, words);
    }));
    return offset;
  };
  if (!weight) { // an activation's B: this bind's own copy
    const offset = widened();
    releases.push(() => arena.release(offset, floats * 4));
    return offset;
  }
  let entry = on.widened.get(weight);
  if (!entry) on.widened.set(weight, entry = { offset: widened(), floats, binds: 0 });
  entry.binds++;
  releases.push(() => {
    if (--entry.binds > 0) return;
    on.widened.delete(weight);
    arena.release(entry.offset, entry.floats * 4);
  });
  return entry.offset;
}

/** A compact B (float16, 4-bit, int8) as the floats `[K, N]` it stands for. */
function widenedB(op: OpSpec, { k, n }: MatMulDims, view: (name: string) => ArrayLike<number> | undefined): Float32Array {
  if (op.kind === OpKind.MATMUL_F16) return Float32Array.from(view("B")!, halfToFloat);
  if (op.kind === OpKind.MATMUL_Q4) return dequantizeQ4(k, n, view("B") as Uint8Array, view("BScale") as Float32Array, view("BZero") as Uint8Array | undefined);
  return Float32Array.from(view("B")!); // int8 values, exact in float32
}

const SQRT_HALF = Math.SQRT1_2;
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/**
 * The op's epilogue over C (`[..., N]`) in float32, step by step as docs/kernel-abi.md orders them;
 * an int8 product's sums first times A's scale and BScale[j] (`columnScale`).
 */
function epilogue(op: OpSpec, c: Float32Array, n: number, valuesOf: (name: string) => Float32Array | undefined,
  columnScale?: (j: number) => number): void {
  if (columnScale) {
    const scales = Float32Array.from({ length: n }, (_, j) => columnScale(j));
    for (let i = 0; i < c.length; i++) c[i] *= scales[i % n];
  }
  for (const step of op.epilogue) {
    switch (step.kind) {
      case EpilogueKind.SCALE: for (let i = 0; i < c.length; i++) c[i] *= step.value; break;
      case EpilogueKind.BIAS: {
        const bias = valuesOf("Bias")!;
        for (let i = 0; i < c.length; i += n) for (let j = 0; j < n; j++) c[i + j] += bias[j];
        break;
      }
      case EpilogueKind.RESIDUAL: {
        const residual = valuesOf("Residual")!;
        for (let i = 0; i < c.length; i++) c[i] += residual[i];
        break;
      }
      case EpilogueKind.RELU: for (let i = 0; i < c.length; i++) c[i] = Math.max(c[i], 0); break;
      case EpilogueKind.GELU_ERF: for (let i = 0; i < c.length; i++) c[i] = 0.5 * c[i] * (1 + erfFloat(c[i] * SQRT_HALF)); break;
      case EpilogueKind.GELU_TANH:
        for (let i = 0; i < c.length; i++) { const x = c[i]; c[i] = 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))); }
        break;
      case EpilogueKind.SILU: for (let i = 0; i < c.length; i++) { const x = c[i]; c[i] = 0.5 * x * (1 + Math.tanh(x / 2)); } break;
      case EpilogueKind.ROUND_HALF: for (let i = 0; i < c.length; i++) c[i] = roundToHalf(c[i]); break;
      default: throw new Error(`unsupported epilogue ${EpilogueKind[step.kind] ?? step.kind}`);
    }
  }
}
