import { axisOf, forEachBroadcast, sizeOf, type HostTensor, type TensorData } from "../tensor.js";
import { num, output, reduceAxes, same, transposeTo, type HostOp } from "./op.js";

/** Reductions over axes (ReduceSum, ReduceMean, ...) and the row-wise ones (Softmax, LogSoftmax, LayerNormalization). */

/** A contiguous run's sum (or sum of squares): a reduction over the last axes, in one loop. */
type RowFold = (x: Float32Array, from: number, to: number) => number;
const rowSum: RowFold = (x, from, to) => { let acc = 0; for (let i = from; i < to; i++) acc += x[i]; return acc; };
const rowSumSquares: RowFold = (x, from, to) => { let acc = 0; for (let i = from; i < to; i++) acc += x[i] * x[i]; return acc; };

/**
 * A reduction: `step` folds each element into the accumulator started at `init`, `finish` turns
 * it into the result. With `row`, a float32 reduction over the last axes (RMSNorm's and LayerNorm's
 * means, at every inference) folds each contiguous run in one loop.
 */
function reduction(init: number, step: (acc: number, x: number) => number, finish: (acc: number, count: number) => number = (a) => a, row?: RowFold): HostOp {
  const shapeOf = (shape: readonly number[], axes: Set<number>, keep: number) => shape.flatMap((d, i) => (axes.has(i) ? (keep ? [1] : []) : [d]));
  return {
    attrs: ["axes", "keepdims", "noop_with_empty_axes"],
    infer(ins, node) {
      const shape = ins[0]!.shape;
      return same(ins[0]!.dtype, shapeOf(shape, new Set(reduceAxes(ins, node, shape.length)), num(node, "keepdims", 1)));
    },
    run(ins, node, out) {
      const x = ins[0]!;
      const axes = new Set(reduceAxes(ins, node, x.shape.length));
      const y = output(x.dtype, shapeOf(x.shape, axes, num(node, "keepdims", 1)), out?.[0]);
      const count = y.data.length ? x.data.length / y.data.length : 0;
      const trailing = [...axes].every((a) => a >= x.shape.length - axes.size);
      if (row && trailing && x.data instanceof Float32Array) {
        for (let i = 0; i < y.data.length; i++) y.data[i] = finish(row(x.data, i * count, (i + 1) * count), count);
        return [y];
      }
      const acc = new Float64Array(y.data.length).fill(init);
      forEachBroadcast(x.shape, [x.shape.map((d, i) => (axes.has(i) ? 1 : d))], (o, [i]) => { acc[i] = step(acc[i], x.data[o]); });
      for (let i = 0; i < acc.length; i++) y.data[i] = finish(acc[i], count);
      return [y];
    },
  };
}

/** One row-wise function over the last axes: `rows` runs of `cols` contiguous elements. */
function rowwise(x: HostTensor, axis: number, out: HostTensor | undefined, f: (src: TensorData, dst: TensorData, at: number, cols: number) => void): HostTensor {
  const a = axisOf(axis, x.shape.length);
  const cols = sizeOf(x.shape.slice(a));
  const y = output(x.dtype, x.shape, out);
  if (cols > 0) for (let at = 0; at < y.data.length; at += cols) f(x.data, y.data, at, cols);
  return y;
}

/** Softmax (or its log) along one axis: the axis moved last, rows normalized, moved back. */
function softmax(log: boolean): HostOp {
  const op: HostOp = {
    attrs: ["axis"],
    infer: (ins) => same(ins[0]!.dtype, ins[0]!.shape),
    run(ins, node, out) {
      const x = ins[0]!;
      const axis = axisOf(num(node, "axis", -1), x.shape.length);
      if (axis !== x.shape.length - 1) {
        const perm = [...Array(x.shape.length).keys()];
        [perm[axis], perm[perm.length - 1]] = [perm[perm.length - 1], perm[axis]];
        const [y] = op.run([transposeTo(x, perm)], { ...node, attrs: { axis: -1 } });
        return [transposeTo(y, perm, out?.[0])];
      }
      return [rowwise(x, -1, out?.[0], (src, dst, at, cols) => {
        let max = -Infinity;
        for (let j = 0; j < cols; j++) max = Math.max(max, src[at + j]);
        let sum = 0;
        for (let j = 0; j < cols; j++) sum += Math.exp(src[at + j] - max);
        if (log) for (let j = 0; j < cols; j++) dst[at + j] = src[at + j] - max - Math.log(sum);
        else for (let j = 0; j < cols; j++) dst[at + j] = Math.exp(src[at + j] - max) / sum;
      })];
    },
  };
  return op;
}

export const REDUCE_OPS: Record<string, HostOp> = {
  ReduceSum: reduction(0, (a, x) => a + x, undefined, rowSum),
  ReduceMean: reduction(0, (a, x) => a + x, (a, n) => a / n, rowSum),
  ReduceMax: reduction(-Infinity, (a, x) => (x > a || Number.isNaN(x) ? x : a)),
  ReduceMin: reduction(Infinity, (a, x) => (x < a || Number.isNaN(x) ? x : a)),
  ReduceProd: reduction(1, (a, x) => a * x),
  ReduceL1: reduction(0, (a, x) => a + Math.abs(x)),
  ReduceL2: reduction(0, (a, x) => a + x * x, Math.sqrt, rowSumSquares),
  ReduceSumSquare: reduction(0, (a, x) => a + x * x, undefined, rowSumSquares),
  ReduceLogSum: reduction(0, (a, x) => a + x, Math.log),
  ReduceLogSumExp: reduction(0, (a, x) => a + Math.exp(x), Math.log),
  Softmax: softmax(false),
  LogSoftmax: softmax(true),
  LayerNormalization: {
    attrs: ["axis", "epsilon", "stash_type"],
    infer(ins, node) {
      const shape = ins[0]!.shape;
      const axis = axisOf(num(node, "axis", -1), shape.length);
      const stat = shape.map((d, i) => (i < axis ? d : 1));
      return [{ dtype: ins[0]!.dtype, shape: [...shape] }, ...node.outputs.slice(1).map(() => ({ dtype: ins[0]!.dtype, shape: stat }))];
    },
    run(ins, node, out) {
      const [x, gamma, beta] = ins;
      const eps = num(node, "epsilon", 1e-5);
      const [, meanMeta, invMeta] = REDUCE_OPS.LayerNormalization.infer(ins as HostTensor[], node);
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
};
