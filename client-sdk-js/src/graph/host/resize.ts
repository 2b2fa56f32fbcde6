import type { OnnxNode } from "../onnx.js";
import { axisOf, type DType, type HostTensor } from "../tensor.js";
import { around, constant, fail, list, need, num, output, str, type HostOp, type ValueMeta } from "./op.js";

/** Resize (opset 13–19 forms): the output's size per axis, then each axis resampled in turn. */

type Source = ValueMeta | HostTensor | undefined;

/** An optional constant input's numbers; undefined when omitted or empty (Resize's unused roi, scales or sizes). */
function constNumbers(meta: Source, node: OnnxNode, what: string): number[] | undefined {
  if (meta === undefined) return undefined;
  const values = Array.from(need(constant(meta), node, `${what} must be a constant`).data);
  return values.length ? values : undefined;
}

/** What Resize does along each axis: output sizes, the scales that map coordinates, and the region of tf_crop_and_resize. */
interface ResizePlan {
  readonly shape: number[];
  readonly scales: number[];
  /** Per axis the start and end of the region, as fractions of the input. */
  readonly roi: [number, number][];
}

function resizePlan(x: readonly number[], ins: readonly Source[], node: OnnxNode): ResizePlan {
  const rank = x.length;
  const axes = list(node, "axes")?.map((a) => axisOf(a, rank)) ?? [...Array(rank).keys()];
  const scales = constNumbers(ins[2], node, "scales"), sizes = constNumbers(ins[3], node, "sizes");
  const given = sizes ?? scales;
  if (!given || (scales && sizes)) fail(node, "exactly one of scales and sizes must be given");
  if (given.length !== axes.length) fail(node, `${given.length} ${sizes ? "sizes" : "scales"} for ${axes.length} axes`);
  const plan: ResizePlan = { shape: [...x], scales: x.map(() => 1), roi: x.map(() => [0, 1]) };
  if (sizes) {
    const policy = str(node, "keep_aspect_ratio_policy", "stretch");
    const ratios = axes.map((a, i) => sizes[i] / x[a]);
    const kept = policy === "not_larger" ? Math.min(...ratios) : policy === "not_smaller" ? Math.max(...ratios) : undefined;
    if (policy !== "stretch" && kept === undefined) fail(node, `keep_aspect_ratio_policy ${policy} is not supported`);
    axes.forEach((a, i) => {
      plan.scales[a] = kept ?? ratios[i];
      plan.shape[a] = kept === undefined ? sizes[i] : Math.floor(kept * x[a] + 0.5);
    });
  } else {
    axes.forEach((a, i) => { plan.scales[a] = given[i]; plan.shape[a] = Math.floor(given[i] * x[a]); });
  }
  // roi only matters to tf_crop_and_resize
  const roi = str(node, "coordinate_transformation_mode", "half_pixel") === "tf_crop_and_resize" ? constNumbers(ins[1], node, "roi") : undefined;
  if (roi) {
    if (roi.length !== 2 * axes.length) fail(node, `${roi.length} roi values for ${axes.length} axes`);
    axes.forEach((a, i) => { plan.roi[a] = [roi[i], roi[axes.length + i]]; });
  }
  if (plan.shape.some((d) => d < 1)) fail(node, `the output [${plan.shape}] is empty`);
  return plan;
}

/**
 * Where output index `o` of an axis reads in the input, by coordinate_transformation_mode. As in
 * ONNX's reference, `length` is scale × input (not the rounded output size) where the spec says "length_resized".
 */
const SOURCE_COORDINATES: Record<string, (o: number, scale: number, size: number, outSize: number, roi: [number, number]) => number> = {
  half_pixel: (o, scale) => (o + 0.5) / scale - 0.5,
  half_pixel_symmetric: (o, scale, size, outSize) => (size / 2) * (1 - outSize / (scale * size)) + (o + 0.5) / scale - 0.5,
  pytorch_half_pixel: (o, scale, _, outSize) => (outSize > 1 ? (o + 0.5) / scale - 0.5 : 0),
  align_corners: (o, scale, size) => (scale * size === 1 ? 0 : (o * (size - 1)) / (scale * size - 1)),
  asymmetric: (o, scale) => o / scale,
  tf_crop_and_resize(o, scale, size, _, [start, end]) {
    const length = scale * size;
    return (length === 1 ? ((end - start) * (size - 1)) / 2 : (o * (end - start) * (size - 1)) / (length - 1)) + start * (size - 1);
  },
};

/** The interpolation kernels by distance, and how far each reaches. */
const KERNELS: Record<string, { reach: number; weight: (d: number, a: number) => number }> = {
  linear: { reach: 1, weight: (d) => Math.max(0, 1 - Math.abs(d)) },
  cubic: {
    reach: 2,
    weight(d, a) {
      const x = Math.abs(d);
      if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
      return x < 2 ? ((a * x - 5 * a) * x + 8 * a) * x - 4 * a : 0;
    },
  },
};

/** One axis of a resize: each output reads `taps` inputs (`index`) with `weight`s, plus `bias` (the extrapolation value). */
interface AxisResampling {
  readonly taps: number;
  readonly index: Int32Array;
  readonly weight: Float64Array;
  readonly bias: Float64Array;
}

const NEAREST: Record<string, (x: number) => number> = {
  round_prefer_floor: (x) => (x - Math.floor(x) === 0.5 ? Math.floor(x) : Math.round(x)),
  round_prefer_ceil: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
};

/**
 * The taps and weights along one axis. Linear and cubic weigh the neighbours of the source
 * coordinate by kernel distance; with antialias, a downscale stretches the kernel by 1 / scale
 * (more taps) and the weights are normalized; exclude_outside drops taps outside the input and
 * renormalizes; taps past an edge read the edge.
 */
function axisResampling(node: OnnxNode, size: number, outSize: number, scale: number, roi: [number, number]): AxisResampling {
  const mode = str(node, "mode", "nearest"), transform = str(node, "coordinate_transformation_mode", "half_pixel");
  const kernel = KERNELS[mode], nearest = NEAREST[str(node, "nearest_mode", "round_prefer_floor")];
  const sourceCoordinate = SOURCE_COORDINATES[transform];
  if (mode !== "nearest" && !kernel) fail(node, `mode ${mode} is not supported`);
  if (!nearest) fail(node, `nearest_mode ${str(node, "nearest_mode", "")} is not supported`);
  if (!sourceCoordinate) fail(node, `coordinate_transformation_mode ${transform} is not supported`);
  const stretch = kernel && num(node, "antialias", 0) ? Math.min(scale, 1) : 1;
  const taps = kernel ? 2 * Math.ceil(kernel.reach / stretch) : 1;
  const a = num(node, "cubic_coeff_a", -0.75), excludeOutside = num(node, "exclude_outside", 0) === 1;
  const extrapolation = num(node, "extrapolation_value", 0);
  const plan: AxisResampling = { taps, index: new Int32Array(outSize * taps), weight: new Float64Array(outSize * taps), bias: new Float64Array(outSize) };
  const clamp = (i: number) => Math.min(Math.max(i, 0), size - 1);
  for (let o = 0; o < outSize; o++) {
    const x = sourceCoordinate(o, scale, size, outSize, roi);
    if (transform === "tf_crop_and_resize" && (x < 0 || x > size - 1)) {
      plan.bias[o] = extrapolation; // weights stay 0
    } else if (!kernel) {
      plan.index[o] = clamp(nearest(x));
      plan.weight[o] = 1;
    } else {
      const first = Math.floor(x) - taps / 2 + 1;
      let sum = 0;
      for (let t = 0; t < taps; t++) {
        const j = first + t;
        const w = excludeOutside && (j < 0 || j >= size) ? 0 : kernel.weight((j - x) * stretch, a);
        plan.index[o * taps + t] = clamp(j);
        plan.weight[o * taps + t] = w;
        sum += w;
      }
      if (sum !== 0) for (let t = 0; t < taps; t++) plan.weight[o * taps + t] /= sum;
    }
  }
  return plan;
}

/** Resamples `src` (of `shape`) along one axis. */
function resampleAxis(src: Float64Array, shape: readonly number[], axis: number, outSize: number, r: AxisResampling): Float64Array {
  const { outer, dim, inner } = around(shape, axis);
  const dst = new Float64Array(outer * outSize * inner);
  for (let b = 0; b < outer; b++) {
    for (let o = 0; o < outSize; o++) {
      const row = (b * outSize + o) * inner;
      dst.fill(r.bias[o], row, row + inner);
      for (let t = o * r.taps; t < (o + 1) * r.taps; t++) {
        const w = r.weight[t];
        if (w === 0) continue;
        const from = (b * dim + r.index[t]) * inner;
        for (let i = 0; i < inner; i++) dst[row + i] += w * src[from + i];
      }
    }
  }
  return dst;
}

/** The range an integer dtype saturates to (Resize rounds and saturates integer outputs). */
const INTEGER_RANGE: Partial<Record<DType, [number, number]>> = { int8: [-128, 127], uint8: [0, 255], int64: [-(2 ** 53), 2 ** 53] };

/** Resize: nearest, N-linear and cubic, every coordinate mode, one axis at a time. */
export const RESIZE: HostOp = {
  attrs: ["antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value",
    "keep_aspect_ratio_policy", "mode", "nearest_mode"],
  infer: (ins, node) => [{ dtype: ins[0]!.dtype, shape: resizePlan(ins[0]!.shape, ins, node).shape }],
  run(ins, node, out) {
    const x = ins[0]!, plan = resizePlan(x.shape, ins, node);
    const cropping = str(node, "coordinate_transformation_mode", "half_pixel") === "tf_crop_and_resize";
    // Resizing is separable: one axis at a time, in float64
    let data: Float64Array = Float64Array.from(x.data);
    const shape = [...x.shape];
    x.shape.forEach((size, axis) => {
      const [start, end] = plan.roi[axis];
      if (plan.shape[axis] === size && plan.scales[axis] === 1 && (!cropping || (start === 0 && end === 1))) return; // identity
      data = resampleAxis(data, shape, axis, plan.shape[axis], axisResampling(node, size, plan.shape[axis], plan.scales[axis], plan.roi[axis]));
      shape[axis] = plan.shape[axis];
    });
    const y = output(x.dtype, plan.shape, out?.[0]);
    const range = INTEGER_RANGE[x.dtype];
    if (range) for (let i = 0; i < data.length; i++) data[i] = Math.min(Math.max(Math.round(data[i]), range[0]), range[1]);
    y.data.set(data);
    return [y];
  },
};
