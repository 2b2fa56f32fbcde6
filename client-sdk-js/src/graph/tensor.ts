export { roundHalfEven } from "../reference.js"; // ONNX's Round, the quantizers' nearbyint

/**
 * Element types the engine handles. ONNX's other integer types (int32, uint32, int16, ...) become
 * `int64` (exact up to 2^53); float16 and float64 become `float32` (float16 values exactly, a Cast
 * to float16 rounds to its precision), so every float op has one type to read.
 */
export type DType = "float32" | "int64" | "bool" | "int8" | "uint8";

/** A tensor's elements: float32 Float32Array, int64 Float64Array (integers), bool and uint8 Uint8Array, int8 Int8Array. */
export type TensorData = Float32Array | Float64Array | Uint8Array | Int8Array;

/** A tensor in JavaScript memory: constants, shape values, and the inputs and outputs of a run. */
export interface HostTensor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly data: TensorData;
  /** Set on a constant the file stores as float16 (its values are float16's, held as float32). */
  readonly half?: true;
}

/**
 * A tensor whose elements are read when asked for, each time from where they are now: a weight
 * that lives in a Wasm memory (whose buffer moves when it grows). Views of it (Reshape,
 * Identity ...) stay lazy.
 */
export class LazyTensor implements HostTensor {
  constructor(readonly dtype: DType, readonly shape: readonly number[], private readonly read: () => TensorData, readonly half?: true) {}

  get data(): TensorData {
    return this.read();
  }
}

/** Elements of a shape. */
export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Row-major strides of a shape, in elements. */
export function stridesOf(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/** An empty array of a dtype. */
export function allocate(dtype: DType, size: number): TensorData {
  switch (dtype) {
    case "float32": return new Float32Array(size);
    case "int64": return new Float64Array(size);
    case "int8": return new Int8Array(size);
    case "bool": case "uint8": return new Uint8Array(size);
  }
}

/** The float16 with these bits, as a number. */
export function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** The bits of the float16 nearest `x` (ties to even), as a Cast to float16 keeps it. */
export function floatToHalf(x: number): number {
  scratch[0] = x;
  roundToHalfInPlace(scratch);
  return halfBitsOf(scratchBits[0], scratch[0]);
}

/** The float16 bits of a float32 that is a float16 value (its bits `b`, its value `x`). */
function halfBitsOf(b: number, x: number): number {
  const sign = (b >>> 16) & 0x8000, exponent = (b >>> 23) & 0xff;
  if (exponent === 0xff) return sign | 0x7c00 | (b & 0x7fffff ? 0x200 : 0);
  if (exponent >= 113) return sign | ((exponent - 112) << 10) | ((b >>> 13) & 0x3ff);
  return sign | Math.round(Math.abs(x) * 16777216); // a subnormal half (or zero): a multiple of 2^-24
}

/**
 * Float32 values as the 4-byte words holding their nearest float16s' bits, two to a word (a float16
 * weight as kernels read it): rounded in one pass, then encoded in another, as tight loops over the
 * whole array (a weight of 3.5 million values in tens of milliseconds, not one value at a time).
 */
export function halfWords(values: ArrayLike<number>): Float32Array<ArrayBuffer> {
  const rounded = Float32Array.from(values);
  roundToHalfInPlace(rounded);
  const from = new Uint32Array(rounded.buffer);
  const words = new Float32Array(Math.ceil(values.length / 2));
  const bits = new Uint16Array(words.buffer, 0, values.length);
  for (let i = 0; i < bits.length; i++) bits[i] = halfBitsOf(from[i], rounded[i]);
  return words;
}

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** `x` rounded to the nearest float16 (ties to even), as a number: what a Cast to float16 keeps. */
export function roundToHalf(x: number): number {
  scratch[0] = x;
  roundToHalfInPlace(scratch);
  return scratch[0];
}

/** Rounds a float32 tensor to float16's precision in place (a float16 value's); other types are left alone. */
export function roundIfFloat(t: HostTensor): void {
  if (t.data instanceof Float32Array) roundToHalfInPlace(t.data);
}

/**
 * Rounds float32 values to the nearest float16 (ties to even) in place: the values a float16
 * tensor holds. Normal halves drop 13 mantissa bits with integer arithmetic (a carry moves into the
 * exponent, as it should); halves' subnormals round to a multiple of 2^-24.
 */
export function roundToHalfInPlace(data: Float32Array, from = 0, to = data.length): void {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  for (let i = from; i < to; i++) {
    const b = bits[i];
    const exponent = (b >>> 23) & 0xff;
    if (exponent >= 113) { // 2^-14 and above: a normal half (or Infinity, NaN: left as they are)
      if (exponent === 0xff) continue;
      const rounded = (b + 0xfff + ((b >>> 13) & 1)) & ~0x1fff;
      // past the largest half (65504, float32 exponent 142): Infinity of the same sign
      bits[i] = ((rounded >>> 23) & 0xff) > HALF_EXPONENT_MAX ? (b & 0x80000000) | 0x7f800000 : rounded;
    } else if ((b & 0x7fffffff) !== 0) {
      const q = data[i] * 16777216, r = Math.round(q);
      data[i] = (Math.abs(q % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r) / 16777216;
    }
  }
}

/** The float32 exponent field of the largest float16 (65504 = 1.999 · 2^15). */
const HALF_EXPONENT_MAX = 127 + 15;

/** A tensor from values (converted to the dtype's array). */
export function tensor(dtype: DType, shape: readonly number[], values: ArrayLike<number>): HostTensor {
  const data = allocate(dtype, values.length);
  data.set(values);
  if (data.length !== sizeOf(shape)) throw new Error(`${data.length} values do not fill shape [${shape}]`);
  return { dtype, shape: [...shape], data };
}

/** The integers of an int64 tensor, as numbers. */
export const ints = (t: HostTensor): number[] => Array.from(t.data);

/** numpy broadcasting of two shapes; throws when they do not broadcast. */
export function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  const out = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1, y = b[b.length - rank + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`shapes [${a}] and [${b}] do not broadcast`);
    out[i] = x === 1 ? y : x;
  }
  return out;
}

/**
 * Strides that read `shape` as if broadcast to `out` (0 along broadcast axes), for a walk over
 * `out` in row-major order.
 */
export function broadcastStrides(shape: readonly number[], out: readonly number[]): number[] {
  const own = stridesOf(shape);
  return out.map((_, i) => {
    const j = i - (out.length - shape.length);
    return j < 0 || shape[j] === 1 ? 0 : own[j];
  });
}

/**
 * Calls `visit(o, i0, i1, ...)` for every element `o` of `out` in row-major order, with each
 * input's flat index under broadcasting. Counters instead of division keep it fast.
 */
export function forEachBroadcast(out: readonly number[], inputs: readonly (readonly number[])[], visit: (o: number, idx: number[]) => void): void {
  const strides = inputs.map((s) => broadcastStrides(s, out));
  const rank = out.length;
  const total = sizeOf(out);
  const counter = new Array<number>(rank).fill(0);
  const idx = new Array<number>(inputs.length).fill(0);
  for (let o = 0; o < total; o++) {
    visit(o, idx);
    for (let axis = rank - 1; axis >= 0; axis--) {
      counter[axis]++;
      for (let t = 0; t < idx.length; t++) idx[t] += strides[t][axis];
      if (counter[axis] < out[axis]) break;
      for (let t = 0; t < idx.length; t++) idx[t] -= strides[t][axis] * out[axis];
      counter[axis] = 0;
    }
  }
}

/**
 * Where each input starts every row (run along the last axis) of `shape`, in row-major order,
 * given each input's stride along every axis of `shape`: `starts[t][r]` for input `t`, row `r`
 * (whose output starts at `r · shape[last]`). Callers then loop over rows and along each row
 * with plain indexing, which V8 runs several times faster than a callback per row or element.
 */
export function rowStarts(shape: readonly number[], strides: readonly (readonly number[])[]): Int32Array[] {
  const rank = shape.length;
  const inner = rank ? shape[rank - 1] : 1;
  const rows = inner ? sizeOf(shape) / inner : 0;
  const starts = strides.map(() => new Int32Array(rows));
  const counter = new Array<number>(Math.max(rank - 1, 0)).fill(0);
  const at = new Array<number>(strides.length).fill(0);
  for (let r = 0; r < rows; r++) {
    for (let t = 0; t < at.length; t++) starts[t][r] = at[t];
    for (let axis = rank - 2; axis >= 0; axis--) {
      counter[axis]++;
      for (let t = 0; t < at.length; t++) at[t] += strides[t][axis];
      if (counter[axis] < shape[axis]) break;
      for (let t = 0; t < at.length; t++) at[t] -= strides[t][axis] * shape[axis];
      counter[axis] = 0;
    }
  }
  return starts;
}

/**
 * {@link rowStarts} over `shape` with its axes merged wherever every input walks on across them
 * (and axes of extent 1 dropped): a broadcast, slice or transpose whose inner axes line up then
 * walks a few long rows instead of many short ones (a KV cache expanded over a head group: 6
 * rows, not 6 per position). `inner` is a row's length, `steps[t]` input t's stride along it.
 */
export function mergedRows(shape: readonly number[], strides: readonly (readonly number[])[]): { inner: number; steps: number[]; starts: Int32Array[] } {
  const dims: number[] = [];
  const walks: number[][] = strides.map(() => []);
  for (let a = 0; a < shape.length; a++) {
    if (shape[a] === 1) continue;
    const n = dims.length;
    if (n > 0 && strides.every((s, t) => walks[t][n - 1] === s[a] * shape[a])) {
      dims[n - 1] *= shape[a];
      strides.forEach((s, t) => { walks[t][n - 1] = s[a]; });
    } else {
      dims.push(shape[a]);
      strides.forEach((s, t) => walks[t].push(s[a]));
    }
  }
  if (dims.length === 0) {
    dims.push(1);
    walks.forEach((w) => w.push(0));
  }
  return { inner: dims[dims.length - 1], steps: walks.map((w) => w[w.length - 1]), starts: rowStarts(dims, walks) };
}

/** Resolves a possibly negative axis against a rank; throws when out of range. */
export function axisOf(axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!(a >= 0 && a < rank)) throw new Error(`axis ${axis} is out of range for rank ${rank}`);
  return a;
}
