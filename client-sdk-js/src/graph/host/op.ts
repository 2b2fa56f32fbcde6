import type { OnnxNode } from "../onnx.js";
import {
  LazyTensor, allocate, axisOf, broadcastShape, broadcastStrides, ints, mergedRows, sizeOf, stridesOf, type DType, type HostTensor, type TensorData,
} from "../tensor.js";

/**
 * What every host op is made of: its attributes, shape inference and JavaScript semantics over
 * {@link HostTensor}s, and the helpers the op families share (attribute reading, outputs,
 * broadcasting, strided copies).
 */

/** What is known of a value before a run: type and shape, and its contents when constant. */
export interface ValueMeta {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly value?: HostTensor;
}

/** An output's type and shape. */
export interface OutputMeta {
  dtype: DType;
  shape: number[];
}

/** One ONNX op in JavaScript. */
export interface HostOp {
  /** Every attribute the op may carry, in any of its opset 13–21 forms. */
  readonly attrs: readonly string[];
  /** Output types and shapes from the inputs' (constant inputs carry their value). */
  infer(ins: readonly (ValueMeta | undefined)[], node: OnnxNode): OutputMeta[];
  /** Computes the outputs; writes output i into `out[i]` when given (same dtype and size). */
  run(ins: readonly (HostTensor | undefined)[], node: OnnxNode, out?: readonly (HostTensor | undefined)[]): HostTensor[];
}

export const num = (node: OnnxNode, name: string, fallback: number): number => (node.attrs[name] as number | undefined) ?? fallback;
export const list = (node: OnnxNode, name: string): number[] | undefined => node.attrs[name] as number[] | undefined;
export const str = (node: OnnxNode, name: string, fallback: string): string => (node.attrs[name] as string | undefined) ?? fallback;

/** An error that names the node; the importer turns it into a ModelError. */
export function fail(node: OnnxNode, what: string): never {
  throw new Error(`node ${node.name} (${node.opType}): ${what}`);
}

export function need<T>(x: T | undefined, node: OnnxNode, what: string): T {
  if (x === undefined) fail(node, what);
  return x;
}

/** A constant input's contents: a value, or the value a meta carries. */
export function constant(meta: ValueMeta | HostTensor | undefined): HostTensor | undefined {
  return meta && "data" in meta ? meta : meta?.value;
}

/** A constant input's integers (shape operands: Reshape's shape, Slice's starts, ...). */
export function constInts(meta: ValueMeta | HostTensor | undefined, node: OnnxNode, what: string): number[] {
  return ints(need(constant(meta), node, `${what} must be a constant (or computed from shapes only)`));
}

/** An optional constant input's integers, undefined when the input is omitted. */
export function optionalInts(meta: ValueMeta | HostTensor | undefined, node: OnnxNode, what: string): number[] | undefined {
  return meta === undefined ? undefined : constInts(meta, node, what);
}

/** A scalar constant input's number, or the fallback when the input is omitted. */
export function scalarInput(meta: ValueMeta | HostTensor | undefined, node: OnnxNode, what: string, fallback: number): number {
  if (meta === undefined) return fallback;
  const t = need(constant(meta), node, `${what} must be a constant`);
  return t.data.length ? t.data[0] : fallback;
}

export function output(dtype: DType, shape: readonly number[], out?: HostTensor): HostTensor {
  if (out) return out;
  return { dtype, shape: [...shape], data: allocate(dtype, sizeOf(shape)) };
}

export const same = (dtype: DType, shape: readonly number[]): OutputMeta[] => [{ dtype, shape: [...shape] }];

/** The broadcast shape of every input's. */
export const broadcastAll = (ins: readonly ({ shape: readonly number[] } | undefined)[]): number[] =>
  ins.map((i) => i!.shape).reduce<number[]>((s, t) => broadcastShape(s, t), []);

/**
 * Calls `f(i0, i1, ...)` for every element of the broadcast output, with each input's element;
 * rows along the last axis run as plain loops.
 */
export function mapBroadcast(ins: readonly HostTensor[], shape: readonly number[], d: TensorData, f: (...x: number[]) => number): void {
  const data = ins.map((i) => i.data);
  if (ins.length === 1) {
    const a = data[0];
    for (let o = 0; o < d.length; o++) d[o] = f(a[o]);
    return;
  }
  if (ins.every((i) => i.data.length === d.length)) {
    const [a, b, c] = data;
    for (let o = 0; o < d.length; o++) d[o] = f(a[o], b[o], c?.[o]);
    return;
  }
  const [a, b, c] = data;
  const { inner, steps: [sa, sb, sc], starts: [as, bs, cs] } = mergedRows(shape, ins.map((i) => broadcastStrides(i.shape, shape)));
  for (let r = 0, o = 0; r < as.length; r++, o += inner) {
    for (let j = 0; j < inner; j++) d[o + j] = f(a[as[r] + j * sa], b[bs[r] + j * sb], c?.[cs[r] + j * sc]);
  }
}

/** Copies `x` into `shape` reading element `starts + i * steps` (Slice) — or any strided view. */
export function gatherStrided(x: HostTensor, starts: readonly number[], steps: readonly number[], shape: readonly number[],
  srcStrides: readonly number[], out?: HostTensor): HostTensor {
  const y = output(x.dtype, shape, out);
  const from = x.data, to = y.data;
  const first = starts.reduce((s, v, i) => s + v * srcStrides[i], 0);
  const { inner, steps: [last], starts: [rows] } = mergedRows(shape, [steps.map((st, i) => st * srcStrides[i])]);
  if (to instanceof Float32Array && from instanceof Float32Array) copyRowsF32(rows, to, from, first, inner, last);
  else for (let r = 0; r < rows.length; r++) for (let j = 0; j < inner; j++) to[r * inner + j] = from[first + rows[r] + j * last];
  return y;
}

/** Fewest elements a copy hands to the engine's own copy (`set`); shorter runs copy faster in a loop. */
const BLOCK_COPY = 64;

/**
 * {@link gatherStrided} on float32 (every inference's head split and merge, a mask expanded over
 * heads, a KV cache over a head group): one array type in the loop, long rows by block copy.
 */
function copyRowsF32(starts: Int32Array, to: Float32Array, from: Float32Array, first: number, inner: number, last: number): void {
  if (last === 1) {
    for (let r = 0, o = 0; r < starts.length; r++, o += inner) {
      const s = first + starts[r];
      if (inner >= BLOCK_COPY) to.set(from.subarray(s, s + inner), o);
      else for (let j = 0; j < inner; j++) to[o + j] = from[s + j];
    }
    return;
  }
  for (let r = 0, o = 0; r < starts.length; r++) {
    for (let j = 0, s = first + starts[r]; j < inner; j++, s += last) to[o++] = from[s];
  }
}

export function transposeTo(x: HostTensor, perm: readonly number[], out?: HostTensor): HostTensor {
  const strides = stridesOf(x.shape);
  return gatherStrided(x, perm.map(() => 0), perm.map(() => 1), perm.map((p) => x.shape[p]), perm.map((p) => strides[p]), out);
}

/** The same elements under another shape: shares the data (a lazy tensor's lazily) unless `out` is given. */
export function view(x: HostTensor, shape: readonly number[], out?: HostTensor): HostTensor {
  if (out) {
    if (out.data !== x.data) out.data.set(x.data);
    return out;
  }
  if (x instanceof LazyTensor) return new LazyTensor(x.dtype, [...shape], () => x.data, x.half);
  return { dtype: x.dtype, shape: [...shape], data: x.data };
}

/**
 * The axes a reduction runs over: the `axes` attribute (before opset 18, and ReduceSum before
 * 13) or input 1; none given means all, unless `noop_with_empty_axes`.
 */
export function reduceAxes(ins: readonly (ValueMeta | HostTensor | undefined)[], node: OnnxNode, rank: number): number[] {
  const axes = list(node, "axes") ?? (ins[1] ? constInts(ins[1], node, "axes") : []);
  if (axes.length === 0) return num(node, "noop_with_empty_axes", 0) ? [] : [...Array(rank).keys()];
  return axes.map((a) => axisOf(a, rank));
}

/** Outer × axis × inner: how a tensor splits around one axis. */
export function around(shape: readonly number[], axis: number): { outer: number; dim: number; inner: number } {
  return { outer: sizeOf(shape.slice(0, axis)), dim: shape[axis], inner: sizeOf(shape.slice(axis + 1)) };
}
