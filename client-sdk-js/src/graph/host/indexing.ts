import type { OnnxNode } from "../onnx.js";
import { axisOf, rowStarts, sizeOf, stridesOf, type HostTensor } from "../tensor.js";
import { EINSUM } from "./einsum.js";
import { around, constInts, fail, num, output, same, scalarInput, str, type HostOp, type ValueMeta } from "./op.js";

/** Indexed reads and writes (GatherElements, GatherND, ScatterND, ...), ordering (TopK, ArgMax), CumSum, Trilu, OneHot, Einsum. */

/** A node's inputs: metas at inference, tensors at a run. */
type Inputs = readonly (ValueMeta | HostTensor | undefined)[];

/** An index along an axis of `dim` elements, negative ones counting from the end; out of range is the model's error. */
function resolve(node: OnnxNode, index: number, dim: number): number {
  const at = index < 0 ? index + dim : index;
  if (!(at >= 0 && at < dim)) fail(node, `index ${index} is out of range [${-dim}, ${dim})`);
  return at;
}

/** How a scatter folds an update into the element it lands on (ScatterND, ScatterElements' `reduction`). */
const REDUCTIONS: Readonly<Record<string, (old: number, update: number) => number>> = {
  none: (_, update) => update,
  add: (old, update) => old + update,
  mul: (old, update) => old * update,
  max: Math.max,
  min: Math.min,
};

function reductionOf(node: OnnxNode): (old: number, update: number) => number {
  const name = str(node, "reduction", "none");
  return REDUCTIONS[name] ?? fail(node, `reduction ${name} is not supported`);
}

/** A copy of a scatter's data to write the updates into. */
function copyOf(x: HostTensor, out?: HostTensor): HostTensor {
  const y = output(x.dtype, x.shape, out);
  if (y.data !== x.data) y.data.set(x.data);
  return y;
}

/**
 * For each element of GatherElements' or ScatterElements' indices (row-major), the offset in data
 * of the same position with its `axis` coordinate 0; the index then adds `index · stride`.
 */
function elementOffsets(node: OnnxNode, indices: HostTensor, dataShape: readonly number[], axis: number): { offsets: Int32Array; stride: number } {
  if (indices.shape.length !== dataShape.length) fail(node, `indices of rank ${indices.shape.length} into data of rank ${dataShape.length}`);
  const strides = stridesOf(dataShape);
  const walk = strides.map((s, a) => (a === axis ? 0 : s));
  const [starts] = rowStarts(indices.shape, [walk]);
  const inner = indices.shape.at(-1) ?? 1, last = walk.at(-1) ?? 0;
  const offsets = new Int32Array(indices.data.length);
  for (let r = 0, o = 0; r < starts.length; r++) for (let j = 0; j < inner; j++) offsets[o++] = starts[r] + j * last;
  return { offsets, stride: strides[axis] };
}

/**
 * GatherND's and ScatterND's index tuples (indices' last axis): their length, and the shape of the
 * slice of data each names. The first `batch_dims` axes of indices and data pair up.
 */
function tupleShape(node: OnnxNode, dataShape: readonly number[], indexShape: readonly number[], batchDims: number): { tuple: number; sliceShape: number[] } {
  if (indexShape.length <= batchDims) fail(node, `indices of rank ${indexShape.length} with ${batchDims} batch axes`);
  if (indexShape.slice(0, batchDims).some((d, a) => d !== dataShape[a])) fail(node, `the batch axes of indices [${indexShape}] and data [${dataShape}] differ`);
  const tuple = indexShape.at(-1)!;
  if (batchDims + tuple > dataShape.length) fail(node, `index tuples of ${tuple} after ${batchDims} batch axes exceed data of rank ${dataShape.length}`);
  return { tuple, sliceShape: dataShape.slice(batchDims + tuple) };
}

/** Where the slice each index tuple names starts in data, per tuple in row-major order, and the slice's size. */
function tupleStarts(node: OnnxNode, dataShape: readonly number[], indices: HostTensor, batchDims: number): { starts: Float64Array; slice: number } {
  const { tuple, sliceShape } = tupleShape(node, dataShape, indices.shape, batchDims);
  const strides = stridesOf(dataShape);
  const count = sizeOf(indices.shape.slice(0, -1));
  const tuplesPerBatch = count / sizeOf(dataShape.slice(0, batchDims)), batchSize = sizeOf(dataShape.slice(batchDims));
  const starts = new Float64Array(count);
  for (let t = 0; t < count; t++) {
    let at = Math.floor(t / tuplesPerBatch) * batchSize;
    for (let k = 0; k < tuple; k++) at += resolve(node, indices.data[t * tuple + k], dataShape[batchDims + k]) * strides[batchDims + k];
    starts[t] = at;
  }
  return { starts, slice: sizeOf(sliceShape) };
}

function gatherNDShape(node: OnnxNode, dataShape: readonly number[], indexShape: readonly number[]): number[] {
  return [...indexShape.slice(0, -1), ...tupleShape(node, dataShape, indexShape, num(node, "batch_dims", 0)).sliceShape];
}

/** Runs `visit(o, i)` for each line along an axis split as {@link around}: the line's elements are `(o·dim + j)·inner + i`. */
function forEachLine(outer: number, inner: number, visit: (o: number, i: number) => void): void {
  for (let o = 0; o < outer; o++) for (let i = 0; i < inner; i++) visit(o, i);
}

/** A shape with `axis` reduced to one element, or dropped. */
const reducedShape = (shape: readonly number[], axis: number, keep: boolean): number[] =>
  shape.flatMap((d, a) => (a !== axis ? [d] : keep ? [1] : []));

/** ArgMax (`sign` 1) or ArgMin (-1): the first extreme along the axis, or the last with `select_last_index`. */
function argExtreme(sign: 1 | -1): HostOp {
  const shapeOf = (shape: readonly number[], node: OnnxNode) =>
    reducedShape(shape, axisOf(num(node, "axis", 0), shape.length), num(node, "keepdims", 1) === 1);
  return {
    attrs: ["axis", "keepdims", "select_last_index"],
    infer: (ins, node) => same("int64", shapeOf(ins[0]!.shape, node)),
    run(ins, node, out) {
      const x = ins[0]!;
      const { outer, dim, inner } = around(x.shape, axisOf(num(node, "axis", 0), x.shape.length));
      const last = num(node, "select_last_index", 0) === 1;
      const y = output("int64", shapeOf(x.shape, node), out?.[0]);
      forEachLine(outer, inner, (o, i) => {
        const first = o * dim * inner + i;
        let best = 0, bestValue = x.data[first];
        for (let j = 1; j < dim; j++) {
          const v = x.data[first + j * inner];
          if (sign * (v - bestValue) > 0 || (last && v === bestValue)) { best = j; bestValue = v; }
        }
        y.data[o * inner + i] = best;
      });
      return [y];
    },
  };
}

function topKShape(ins: Inputs, node: OnnxNode): { axis: number; k: number; shape: number[] } {
  const shape = ins[0]!.shape;
  const axis = axisOf(num(node, "axis", -1), shape.length);
  const k = constInts(ins[1], node, "K")[0];
  if (!(k >= 0 && k <= shape[axis])) fail(node, `K ${k} is out of range [0, ${shape[axis]}]`);
  return { axis, k, shape: shape.map((d, a) => (a === axis ? k : d)) };
}

/** OneHot's output axis and shape: indices' shape with `depth` inserted at `axis`. */
function oneHotShape(indexShape: readonly number[], depth: number, node: OnnxNode): { axis: number; shape: number[] } {
  const axis = axisOf(num(node, "axis", -1), indexShape.length + 1);
  return { axis, shape: [...indexShape.slice(0, axis), depth, ...indexShape.slice(axis)] };
}

const depthOf = (ins: Inputs, node: OnnxNode): number => Math.trunc(constInts(ins[1], node, "depth")[0]);

export const INDEXING_OPS: Record<string, HostOp> = {
  GatherElements: {
    attrs: ["axis"],
    infer: (ins) => same(ins[0]!.dtype, ins[1]!.shape),
    run(ins, node, out) {
      const [x, indices] = ins as HostTensor[];
      const axis = axisOf(num(node, "axis", 0), x.shape.length);
      const { offsets, stride } = elementOffsets(node, indices, x.shape, axis);
      const y = output(x.dtype, indices.shape, out?.[0]);
      const dim = x.shape[axis];
      for (let i = 0; i < offsets.length; i++) y.data[i] = x.data[offsets[i] + resolve(node, indices.data[i], dim) * stride];
      return [y];
    },
  },
  ScatterElements: {
    attrs: ["axis", "reduction"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const [x, indices, updates] = ins as HostTensor[];
      const axis = axisOf(num(node, "axis", 0), x.shape.length);
      const { offsets, stride } = elementOffsets(node, indices, x.shape, axis);
      const reduce = reductionOf(node);
      const y = copyOf(x, out?.[0]);
      const dim = x.shape[axis];
      for (let i = 0; i < offsets.length; i++) {
        const at = offsets[i] + resolve(node, indices.data[i], dim) * stride;
        y.data[at] = reduce(y.data[at], updates.data[i]);
      }
      return [y];
    },
  },
  GatherND: {
    attrs: ["batch_dims"],
    infer: (ins, node) => same(ins[0]!.dtype, gatherNDShape(node, ins[0]!.shape, ins[1]!.shape)),
    run(ins, node, out) {
      const [x, indices] = ins as HostTensor[];
      const { starts, slice } = tupleStarts(node, x.shape, indices, num(node, "batch_dims", 0));
      const y = output(x.dtype, gatherNDShape(node, x.shape, indices.shape), out?.[0]);
      for (let t = 0; t < starts.length; t++) y.data.set(x.data.subarray(starts[t], starts[t] + slice), t * slice);
      return [y];
    },
  },
  ScatterND: {
    attrs: ["reduction"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const [x, indices, updates] = ins as HostTensor[];
      const { starts, slice } = tupleStarts(node, x.shape, indices, 0);
      const reduce = reductionOf(node);
      const y = copyOf(x, out?.[0]);
      for (let t = 0; t < starts.length; t++) {
        for (let j = 0, at = starts[t]; j < slice; j++, at++) y.data[at] = reduce(y.data[at], updates.data[t * slice + j]);
      }
      return [y];
    },
  },
  Trilu: {
    attrs: ["upper"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const x = ins[0]!;
      if (x.shape.length < 2) fail(node, `input of rank ${x.shape.length}: rank 2 or more expected`);
      const k = scalarInput(ins[1], node, "k", 0), upper = num(node, "upper", 1) === 1;
      const [rows, cols] = x.shape.slice(-2);
      const y = output(x.dtype, x.shape, out?.[0]);
      // element (i, j) of each matrix stays where j − i ≥ k (upper) or ≤ k (lower), else 0
      for (let at = 0; at < y.data.length; at += rows * cols) {
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            const e = at + i * cols + j;
            y.data[e] = (upper ? j - i >= k : j - i <= k) ? x.data[e] : 0;
          }
        }
      }
      return [y];
    },
  },
  CumSum: {
    attrs: ["exclusive", "reverse"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const x = ins[0]!;
      const { outer, dim, inner } = around(x.shape, axisOf(constInts(ins[1], node, "axis")[0], x.shape.length));
      const exclusive = num(node, "exclusive", 0) === 1, reverse = num(node, "reverse", 0) === 1;
      const y = output(x.dtype, x.shape, out?.[0]);
      forEachLine(outer, inner, (o, i) => {
        let sum = 0;
        for (let n = 0; n < dim; n++) {
          const at = (o * dim + (reverse ? dim - 1 - n : n)) * inner + i;
          const v = x.data[at];
          y.data[at] = exclusive ? sum : sum + v;
          sum += v;
        }
      });
      return [y];
    },
  },
  TopK: {
    attrs: ["axis", "largest", "sorted"],
    infer(ins, node) {
      const { shape } = topKShape(ins, node);
      return [{ dtype: ins[0]!.dtype, shape }, { dtype: "int64", shape: [...shape] }];
    },
    run(ins, node, out) {
      const x = ins[0]!;
      const { axis, k, shape } = topKShape(ins, node);
      const { outer, dim, inner } = around(x.shape, axis);
      const sign = num(node, "largest", 1) === 1 ? 1 : -1;
      const values = output(x.dtype, shape, out?.[0]), indices = output("int64", shape, out?.[1]);
      const line = new Float64Array(dim);
      const order = Array.from({ length: dim }, (_, j) => j);
      // sorted either way (with `sorted` 0 any order is right); equal values keep the lower index first
      const before = (p: number, q: number) => sign * (line[q] - line[p]) || p - q;
      forEachLine(outer, inner, (o, i) => {
        for (let j = 0; j < dim; j++) { line[j] = x.data[(o * dim + j) * inner + i]; order[j] = j; }
        order.sort(before);
        for (let j = 0; j < k; j++) {
          const at = (o * k + j) * inner + i;
          values.data[at] = line[order[j]];
          indices.data[at] = order[j];
        }
      });
      return [values, indices];
    },
  },
  ArgMax: argExtreme(1),
  ArgMin: argExtreme(-1),
  OneHot: {
    attrs: ["axis"],
    infer: (ins, node) => same(ins[2]!.dtype, oneHotShape(ins[0]!.shape, depthOf(ins, node), node).shape),
    run(ins, node, out) {
      const [indices, , values] = ins as HostTensor[];
      const depth = depthOf(ins, node);
      const { axis, shape } = oneHotShape(indices.shape, depth, node);
      const [off, on] = values.data;
      const y = output(values.dtype, shape, out?.[0]);
      y.data.fill(off);
      // index element o·inner + i turns on output element (o·depth + index)·inner + i; out-of-range ones leave it all off
      const inner = sizeOf(indices.shape.slice(axis));
      for (let e = 0; e < indices.data.length; e++) {
        let index = Math.trunc(indices.data[e]);
        if (index < 0) index += depth;
        if (index >= 0 && index < depth) y.data[(Math.floor(e / inner) * depth + index) * inner + (e % inner)] = on;
      }
      return [y];
    },
  },
  Einsum: EINSUM,
};
