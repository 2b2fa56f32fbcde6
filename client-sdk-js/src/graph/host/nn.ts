import type { OnnxNode } from "../onnx.js";
import { sizeOf, type HostTensor, type TensorData } from "../tensor.js";
import { fail, list, need, num, output, str, type HostOp, type OutputMeta } from "./op.js";

/**
 * Convolutions, pooling and normalizations over channels, on `[N, C, ...spatial]` tensors.
 * Convolution and pooling share one walk over a sliding window ({@link Taps}): the axes but the
 * last are enumerated once per call, and along the last axis each kernel tap is a plain strided
 * loop, so the per-element work is one multiply-add on typed arrays.
 */

/** A sliding window's geometry per spatial axis: pads are begins then ends; `out` is the output's spatial shape. */
export interface Window {
  readonly kernel: readonly number[];
  readonly strides: readonly number[];
  readonly dilations: readonly number[];
  readonly pads: number[];
  readonly out: number[];
}

/** An attribute of one value per spatial axis (strides, dilations, ...), `fallback` on each when absent. */
function perAxis(node: OnnxNode, name: string, length: number, fallback: number): number[] {
  const given = list(node, name);
  if (given && given.length !== length) fail(node, `${name} [${given}] has ${given.length} values, ${length} expected`);
  return given ? [...given] : new Array<number>(length).fill(fallback);
}

/** The window of a conv or pool with its strides, dilations and pads as written (auto_pad not applied yet). */
function windowAttrs(node: OnnxNode, kernel: readonly number[], autoPad: string): Window {
  const rank = kernel.length;
  if (rank === 0) fail(node, "the input has no spatial axes");
  if (!["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"].includes(autoPad)) fail(node, `auto_pad ${autoPad} is not supported`);
  const pads = autoPad === "NOTSET" ? perAxis(node, "pads", 2 * rank, 0) : new Array<number>(2 * rank).fill(0);
  return { kernel, strides: perAxis(node, "strides", rank, 1), dilations: perAxis(node, "dilations", rank, 1), pads, out: [] };
}

/** The extent of a dilated kernel along an axis. */
const span = (w: Window, axis: number) => (w.kernel[axis] - 1) * w.dilations[axis] + 1;

/** Splits a total padding over begin and end: the odd one goes at the end (`upper`) or at the begin. */
function splitPad(w: Window, axis: number, total: number, upper: boolean): void {
  const half = Math.floor(total / 2);
  w.pads[axis] = upper ? half : total - half;
  w.pads[w.kernel.length + axis] = total - w.pads[axis];
}

/**
 * A conv's or pool's window over `spatial` by ONNX's rules: SAME_UPPER / SAME_LOWER make
 * ceil(in / stride) outputs and pad what they need; VALID pads nothing; otherwise the pads given.
 * With `ceil`, a partial last window counts, unless it would start past the input and its begin padding.
 */
function slidingWindow(node: OnnxNode, spatial: readonly number[], kernel: readonly number[], ceil = false): Window {
  const autoPad = str(node, "auto_pad", "NOTSET");
  const w = windowAttrs(node, kernel, autoPad);
  const rank = kernel.length;
  if (spatial.length !== rank) fail(node, `a kernel of ${rank} axes over ${spatial.length} spatial axes`);
  spatial.forEach((size, axis) => {
    const stride = w.strides[axis];
    if (autoPad.startsWith("SAME")) {
      const out = Math.ceil(size / stride);
      splitPad(w, axis, Math.max(0, (out - 1) * stride + span(w, axis) - size), autoPad === "SAME_UPPER");
      w.out.push(out);
      return;
    }
    const room = size + w.pads[axis] + w.pads[rank + axis] - span(w, axis);
    let out = (ceil ? Math.ceil(room / stride) : Math.floor(room / stride)) + 1;
    if (ceil && (out - 1) * stride >= size + w.pads[axis]) out--;
    w.out.push(out);
  });
  if (w.out.some((d) => d < 1)) fail(node, `a window of [${kernel}] leaves no output over [${spatial}]`);
  return w;
}

/**
 * A transposed conv's window over its input's `spatial` shape: the output is
 * stride·(in − 1) + output_padding + dilated kernel − pads, or `output_shape` (or in·stride under
 * SAME_*) with the pads that make it (the odd one at the end for SAME_UPPER, at the begin otherwise).
 */
function transposedWindow(node: OnnxNode, spatial: readonly number[], kernel: readonly number[]): Window {
  const autoPad = str(node, "auto_pad", "NOTSET");
  const w = windowAttrs(node, kernel, autoPad);
  const rank = kernel.length;
  if (spatial.length !== rank) fail(node, `a kernel of ${rank} axes over ${spatial.length} spatial axes`);
  const outPadding = perAxis(node, "output_padding", rank, 0);
  // output_shape may name the batch and channel axes too: its last `rank` values are the spatial ones
  const target = list(node, "output_shape")?.slice(-rank) ?? (autoPad.startsWith("SAME") ? spatial.map((d, i) => d * w.strides[i]) : undefined);
  spatial.forEach((size, axis) => {
    const full = w.strides[axis] * (size - 1) + outPadding[axis] + span(w, axis);
    if (target) splitPad(w, axis, full - target[axis], autoPad === "SAME_UPPER");
    w.out.push(full - w.pads[axis] - w.pads[rank + axis]);
  });
  if (w.out.some((d) => d < 1)) fail(node, `the output [${w.out}] is empty`);
  return w;
}

/**
 * The pairs of positions a window brings together, for a loop over the `from` side whose element
 * `a` meets the `to` side's element `a·stride + k·dilation − padBegin` through kernel tap `k` (a
 * conv's output meets its input so; a transposed conv's input meets its output). The axes but the
 * last are listed ahead, as row starts on each side and in the kernel, only where every axis is in
 * range; along the last axis, tap `k` covers `from` indices [lo[k], hi[k]), meeting `to` at
 * `a·stride + shift[k]`. For one `from` element, taps come in row-major kernel order.
 */
interface Taps {
  readonly fromRows: Int32Array;
  readonly toRows: Int32Array;
  readonly kernelRows: Int32Array;
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  readonly shift: Int32Array;
  /** Along the last axis. */
  readonly stride: number;
  /** Kernel taps along the last axis. */
  readonly width: number;
}

function taps(from: readonly number[], to: readonly number[], w: Window): Taps {
  const last = from.length - 1;
  let rows: [number, number, number][] = [[0, 0, 0]];
  for (let axis = 0; axis < last; axis++) {
    const next: [number, number, number][] = [];
    const s = w.strides[axis], d = w.dilations[axis], p = w.pads[axis];
    for (const [f, t, k] of rows) {
      for (let a = 0; a < from[axis]; a++) {
        for (let j = 0; j < w.kernel[axis]; j++) {
          const b = a * s + j * d - p;
          if (b >= 0 && b < to[axis]) next.push([f * from[axis] + a, t * to[axis] + b, k * w.kernel[axis] + j]);
        }
      }
    }
    rows = next;
  }
  const width = w.kernel[last], stride = w.strides[last];
  const lo = new Int32Array(width), hi = new Int32Array(width), shift = new Int32Array(width);
  for (let k = 0; k < width; k++) {
    shift[k] = k * w.dilations[last] - w.pads[last];
    lo[k] = Math.max(0, Math.ceil(-shift[k] / stride));
    hi[k] = Math.max(lo[k], Math.min(from[last], Math.ceil((to[last] - shift[k]) / stride)));
  }
  return {
    fromRows: Int32Array.from(rows, (r) => r[0] * from[last]),
    toRows: Int32Array.from(rows, (r) => r[1] * to[last]),
    kernelRows: Int32Array.from(rows, (r) => r[2] * width),
    lo, hi, shift, stride, width,
  };
}

/** acc[o] += Σ_k w[k] · x[o·stride + k·dilation − pad] over one input plane and one kernel: a conv's inner loops. */
function gatherInto(acc: Float64Array, x: Float32Array, xBase: number, w: Float32Array, wBase: number, t: Taps): void {
  const { fromRows, toRows, kernelRows, lo, hi, shift, stride, width } = t;
  for (let r = 0; r < fromRows.length; r++) {
    const yRow = fromRows[r], xRow = xBase + toRows[r], wRow = wBase + kernelRows[r];
    for (let k = 0; k < width; k++) {
      const weight = w[wRow + k], end = hi[k];
      for (let o = lo[k], i = xRow + shift[k] + o * stride; o < end; o++, i += stride) acc[yRow + o] += weight * x[i];
    }
  }
}

/** acc[i·stride + k·dilation − pad] += w[k] · x[i] over one input plane and one kernel: a transposed conv's inner loops. */
function scatterInto(acc: Float64Array, x: Float32Array, xBase: number, w: Float32Array, wBase: number, t: Taps): void {
  const { fromRows, toRows, kernelRows, lo, hi, shift, stride, width } = t;
  for (let r = 0; r < fromRows.length; r++) {
    const xRow = xBase + fromRows[r], yRow = toRows[r], wRow = wBase + kernelRows[r];
    for (let k = 0; k < width; k++) {
      const weight = w[wRow + k], end = hi[k];
      for (let i = lo[k], o = yRow + shift[k] + i * stride; i < end; i++, o += stride) acc[o] += weight * x[xRow + i];
    }
  }
}

/** The running maximum of each window and where in the input plane it was (first one on ties), over one plane. */
function maxInto(acc: Float64Array, at: Int32Array, x: TensorData, xBase: number, t: Taps): void {
  const { fromRows, toRows, lo, hi, shift, stride, width } = t;
  for (let r = 0; r < fromRows.length; r++) {
    const yRow = fromRows[r], xRow = toRows[r];
    for (let k = 0; k < width; k++) {
      const end = hi[k];
      for (let o = lo[k], i = xRow + shift[k] + o * stride; o < end; o++, i += stride) {
        const v = x[xBase + i];
        if (v > acc[yRow + o]) { acc[yRow + o] = v; at[yRow + o] = i; }
      }
    }
  }
}

/** A float tensor's elements: convolutions and normalizations are defined on floats, all held as float32. */
function floats(t: HostTensor, node: OnnxNode): Float32Array {
  if (!(t.data instanceof Float32Array)) fail(node, `a ${t.dtype} input where floats are expected`);
  return t.data;
}

/** Channels, groups and the channels of each group of a (transposed) conv, checked against each other. */
function convGroups(node: OnnxNode, x: readonly number[], w: readonly number[], transposed: boolean) {
  const group = num(node, "group", 1), channels = x[1];
  const perGroup = transposed ? w[0] / group : w[1];
  const outChannels = transposed ? w[1] * group : w[0];
  if (x.length !== w.length || x.length < 3) fail(node, `input [${x}] and weight [${w}] do not make a convolution`);
  if (perGroup * group !== channels || outChannels % group !== 0) fail(node, `input [${x}] and weight [${w}] do not match group ${group}`);
  return { channels, perGroup, outChannels, outPerGroup: outChannels / group };
}

/** A Conv node's window over input `x` by weight `w` (auto_pad resolved into pads), as the host op computes it. */
export const convNodeWindow = (node: OnnxNode, x: readonly number[], w: readonly number[]): Window => convWindow(node, x, w, false);

function convWindow(node: OnnxNode, x: readonly number[], w: readonly number[], transposed: boolean): Window {
  return (transposed ? transposedWindow : slidingWindow)(node, x.slice(2), w.slice(2));
}

/** Conv (`transposed` false) or ConvTranspose: one float64 output plane at a time, over the channels of its group. */
function convolution(transposed: boolean): HostOp {
  return {
    attrs: ["auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", ...(transposed ? ["output_padding", "output_shape"] : [])],
    infer(ins, node) {
      const [x, w] = [ins[0]!.shape, ins[1]!.shape];
      const { outChannels } = convGroups(node, x, w, transposed);
      return [{ dtype: ins[0]!.dtype, shape: [x[0], outChannels, ...convWindow(node, x, w, transposed).out] }];
    },
    run(ins, node, out) {
      const [x, w, bias] = ins as [HostTensor, HostTensor, HostTensor | undefined];
      const { perGroup, outChannels, outPerGroup, channels } = convGroups(node, x.shape, w.shape, transposed);
      const window = convWindow(node, x.shape, w.shape, transposed);
      const spatial = x.shape.slice(2);
      const y = output(x.dtype, [x.shape[0], outChannels, ...window.out], out?.[0]);
      const xs = floats(x, node), ws = floats(w, node);
      const inPlane = sizeOf(spatial), outPlane = sizeOf(window.out), kernelSize = sizeOf(w.shape.slice(2));
      const walk = transposed ? taps(spatial, window.out, window) : taps(window.out, spatial, window);
      const acc = new Float64Array(outPlane);
      for (let n = 0; n < x.shape[0]; n++) {
        for (let m = 0; m < outChannels; m++) {
          const g = Math.floor(m / outPerGroup);
          acc.fill(bias ? bias.data[m] : 0);
          for (let c = 0; c < perGroup; c++) {
            const xBase = (n * channels + g * perGroup + c) * inPlane;
            // Conv's weight is [M, C/group, ...kernel]; ConvTranspose's [C, M/group, ...kernel]
            if (transposed) scatterInto(acc, xs, xBase, ws, ((g * perGroup + c) * outPerGroup + m % outPerGroup) * kernelSize, walk);
            else gatherInto(acc, xs, xBase, ws, (m * perGroup + c) * kernelSize, walk);
          }
          y.data.set(acc, (n * outChannels + m) * outPlane);
        }
      }
      return [y];
    },
  };
}

/** A pool's window over the input's spatial axes: kernel_shape is required. */
function poolWindow(node: OnnxNode, shape: readonly number[]): Window {
  const kernel = need(list(node, "kernel_shape"), node, "kernel_shape is required");
  return slidingWindow(node, shape.slice(2), kernel, num(node, "ceil_mode", 0) === 1);
}

/**
 * How many of each output's window taps an average divides by: those inside the input, or with
 * count_include_pad those inside the padded input too (not the overhang of a ceil_mode window).
 * Per axis a count, the plane their outer product.
 */
function windowCounts(spatial: readonly number[], w: Window, includePad: boolean): Float64Array {
  let plane = Float64Array.of(1);
  spatial.forEach((size, axis) => {
    const first = includePad ? -w.pads[axis] : 0, end = includePad ? size + w.pads[spatial.length + axis] : size;
    const counts = Array.from({ length: w.out[axis] }, (_, o) => {
      let count = 0;
      for (let k = 0; k < w.kernel[axis]; k++) {
        const at = o * w.strides[axis] + k * w.dilations[axis] - w.pads[axis];
        if (at >= first && at < end) count++;
      }
      return count;
    });
    const next = new Float64Array(plane.length * counts.length);
    for (let p = 0; p < plane.length; p++) for (let o = 0; o < counts.length; o++) next[p * counts.length + o] = plane[p] * counts[o];
    plane = next;
  });
  return plane;
}

/** A row-major index over `shape` as the column-major one (MaxPool's storage_order 1). */
function columnMajor(index: number, shape: readonly number[]): number {
  let result = 0, scale = 1;
  const position = shape.map((_, axis) => Math.floor(index / sizeOf(shape.slice(axis + 1))) % shape[axis]);
  position.forEach((p, axis) => { result += p * scale; scale *= shape[axis]; });
  return result;
}

const poolShape = (x: readonly number[], w: Window) => [x[0], x[1], ...w.out];

const MAX_POOL: HostOp = {
  attrs: ["auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"],
  infer(ins, node) {
    const x = ins[0]!, shape = poolShape(x.shape, poolWindow(node, x.shape));
    const metas: OutputMeta[] = [{ dtype: x.dtype, shape }];
    if (node.outputs[1]) metas.push({ dtype: "int64", shape: [...shape] });
    return metas;
  },
  run(ins, node, out) {
    const x = ins[0]!, window = poolWindow(node, x.shape), spatial = x.shape.slice(2);
    const y = output(x.dtype, poolShape(x.shape, window), out?.[0]);
    const indices = node.outputs[1] ? output("int64", y.shape, out?.[1]) : undefined;
    const inPlane = sizeOf(spatial), outPlane = sizeOf(window.out);
    const walk = taps(window.out, spatial, window);
    const acc = new Float64Array(outPlane), at = new Int32Array(outPlane);
    const columns = num(node, "storage_order", 0) === 1;
    for (let plane = 0; plane < x.shape[0] * x.shape[1]; plane++) {
      acc.fill(-Infinity);
      at.fill(-1);
      maxInto(acc, at, x.data, plane * inPlane, walk);
      for (let o = 0; o < outPlane; o++) {
        // a window wholly in the padding is 0 at index -1, as in ONNX's reference
        if (at[o] < 0) acc[o] = 0;
        // indices are flat over the whole input, batch and channel included
        if (indices) indices.data[plane * outPlane + o] = at[o] < 0 ? -1 : plane * inPlane + (columns ? columnMajor(at[o], spatial) : at[o]);
      }
      y.data.set(acc, plane * outPlane);
    }
    return indices ? [y, indices] : [y];
  },
};

const AVERAGE_POOL: HostOp = {
  attrs: ["auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"],
  infer: (ins, node) => [{ dtype: ins[0]!.dtype, shape: poolShape(ins[0]!.shape, poolWindow(node, ins[0]!.shape)) }],
  run(ins, node, out) {
    const x = ins[0]!, window = poolWindow(node, x.shape), spatial = x.shape.slice(2);
    const y = output(x.dtype, poolShape(x.shape, window), out?.[0]);
    const inPlane = sizeOf(spatial), outPlane = sizeOf(window.out);
    const walk = taps(window.out, spatial, window);
    const counts = windowCounts(spatial, window, num(node, "count_include_pad", 0) === 1);
    const ones = new Float32Array(sizeOf(window.kernel)).fill(1); // a sum is a conv with a kernel of ones
    const xs = floats(x, node), acc = new Float64Array(outPlane);
    for (let plane = 0; plane < x.shape[0] * x.shape[1]; plane++) {
      acc.fill(0);
      gatherInto(acc, xs, plane * inPlane, ones, 0, walk);
      for (let o = 0; o < outPlane; o++) acc[o] /= counts[o];
      y.data.set(acc, plane * outPlane);
    }
    return [y];
  },
};

/** GlobalAveragePool or GlobalMaxPool: `reduce` folds each channel's plane to one value. */
function globalPool(reduce: (x: TensorData, start: number, size: number) => number): HostOp {
  const shapeOf = (x: readonly number[]) => x.map((d, i) => (i < 2 ? d : 1));
  return {
    attrs: [],
    infer: (ins) => [{ dtype: ins[0]!.dtype, shape: shapeOf(ins[0]!.shape) }],
    run(ins, _, out) {
      const x = ins[0]!, plane = sizeOf(x.shape.slice(2));
      const y = output(x.dtype, shapeOf(x.shape), out?.[0]);
      for (let p = 0; p < y.data.length; p++) y.data[p] = reduce(x.data, p * plane, plane);
      return [y];
    },
  };
}

/** y = x · a[c] + b[c] on channel c of every sample (channels on axis 1, the spatial axes after). */
function perChannel(x: HostTensor, y: HostTensor, a: ArrayLike<number>, b: ArrayLike<number>): void {
  const channels = x.shape[1] ?? 1, plane = sizeOf(x.shape.slice(2));
  const xs = x.data, ys = y.data;
  for (let start = 0, c = 0; start < xs.length; start += plane, c = (c + 1) % channels) {
    const scale = a[c], shift = b[c];
    for (let i = start; i < start + plane; i++) ys[i] = xs[i] * scale + shift;
  }
}

/**
 * Normalizes each sample's channels in `groups` groups (each group's elements to mean 0 and
 * variance 1, in float64), then scales and shifts each channel: InstanceNormalization is one
 * channel per group.
 */
function normalizeGroups(x: HostTensor, y: HostTensor, groups: number, eps: number, scale: ArrayLike<number>, bias: ArrayLike<number>): void {
  const channels = x.shape[1], plane = sizeOf(x.shape.slice(2)), perGroup = channels / groups, block = perGroup * plane;
  const xs = x.data, ys = y.data;
  for (let start = 0, g = 0; start < xs.length; start += block, g = (g + 1) % groups) {
    let mean = 0;
    for (let i = start; i < start + block; i++) mean += xs[i];
    mean /= block;
    let variance = 0;
    for (let i = start; i < start + block; i++) variance += (xs[i] - mean) ** 2;
    const inv = 1 / Math.sqrt(variance / block + eps);
    for (let c = g * perGroup, at = start; c < (g + 1) * perGroup; c++, at += plane) {
      const a = inv * scale[c], b = bias[c] - mean * a;
      for (let i = at; i < at + plane; i++) ys[i] = xs[i] * a + b;
    }
  }
}

/** BatchNormalization's training form (updated statistics as outputs) is refused: inference only. */
function inferenceOnly(node: OnnxNode): void {
  if (num(node, "training_mode", 0) !== 0 || node.outputs.slice(1).some((o) => o)) {
    fail(node, "training mode (training_mode=1, or running statistics as outputs) is not supported: export the model for inference");
  }
}

const NORMALIZATIONS: Record<string, HostOp> = {
  BatchNormalization: {
    attrs: ["epsilon", "momentum", "training_mode"],
    infer(ins, node) {
      inferenceOnly(node);
      return [{ dtype: ins[0]!.dtype, shape: [...ins[0]!.shape] }];
    },
    run(ins, node, out) {
      inferenceOnly(node);
      const [x, scale, bias, mean, variance] = ins as HostTensor[];
      const eps = num(node, "epsilon", 1e-5);
      const a = Array.from(scale.data, (s, c) => s / Math.sqrt(variance.data[c] + eps));
      const b = Array.from(bias.data, (v, c) => v - mean.data[c] * a[c]);
      const y = output(x.dtype, x.shape, out?.[0]);
      perChannel(x, y, a, b);
      return [y];
    },
  },
  InstanceNormalization: {
    attrs: ["epsilon"],
    infer: (ins) => [{ dtype: ins[0]!.dtype, shape: [...ins[0]!.shape] }],
    run(ins, node, out) {
      const [x, scale, bias] = ins as HostTensor[];
      const y = output(x.dtype, x.shape, out?.[0]);
      normalizeGroups(x, y, x.shape[1], num(node, "epsilon", 1e-5), scale.data, bias.data);
      return [y];
    },
  },
  GroupNormalization: {
    attrs: ["epsilon", "num_groups", "stash_type"],
    infer: (ins) => [{ dtype: ins[0]!.dtype, shape: [...ins[0]!.shape] }],
    run(ins, node, out) {
      const [x, scale, bias] = ins as HostTensor[];
      const groups = num(node, "num_groups", 0), channels = x.shape[1];
      if (!(groups > 0 && channels % groups === 0)) fail(node, `${channels} channels do not split into num_groups ${groups}`);
      // opset 18 scaled per group, opset 21 per channel
      const perGroup = scale.data.length === groups && channels !== groups;
      const expand = (t: HostTensor) => (perGroup ? Array.from({ length: channels }, (_, c) => t.data[Math.floor(c / (channels / groups))]) : t.data);
      const y = output(x.dtype, x.shape, out?.[0]);
      normalizeGroups(x, y, groups, num(node, "epsilon", 1e-5), expand(scale), expand(bias));
      return [y];
    },
  },
};

/** Convolutions, pooling and normalizations over channels. */
export const NN_OPS: Record<string, HostOp> = {
  Conv: convolution(false),
  ConvTranspose: convolution(true),
  MaxPool: MAX_POOL,
  AveragePool: AVERAGE_POOL,
  GlobalAveragePool: globalPool((x, start, size) => {
    let sum = 0;
    for (let i = start; i < start + size; i++) sum += x[i];
    return sum / size;
  }),
  GlobalMaxPool: globalPool((x, start, size) => {
    let max = -Infinity;
    for (let i = start; i < start + size; i++) if (x[i] > max) max = x[i];
    return max;
  }),
  ...NORMALIZATIONS,
};
