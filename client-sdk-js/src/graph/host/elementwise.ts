import { erfFloat } from "../../reference.js";
import { TensorProto_DataType as DataType } from "../../gen/onnx/onnx_pb.js";
import { broadcastStrides, roundHalfEven, roundToHalf, mergedRows, type DType, type HostTensor } from "../tensor.js";
import {
  broadcastAll, fail, mapBroadcast, need, num, output, same, scalarInput, str, type HostOp, type ValueMeta,
} from "./op.js";

/** Elementwise ops: arithmetic and math functions under numpy broadcasting, comparisons, logic, Where, Cast, Clip. */

type Meta = readonly (ValueMeta | undefined)[];

function elementwise(f: (...x: number[]) => number, dtypeOf: (ins: Meta) => DType = (ins) => ins[0]!.dtype, attrs: readonly string[] = []): HostOp {
  return {
    attrs,
    infer: (ins) => same(dtypeOf(ins), broadcastAll(ins)),
    run(ins, node, out) {
      const shape = broadcastAll(ins);
      const y = output(dtypeOf(ins), shape, out?.[0]);
      const row = ROWS[node.opType], unary = UNARY[node.opType];
      const [a, b, c] = ins;
      if (row && ins.length === 2 && y.data instanceof Float32Array && a!.data instanceof Float32Array && b!.data instanceof Float32Array) {
        binaryRowsF32(row, shape, y.data, a!.data, b!.data, a!.shape, b!.shape);
      } else if (unary && ins.length === 1 && a!.data instanceof Float32Array && (y.data instanceof Float32Array || y.data instanceof Uint8Array)) {
        unary(y.data, a!.data);
      } else if (node.opType === "Where" && a!.data instanceof Uint8Array && b!.data instanceof Float32Array && c!.data instanceof Float32Array && y.data instanceof Float32Array) {
        whereRowsF32(shape, y.data, a!.data, b!.data, c!.data, ins.map((i) => i!.shape));
      } else {
        mapBroadcast(ins as HostTensor[], shape, y.data, f);
      }
      return [y];
    },
  };
}

/** One row of a float32 binary op: `d[o + j] = a[ia + j·sa] ∘ b[ib + j·sb]` for j < n. */
type RowOp = (d: Float32Array, a: Float32Array, b: Float32Array, o: number, ia: number, ib: number, n: number, sa: number, sb: number) => void;

/**
 * Float32 arithmetic under broadcasting runs at every inference (an attention mask added to the
 * scores, embeddings summed): written out per op, so the loop sees one array type and no call
 * per element (several times faster than the generic path in V8).
 */
const ROWS: Record<string, RowOp> = {
  Add: (d, a, b, o, ia, ib, n, sa, sb) => { for (let j = 0; j < n; j++) d[o + j] = a[ia + j * sa] + b[ib + j * sb]; },
  Sub: (d, a, b, o, ia, ib, n, sa, sb) => { for (let j = 0; j < n; j++) d[o + j] = a[ia + j * sa] - b[ib + j * sb]; },
  Mul: (d, a, b, o, ia, ib, n, sa, sb) => { for (let j = 0; j < n; j++) d[o + j] = a[ia + j * sa] * b[ib + j * sb]; },
  Div: (d, a, b, o, ia, ib, n, sa, sb) => { for (let j = 0; j < n; j++) d[o + j] = a[ia + j * sa] / b[ib + j * sb]; },
  Pow: (d, a, b, o, ia, ib, n, sa, sb) => {
    for (let j = 0; j < n; j++) { const x = a[ia + j * sa], e = b[ib + j * sb]; d[o + j] = e === 2 ? x * x : Math.pow(x, e); }
  },
};

/** A unary op over float32, written out so the loop sees one array type and no call per element. */
type UnaryOp = (d: Float32Array | Uint8Array, a: Float32Array) => void;

/**
 * Unary float32 ops on values as large as attention scores (a softmax's NaN guard, rotary
 * embeddings' Neg, SiLU's Sigmoid): each its own loop, monomorphic in V8.
 */
const UNARY: Record<string, UnaryOp> = {
  Neg: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = -a[i]; },
  Exp: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = Math.exp(a[i]); },
  Sqrt: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = Math.sqrt(a[i]); },
  Reciprocal: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = 1 / a[i]; },
  Sin: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = Math.sin(a[i]); },
  Cos: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = Math.cos(a[i]); },
  Tanh: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = Math.tanh(a[i]); },
  Erf: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = erfFloat(a[i]); },
  // no branch: for a very negative x, exp(-x) is Infinity and 1 / Infinity the 0 the other form gives
  Sigmoid: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = 1 / (1 + Math.exp(-a[i])); },
  Relu: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = a[i] > 0 ? a[i] : 0; },
  IsNaN: (d, a) => { for (let i = 0; i < a.length; i++) d[i] = a[i] !== a[i] ? 1 : 0; }, // only NaN differs from itself
};

/** Where over float32 under broadcasting (masks: a bool condition, a scalar on one side): rows as plain loops. */
function whereRowsF32(shape: readonly number[], d: Float32Array, cond: Uint8Array, x: Float32Array, y: Float32Array, shapes: readonly (readonly number[])[]): void {
  const { inner, steps: [sc, sx, sy], starts: [cs, xs, ys] } = mergedRows(shape, shapes.map((s) => broadcastStrides(s, shape)));
  for (let r = 0, o = 0; r < cs.length; r++, o += inner) {
    for (let j = 0, ic = cs[r], ix = xs[r], iy = ys[r]; j < inner; j++, ic += sc, ix += sx, iy += sy) d[o + j] = cond[ic] ? x[ix] : y[iy];
  }
}

function binaryRowsF32(row: RowOp, shape: readonly number[], d: Float32Array, a: Float32Array, b: Float32Array, aShape: readonly number[], bShape: readonly number[]): void {
  const { inner, steps: [sa, sb], starts: [as, bs] } = mergedRows(shape, [broadcastStrides(aShape, shape), broadcastStrides(bShape, shape)]);
  for (let r = 0; r < as.length; r++) row(d, a, b, r * inner, as[r], bs[r], inner, sa, sb);
}

const toBool = () => "bool" as const;
const compare = (f: (a: number, b: number) => boolean) => elementwise((a, b) => (f(a, b) ? 1 : 0), toBool);
const FLOAT_DIV = elementwise((a, b) => a / b);
/** Integer division truncates toward zero, as ONNX (and C) define it. */
const INT_DIV = elementwise((a, b) => Math.trunc(a / b));
const integer = (dtype: DType) => dtype !== "float32" && dtype !== "bool";

/** An op of any number of inputs folded pairwise (Min, Max, Sum, Mean), under broadcasting. */
function variadic(f: (a: number, b: number) => number, finish?: (x: number, count: number) => number): HostOp {
  const pair = elementwise((a, b) => f(a, b));
  return {
    attrs: [],
    infer: (ins) => same(ins[0]!.dtype, broadcastAll(ins)),
    run(ins, node, out) {
      let acc = ins[0]!;
      for (const x of ins.slice(1)) acc = pair.run([acc, x!], node)[0];
      const y = output(acc.dtype, broadcastAll(ins), out?.[0]);
      mapBroadcast([acc], y.shape, y.data, finish ? (x) => finish(x, ins.length) : (x) => x);
      return [y];
    },
  };
}

const gelu = (x: number) => 0.5 * x * (1 + erfFloat(x / Math.SQRT2));
const geluTanh = (x: number) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));

/** ONNX element types a Cast may produce, as the engine holds them. */
const CAST_TYPES: Partial<Record<number, DType>> = {
  [DataType.FLOAT]: "float32", [DataType.FLOAT16]: "float32", [DataType.DOUBLE]: "float32",
  [DataType.INT64]: "int64", [DataType.INT32]: "int64", [DataType.INT16]: "int64", [DataType.UINT16]: "int64",
  [DataType.UINT32]: "int64", [DataType.UINT64]: "int64", [DataType.INT8]: "int8", [DataType.UINT8]: "uint8", [DataType.BOOL]: "bool",
};

/** What a Cast to an ONNX type does to one number held as a double. */
function caster(to: number): (x: number) => number {
  switch (to) {
    case DataType.BOOL: return (x) => (x ? 1 : 0);
    case DataType.FLOAT16: return roundToHalf;
    case DataType.FLOAT: case DataType.DOUBLE: return (x) => x;
    case DataType.UINT8: return (x) => Math.trunc(x) & 0xff;
    case DataType.INT8: return (x) => (Math.trunc(x) << 24) >> 24;
    default: return (x) => (Number.isFinite(x) ? Math.trunc(x) : 0);
  }
}

export const ELEMENTWISE_OPS: Record<string, HostOp> = {
  Add: elementwise((a, b) => a + b),
  Sub: elementwise((a, b) => a - b),
  Mul: elementwise((a, b) => a * b),
  Div: {
    attrs: [],
    infer: (ins, node) => FLOAT_DIV.infer(ins, node),
    run: (ins, node, out) => (integer(ins[0]!.dtype) ? INT_DIV : FLOAT_DIV).run(ins, node, out),
  },
  Pow: elementwise((a, b) => (b === 2 ? a * a : b === 3 ? a * a * a : b === 0.5 ? Math.sqrt(a) : Math.pow(a, b))),
  Mod: {
    attrs: ["fmod"],
    infer: (ins) => same(ins[0]!.dtype, broadcastAll(ins)),
    run(ins, node, out) {
      // fmod keeps the dividend's sign (C's fmod); otherwise the divisor's (Python's %), integers only
      const f = num(node, "fmod", 0) ? (a: number, b: number) => a % b
        : (a: number, b: number) => { const r = a % b; return r !== 0 && (r < 0) !== (b < 0) ? r + b : r; };
      return elementwise(f).run(ins, node, out);
    },
  },
  Min: variadic(Math.min),
  Max: variadic(Math.max),
  Sum: variadic((a, b) => a + b),
  Mean: variadic((a, b) => a + b, (x, count) => x / count),
  PRelu: elementwise((x, slope) => (x < 0 ? slope * x : x)),
  Equal: compare((a, b) => a === b),
  Less: compare((a, b) => a < b),
  LessOrEqual: compare((a, b) => a <= b),
  Greater: compare((a, b) => a > b),
  GreaterOrEqual: compare((a, b) => a >= b),
  And: elementwise((a, b) => a & b),
  Or: elementwise((a, b) => a | b),
  Xor: elementwise((a, b) => a ^ b),
  Not: elementwise((a) => (a ? 0 : 1)),
  Where: elementwise((c, x, y) => (c ? x : y), (ins) => ins[1]!.dtype),
  Neg: elementwise((x) => -x),
  Abs: elementwise(Math.abs),
  Sign: elementwise(Math.sign),
  Exp: elementwise(Math.exp),
  Log: elementwise(Math.log),
  Sqrt: elementwise(Math.sqrt),
  Reciprocal: elementwise((x) => 1 / x),
  Sin: elementwise(Math.sin),
  Cos: elementwise(Math.cos),
  Tan: elementwise(Math.tan),
  Erf: elementwise(erfFloat),
  Tanh: elementwise(Math.tanh),
  Sigmoid: elementwise((x) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)))),
  Softplus: elementwise((x) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x)))),
  Softsign: elementwise((x) => x / (1 + Math.abs(x))),
  Relu: elementwise((x) => (x > 0 ? x : 0)),
  Floor: elementwise(Math.floor),
  Ceil: elementwise(Math.ceil),
  Round: elementwise(roundHalfEven),
  IsNaN: elementwise((x) => (Number.isNaN(x) ? 1 : 0), toBool),
  IsInf: {
    attrs: ["detect_negative", "detect_positive"],
    infer: (ins) => same("bool", ins[0]!.shape),
    run(ins, node, out) {
      const neg = num(node, "detect_negative", 1), pos = num(node, "detect_positive", 1);
      return elementwise((x) => ((x === Infinity && pos) || (x === -Infinity && neg) ? 1 : 0), toBool).run(ins, node, out);
    },
  },
  Identity: elementwise((x) => x),
  LeakyRelu: withAlpha(["alpha"], 0.01, (alpha) => (x) => (x < 0 ? alpha * x : x)),
  Elu: withAlpha(["alpha"], 1, (alpha) => (x) => (x < 0 ? alpha * Math.expm1(x) : x)),
  Celu: withAlpha(["alpha"], 1, (alpha) => (x) => Math.max(0, x) + Math.min(0, alpha * Math.expm1(x / alpha))),
  Selu: {
    attrs: ["alpha", "gamma"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const alpha = num(node, "alpha", 1.67326319217681884765625), gamma = num(node, "gamma", 1.05070102214813232421875);
      return elementwise((x) => gamma * (x > 0 ? x : alpha * Math.expm1(x))).run(ins, node, out);
    },
  },
  HardSigmoid: {
    attrs: ["alpha", "beta"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const alpha = num(node, "alpha", 0.2), beta = num(node, "beta", 0.5);
      return elementwise((x) => Math.max(0, Math.min(1, alpha * x + beta))).run(ins, node, out);
    },
  },
  HardSwish: elementwise((x) => x * Math.max(0, Math.min(1, x / 6 + 0.5))),
  ThresholdedRelu: withAlpha(["alpha"], 1, (alpha) => (x) => (x > alpha ? x : 0)),
  Gelu: {
    attrs: ["approximate"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run: (ins, node, out) => elementwise(str(node, "approximate", "none") === "tanh" ? geluTanh : gelu).run(ins, node, out),
  },
  Clip: {
    attrs: [],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const lo = scalarInput(ins[1], node, "min", -Infinity), hi = scalarInput(ins[2], node, "max", Infinity);
      return elementwise((x) => Math.min(Math.max(x, lo), hi)).run([ins[0]], node, out);
    },
  },
  Cast: {
    attrs: ["to", "saturate"],
    infer: (ins, node) => same(need(CAST_TYPES[num(node, "to", 0)], node, `cast to ${DataType[num(node, "to", 0)] ?? num(node, "to", 0)} is not supported`), ins[0]!.shape),
    run(ins, node, out) {
      const to = num(node, "to", 0);
      const dtype = CAST_TYPES[to] ?? fail(node, `cast to type ${to} is not supported`);
      const y = output(dtype, ins[0]!.shape, out?.[0]);
      const x = ins[0]!.data, f = caster(to);
      if (x instanceof Float32Array && (to === DataType.FLOAT || to === DataType.DOUBLE)) { // float to float (RMSNorm's casts): a copy
        y.data.set(x);
        return [y];
      }
      for (let i = 0; i < x.length; i++) y.data[i] = f(x[i]);
      return [y];
    },
  },
};

function withAlpha(attrs: readonly string[], fallback: number, f: (alpha: number) => (x: number) => number): HostOp {
  return {
    attrs,
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run: (ins, node, out) => elementwise(f(num(node, attrs[0], fallback))).run(ins, node, out),
  };
}
