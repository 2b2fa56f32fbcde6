import { erf } from "../reference.js";
import type { AttrValue, OnnxNode } from "./onnx.js";
import {
  allocate, axisOf, broadcastShape, broadcastStrides, forEachBroadcast, ints, rowStarts, sizeOf, stridesOf, type DType, type HostTensor,
} from "./tensor.js";

/**
 * ONNX semantics of every supported op, in JavaScript over {@link HostTensor}s: what folds
 * constants and shape subgraphs at load, runs the few data-movement ops the kernels do not cover
 * (Gather, Transpose, broadcast arithmetic), and serves as the whole-graph reference in tests.
 */

/** What is known of a value before a run: type and shape, and its contents when constant. */
export interface ValueMeta {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly value?: HostTensor;
}

interface HostOp {
  /** Output types and shapes from the inputs' (constant inputs carry their value). */
  infer(ins: readonly (ValueMeta | undefined)[], node: OnnxNode): { dtype: DType; shape: number[] }[];
  /** Computes the outputs; writes output i into `out[i]` when given (same dtype and size). */
  run(ins: readonly (HostTensor | undefined)[], node: OnnxNode, out?: readonly (HostTensor | undefined)[]): HostTensor[];
}

const num = (node: OnnxNode, name: string, fallback: number): number => (node.attrs[name] as number | undefined) ?? fallback;
const list = (node: OnnxNode, name: string): number[] | undefined => node.attrs[name] as number[] | undefined;

function need<T>(x: T | undefined, node: OnnxNode, what: string): T {
  if (x === undefined) throw new Error(`node ${node.name} (${node.opType}): ${what}`);
  return x;
}

/** A constant input's integers (shape operands: Reshape's shape, Slice's starts, ...). */
function constInts(meta: ValueMeta | HostTensor | undefined, node: OnnxNode, what: string): number[] {
  const t = meta && "data" in meta ? meta : meta?.value;
  return ints(need(t, node, `${what} must be a constant (or computed from shapes only)`));
}

function output(dtype: DType, shape: readonly number[], out?: HostTensor): HostTensor {
  if (out) return out;
  return { dtype, shape: [...shape], data: allocate(dtype, sizeOf(shape)) };
}

const same = (dtype: DType, shape: readonly number[]) => [{ dtype, shape: [...shape] }];

function elementwise(f: (...x: number[]) => number, dtypeOf: (ins: readonly (ValueMeta | undefined)[]) => DType = (ins) => ins[0]!.dtype): HostOp {
  return {
    infer: (ins) => [{ dtype: dtypeOf(ins), shape: ins.map((i) => i!.shape).reduce<number[]>((s, t) => broadcastShape(s, t), []) }],
    run(ins, node, out) {
      const shape = ins.map((i) => i!.shape).reduce<number[]>((s, t) => broadcastShape(s, t), []);
      const y = output(dtypeOf(ins as HostTensor[]), shape, out?.[0]);
      const data = ins.map((i) => i!.data);
      const d = y.data;
      const row = ROWS[node.opType];
      if (row && ins.length === 2 && d instanceof Float32Array && data[0] instanceof Float32Array && data[1] instanceof Float32Array) {
        binaryRowsF32(row, shape, d, data[0], data[1], ins[0]!.shape, ins[1]!.shape);
      } else if (ins.length === 1) {
        const a = data[0];
        for (let o = 0; o < d.length; o++) d[o] = f(a[o]);
      } else if (ins.every((i) => sizeOf(i!.shape) === d.length)) {
        const [a, b, c] = data;
        for (let o = 0; o < d.length; o++) d[o] = f(a[o], b[o], c?.[o]);
      } else {
        const [a, b, c] = data;
        const strides = ins.map((i) => broadcastStrides(i!.shape, shape));
        const inner = shape.at(-1) ?? 1;
        const [sa, sb, sc] = strides.map((st) => st.at(-1) ?? 0);
        const [as, bs, cs] = rowStarts(shape, strides);
        for (let r = 0, o = 0; r < as.length; r++, o += inner) {
          for (let j = 0; j < inner; j++) d[o + j] = f(a[as[r] + j * sa], b[bs[r] + j * sb], c?.[cs[r] + j * sc]);
        }
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
};

function binaryRowsF32(row: RowOp, shape: readonly number[], d: Float32Array, a: Float32Array, b: Float32Array, aShape: readonly number[], bShape: readonly number[]): void {
  const strides = [broadcastStrides(aShape, shape), broadcastStrides(bShape, shape)];
  const inner = shape.at(-1) ?? 1;
  const sa = strides[0].at(-1) ?? 0, sb = strides[1].at(-1) ?? 0;
  const [as, bs] = rowStarts(shape, strides);
  for (let r = 0; r < as.length; r++) row(d, a, b, r * inner, as[r], bs[r], inner, sa, sb);
}

function unary(f: (x: number) => number): HostOp {
  return elementwise(f);
}

const FLOAT_DIV = elementwise((a, b) => a / b);
/** Integer division truncates toward zero, as ONNX (and C) define it. */
const INT_DIV = elementwise((a, b) => Math.trunc(a / b));

const DTYPES: Record<number, DType> = { 1: "float32", 6: "int64", 7: "int64", 9: "bool" };

function matmulShape(a: readonly number[], b: readonly number[], node: OnnxNode): number[] {
  if (a.length < 2 || b.length < 2) throw new Error(`node ${node.name} (MatMul): 1-D operands are not supported`);
  const [m, k] = a.slice(-2), [k2, n] = b.slice(-2);
  if (k !== k2) throw new Error(`node ${node.name} (MatMul): [${a}] × [${b}]: inner dimensions differ`);
  return [...broadcastShape(a.slice(0, -2), b.slice(0, -2)), m, n];
}

function reduceAxes(ins: readonly (ValueMeta | HostTensor | undefined)[], node: OnnxNode, rank: number): number[] {
  const axes = list(node, "axes") ?? (ins[1] ? constInts(ins[1], node, "axes") : []);
  if (axes.length === 0) return num(node, "noop_with_empty_axes", 0) ? [] : [...Array(rank).keys()];
  return axes.map((a) => axisOf(a, rank));
}

function unsqueezeShape(shape: readonly number[], axes: number[]): number[] {
  const rank = shape.length + axes.length;
  const at = new Set(axes.map((a) => axisOf(a, rank)));
  const out: number[] = [];
  let i = 0;
  for (let d = 0; d < rank; d++) out.push(at.has(d) ? 1 : shape[i++]);
  return out;
}

function reshapeShape(shape: readonly number[], target: number[], allowZero: boolean): number[] {
  const out = target.map((d, i) => (d === 0 && !allowZero ? shape[i] : d));
  const known = out.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const size = sizeOf(shape);
  const result = out.map((d) => (d === -1 ? size / known : d));
  if (sizeOf(result) !== size || result.some((d) => !Number.isInteger(d))) throw new Error(`cannot reshape [${shape}] to [${target}]`);
  return result;
}

interface SliceSpec { starts: number[]; steps: number[]; shape: number[] }

function sliceSpec(shape: readonly number[], ins: readonly (ValueMeta | HostTensor | undefined)[], node: OnnxNode): SliceSpec {
  const starts = constInts(ins[1], node, "starts"), ends = constInts(ins[2], node, "ends");
  const axes = ins[3] ? constInts(ins[3], node, "axes").map((a) => axisOf(a, shape.length)) : starts.map((_, i) => i);
  const steps = ins[4] ? constInts(ins[4], node, "steps") : starts.map(() => 1);
  const spec: SliceSpec = { starts: shape.map(() => 0), steps: shape.map(() => 1), shape: [...shape] };
  axes.forEach((axis, i) => {
    const dim = shape[axis], step = steps[i];
    if (step === 0) throw new Error(`node ${node.name} (Slice): step 0`);
    const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v < 0 ? v + dim : v, lo), hi);
    const start = step > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], -1, dim - 1);
    const end = step > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
    spec.starts[axis] = start;
    spec.steps[axis] = step;
    spec.shape[axis] = Math.max(0, Math.ceil((end - start) / step));
  });
  return spec;
}

/** Copies `x` into `shape` reading element `starts + i * steps` (Slice) — or any strided view. */
function gatherStrided(x: HostTensor, starts: number[], steps: number[], shape: number[], srcStrides: number[], out?: readonly (HostTensor | undefined)[]): HostTensor {
  const y = output(x.dtype, shape, out?.[0]);
  const from = x.data, to = y.data;
  const first = starts.reduce((s, v, i) => s + v * srcStrides[i], 0);
  const step = steps.map((st, i) => st * srcStrides[i]);
  const inner = shape.at(-1) ?? 1, last = step.at(-1) ?? 0;
  const [rows] = rowStarts(shape, [step]);
  if (to instanceof Float32Array && from instanceof Float32Array) copyRowsF32(rows, to, from, first, inner, last);
  else for (let r = 0; r < rows.length; r++) for (let j = 0; j < inner; j++) to[r * inner + j] = from[first + rows[r] + j * last];
  return y;
}

/** {@link gatherStrided} on float32 (every inference's head split and merge): one array type in the loop. */
function copyRowsF32(starts: Int32Array, to: Float32Array, from: Float32Array, first: number, inner: number, last: number): void {
  if (last === 1) { // contiguous rows (a head split or merge): the engine's own copy
    for (let r = 0; r < starts.length; r++) to.set(from.subarray(first + starts[r], first + starts[r] + inner), r * inner);
    return;
  }
  for (let r = 0, o = 0; r < starts.length; r++) {
    for (let j = 0, s = first + starts[r]; j < inner; j++, s += last) to[o++] = from[s];
  }
}

function transposeTo(x: HostTensor, perm: number[], out?: readonly (HostTensor | undefined)[]): HostTensor {
  const strides = stridesOf(x.shape);
  return gatherStrided(x, perm.map(() => 0), perm.map(() => 1), perm.map((p) => x.shape[p]), perm.map((p) => strides[p]), out);
}

const permOf = (node: OnnxNode, rank: number) => list(node, "perm") ?? [...Array(rank).keys()].reverse();

/** One row-wise function over the last axes: `rows` runs of `cols` contiguous elements. */
function rowwise(x: HostTensor, axis: number, out: HostTensor | undefined, f: (src: Float32Array | Float64Array | Uint8Array, dst: Float32Array | Float64Array | Uint8Array, at: number, cols: number) => void): HostTensor {
  const a = axisOf(axis, x.shape.length);
  const cols = sizeOf(x.shape.slice(a));
  const y = output(x.dtype, x.shape, out);
  for (let at = 0; at < y.data.length; at += cols) f(x.data, y.data, at, cols);
  return y;
}

const OPS: Record<string, HostOp> = {
  Add: elementwise((a, b) => a + b),
  Sub: elementwise((a, b) => a - b),
  Mul: elementwise((a, b) => a * b),
  Div: {
    infer: (ins, node) => FLOAT_DIV.infer(ins, node),
    run: (ins, node, out) => (ins[0]!.dtype === "int64" ? INT_DIV : FLOAT_DIV).run(ins, node, out),
  },
  Pow: elementwise((a, b) => (b === 2 ? a * a : b === 3 ? a * a * a : Math.pow(a, b))),
  Where: elementwise((c, x, y) => (c ? x : y), (ins) => ins[1]!.dtype),
  Sqrt: unary(Math.sqrt),
  Erf: unary(erf),
  Tanh: unary(Math.tanh),
  Identity: unary((x) => x),
  Cast: {
    infer: (ins, node) => same(need(DTYPES[num(node, "to", 0)], node, `cast to type ${num(node, "to", 0)} is not supported`), ins[0]!.shape),
    run(ins, node, out) {
      const dtype = DTYPES[num(node, "to", 0)];
      const y = output(dtype, ins[0]!.shape, out?.[0]);
      const x = ins[0]!.data;
      for (let i = 0; i < x.length; i++) y.data[i] = dtype === "bool" ? (x[i] ? 1 : 0) : dtype === "int64" ? Math.trunc(x[i]) : x[i];
      return [y];
    },
  },
  MatMul: {
    infer: (ins, node) => same(ins[0]!.dtype, matmulShape(ins[0]!.shape, ins[1]!.shape, node)),
    run(ins, node, out) {
      const [a, b] = ins as HostTensor[];
      const shape = matmulShape(a.shape, b.shape, node);
      const y = output(a.dtype, shape, out?.[0]);
      const [m, k] = a.shape.slice(-2), n = b.shape.at(-1)!;
      const batchShape = shape.slice(0, -2);
      const row = new Float64Array(n);
      forEachBroadcast(batchShape, [a.shape.slice(0, -2), b.shape.slice(0, -2)], (t, [ia, ib]) => {
        const ao = ia * m * k, bo = ib * k * n, co = t * m * n;
        for (let i = 0; i < m; i++) {
          row.fill(0);
          for (let p = 0; p < k; p++) {
            const av = a.data[ao + i * k + p], bp = bo + p * n;
            for (let j = 0; j < n; j++) row[j] += av * b.data[bp + j];
          }
          y.data.set(row, co + i * n);
        }
      });
      return [y];
    },
  },
  Gemm: {
    infer(ins, node) {
      const [a, b] = [ins[0]!.shape, ins[1]!.shape];
      const m = num(node, "transA", 0) ? a[1] : a[0], n = num(node, "transB", 0) ? b[0] : b[1];
      return same(ins[0]!.dtype, [m, n]);
    },
    run(ins, node, out) {
      const [a0, b0, c] = ins;
      const a = num(node, "transA", 0) ? transposeTo(a0!, [1, 0]) : a0!;
      const b = num(node, "transB", 0) ? transposeTo(b0!, [1, 0]) : b0!;
      const [ab] = OPS.MatMul.run([a, b], node);
      const alpha = num(node, "alpha", 1), beta = num(node, "beta", 1);
      const scaled = OPS.Mul.run([ab, { dtype: "float32", shape: [], data: new Float32Array([alpha]) }], node);
      if (!c) return out?.[0] ? (out[0].data.set(scaled[0].data), [out[0]]) : scaled;
      const bc = OPS.Mul.run([c, { dtype: "float32", shape: [], data: new Float32Array([beta]) }], node);
      return OPS.Add.run([scaled[0], bc[0]], node, out);
    },
  },
  Softmax: {
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const x = ins[0]!;
      const axis = axisOf(num(node, "axis", -1), x.shape.length);
      if (axis !== x.shape.length - 1) {
        const perm = [...Array(x.shape.length).keys()];
        [perm[axis], perm[perm.length - 1]] = [perm[perm.length - 1], perm[axis]];
        const [y] = OPS.Softmax.run([transposeTo(x, perm)], { ...node, attrs: { axis: -1 } });
        return [transposeTo(y, perm, out)];
      }
      return [rowwise(x, -1, out?.[0], (src, dst, at, cols) => {
        let max = -Infinity;
        for (let j = 0; j < cols; j++) max = Math.max(max, src[at + j]);
        let sum = 0;
        for (let j = 0; j < cols; j++) sum += Math.exp(src[at + j] - max);
        for (let j = 0; j < cols; j++) dst[at + j] = Math.exp(src[at + j] - max) / sum;
      })];
    },
  },
  LayerNormalization: {
    infer(ins, node) {
      const shape = ins[0]!.shape;
      const axis = axisOf(num(node, "axis", -1), shape.length);
      const stat = shape.map((d, i) => (i < axis ? d : 1));
      return [{ dtype: ins[0]!.dtype, shape: [...shape] }, ...node.outputs.slice(1).map(() => ({ dtype: ins[0]!.dtype, shape: stat }))];
    },
    run(ins, node, out) {
      const [x, gamma, beta] = ins;
      const eps = num(node, "epsilon", 1e-5);
      const [, meanMeta, invMeta] = OPS.LayerNormalization.infer(ins as HostTensor[], node);
      const mean = meanMeta && output(x!.dtype, meanMeta.shape, out?.[1]);
      const invStd = invMeta && output(x!.dtype, invMeta.shape, out?.[2]);
      let row = 0;
      const y = rowwise(x!, num(node, "axis", -1), out?.[0], (src, dst, at, cols) => {
        let m = 0;
        for (let j = 0; j < cols; j++) m += src[at + j];
        m /= cols;
        let variance = 0;
        for (let j = 0; j < cols; j++) variance += (src[at + j] - m) ** 2;
        const inv = 1 / Math.sqrt(variance / cols + eps);
        for (let j = 0; j < cols; j++) dst[at + j] = (src[at + j] - m) * inv * gamma!.data[j % gamma!.data.length] + (beta ? beta.data[j % beta.data.length] : 0);
        if (mean) mean.data[row] = m;
        if (invStd) invStd.data[row] = inv;
        row++;
      });
      return [y, ...(mean ? [mean] : []), ...(invStd ? [invStd] : [])];
    },
  },
  ReduceMean: {
    infer(ins, node) {
      const shape = ins[0]!.shape;
      const axes = new Set(reduceAxes(ins, node, shape.length));
      const keep = num(node, "keepdims", 1);
      return same(ins[0]!.dtype, shape.flatMap((d, i) => (axes.has(i) ? (keep ? [1] : []) : [d])));
    },
    run(ins, node, out) {
      const x = ins[0]!;
      const axes = new Set(reduceAxes(ins, node, x.shape.length));
      const kept = x.shape.map((d, i) => (axes.has(i) ? 1 : d));
      const [{ shape }] = OPS.ReduceMean.infer(ins as HostTensor[], node);
      const y = output(x.dtype, shape, out?.[0]);
      const sums = new Float64Array(y.data.length);
      const count = x.data.length / y.data.length;
      forEachBroadcast(x.shape, [kept], (o, [i]) => { sums[i] += x.data[o]; });
      for (let i = 0; i < sums.length; i++) y.data[i] = sums[i] / count;
      return [y];
    },
  },
  Transpose: {
    infer: (ins, node) => same(ins[0]!.dtype, permOf(node, ins[0]!.shape.length).map((p) => ins[0]!.shape[p])),
    run: (ins, node, out) => [transposeTo(ins[0]!, permOf(node, ins[0]!.shape.length), out)],
  },
  Reshape: {
    infer: (ins, node) => same(ins[0]!.dtype, reshapeShape(ins[0]!.shape, constInts(ins[1], node, "the target shape"), num(node, "allowzero", 0) === 1)),
    run: (ins, node, out) => [view(ins[0]!, OPS.Reshape.infer(ins as HostTensor[], node)[0].shape, out)],
  },
  Unsqueeze: {
    infer: (ins, node) => same(ins[0]!.dtype, unsqueezeShape(ins[0]!.shape, list(node, "axes") ?? constInts(ins[1], node, "axes"))),
    run: (ins, node, out) => [view(ins[0]!, OPS.Unsqueeze.infer(ins as HostTensor[], node)[0].shape, out)],
  },
  Squeeze: {
    infer(ins, node) {
      const shape = ins[0]!.shape;
      const given = list(node, "axes") ?? (ins[1] ? constInts(ins[1], node, "axes") : undefined);
      const axes = new Set(given ? given.map((a) => axisOf(a, shape.length)) : shape.flatMap((d, i) => (d === 1 ? [i] : [])));
      return same(ins[0]!.dtype, shape.filter((_, i) => !axes.has(i)));
    },
    run: (ins, node, out) => [view(ins[0]!, OPS.Squeeze.infer(ins as HostTensor[], node)[0].shape, out)],
  },
  Shape: {
    infer(ins, node) {
      const rank = ins[0]!.shape.length;
      const start = clampAxis(num(node, "start", 0), rank), end = clampAxis(num(node, "end", rank), rank);
      return same("int64", [Math.max(0, end - start)]);
    },
    run(ins, node) {
      const shape = ins[0]!.shape;
      const start = clampAxis(num(node, "start", 0), shape.length), end = clampAxis(num(node, "end", shape.length), shape.length);
      return [{ dtype: "int64", shape: [Math.max(0, end - start)], data: Float64Array.from(shape.slice(start, end)) }];
    },
  },
  Gather: {
    infer(ins, node) {
      const [data, indices] = [ins[0]!.shape, ins[1]!.shape];
      const axis = axisOf(num(node, "axis", 0), data.length);
      return same(ins[0]!.dtype, [...data.slice(0, axis), ...indices, ...data.slice(axis + 1)]);
    },
    run(ins, node, out) {
      const [x, indices] = ins as HostTensor[];
      const axis = axisOf(num(node, "axis", 0), x.shape.length);
      const outer = sizeOf(x.shape.slice(0, axis)), dim = x.shape[axis], inner = sizeOf(x.shape.slice(axis + 1));
      const y = output(x.dtype, [...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)], out?.[0]);
      const count = indices.data.length;
      for (let o = 0; o < outer; o++) {
        for (let i = 0; i < count; i++) {
          let at = indices.data[i];
          if (at < 0) at += dim;
          if (!(at >= 0 && at < dim)) throw new Error(`node ${node.name} (Gather): index ${indices.data[i]} is out of range [0, ${dim})`);
          const src = (o * dim + at) * inner, dst = (o * count + i) * inner;
          y.data.set(x.data.subarray(src, src + inner), dst);
        }
      }
      return [y];
    },
  },
  Concat: {
    infer(ins, node) {
      const axis = axisOf(num(node, "axis", 0), ins[0]!.shape.length);
      const shape = [...ins[0]!.shape];
      shape[axis] = ins.reduce((s, i) => s + i!.shape[axis], 0);
      return same(ins[0]!.dtype, shape);
    },
    run(ins, node, out) {
      const [{ shape }] = OPS.Concat.infer(ins, node);
      const axis = axisOf(num(node, "axis", 0), shape.length);
      const y = output(ins[0]!.dtype, shape, out?.[0]);
      const outer = sizeOf(shape.slice(0, axis)), rowOut = sizeOf(shape.slice(axis));
      let offset = 0;
      for (const x of ins as HostTensor[]) {
        const row = sizeOf(x.shape.slice(axis));
        for (let o = 0; o < outer; o++) y.data.set(x.data.subarray(o * row, (o + 1) * row), o * rowOut + offset);
        offset += row;
      }
      return [y];
    },
  },
  Slice: {
    infer: (ins, node) => same(ins[0]!.dtype, sliceSpec(ins[0]!.shape, ins, node).shape),
    run(ins, node, out) {
      const x = ins[0]!;
      const spec = sliceSpec(x.shape, ins, node);
      return [gatherStrided(x, spec.starts, spec.steps, spec.shape, stridesOf(x.shape), out)];
    },
  },
  Constant: {
    infer: (_, node) => { const t = constantOf(node); return same(t.dtype, t.shape); },
    run: (_, node) => [constantOf(node)],
  },
};

const clampAxis = (a: number, rank: number) => Math.min(Math.max(a < 0 ? a + rank : a, 0), rank);

/** The same elements under another shape: shares the data unless `out` is given. */
function view(x: HostTensor, shape: readonly number[], out?: readonly (HostTensor | undefined)[]): HostTensor {
  if (out?.[0]) {
    if (out[0].data !== x.data) out[0].data.set(x.data);
    return out[0];
  }
  return { dtype: x.dtype, shape: [...shape], data: x.data };
}

function constantOf(node: OnnxNode): HostTensor {
  const a = node.attrs;
  const v: AttrValue | undefined = a.value ?? a.value_float ?? a.value_floats ?? a.value_int ?? a.value_ints;
  if (v === undefined) throw new Error(`node ${node.name} (Constant): no value`);
  if (typeof v === "object" && "data" in v) return v;
  const floats = a.value_float !== undefined || a.value_floats !== undefined;
  const values = Array.isArray(v) ? v : [v as number];
  return { dtype: floats ? "float32" : "int64", shape: Array.isArray(v) ? [values.length] : [], data: floats ? Float32Array.from(values) : Float64Array.from(values) };
}

/** Output types and shapes of a node. */
export function inferNode(node: OnnxNode, ins: readonly (ValueMeta | undefined)[]): { dtype: DType; shape: number[] }[] {
  return OPS[node.opType].infer(ins, node);
}

/** Runs a node on host tensors; writes output i into `out[i]` where given. */
export function runNode(node: OnnxNode, ins: readonly (HostTensor | undefined)[], out?: readonly (HostTensor | undefined)[]): HostTensor[] {
  return OPS[node.opType].run(ins, node, out);
}

/** Ops whose output is their input's elements unchanged, under another shape. */
export const VIEW_OPS: ReadonlySet<string> = new Set(["Reshape", "Unsqueeze", "Squeeze", "Identity"]);
