import type { AttrValue, OnnxNode } from "../onnx.js";
import { axisOf, sizeOf, stridesOf, type HostTensor } from "../tensor.js";
import {
  around, constInts, fail, gatherStrided, list, num, optionalInts, output, same, scalarInput, str, transposeTo, view,
  type HostOp, type ValueMeta,
} from "./op.js";

/** Data movement and shape arithmetic: views, Transpose, Concat, Slice, Split, Gather, Expand, Tile, Pad, Range, constants. */

type Source = ValueMeta | HostTensor | undefined;

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
  const result = out.map((d) => (d === -1 ? (known === 0 ? 0 : size / known) : d));
  if (sizeOf(result) !== size || result.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`cannot reshape [${shape}] to [${target}]`);
  return result;
}

function squeezeShape(shape: readonly number[], ins: readonly Source[], node: OnnxNode): number[] {
  const given = list(node, "axes") ?? optionalInts(ins[1], node, "axes");
  const axes = new Set(given ? given.map((a) => axisOf(a, shape.length)) : shape.flatMap((d, i) => (d === 1 ? [i] : [])));
  return shape.filter((_, i) => !axes.has(i));
}

function flattenShape(shape: readonly number[], node: OnnxNode): number[] {
  const axis = num(node, "axis", 1);
  const a = axis < 0 ? axis + shape.length : axis;
  if (!(a >= 0 && a <= shape.length)) fail(node, `axis ${axis} is out of range for rank ${shape.length}`);
  return [sizeOf(shape.slice(0, a)), sizeOf(shape.slice(a))];
}

/** An op whose output is its input's elements under another shape. */
function viewOp(attrs: readonly string[], shapeOf: (x: readonly number[], ins: readonly Source[], node: OnnxNode) => number[]): HostOp {
  return {
    attrs,
    infer: (ins, node) => same(ins[0]!.dtype, shapeOf(ins[0]!.shape, ins, node)),
    run: (ins, node, out) => [view(ins[0]!, shapeOf(ins[0]!.shape, ins, node), out?.[0])],
  };
}

interface SliceSpec { starts: number[]; steps: number[]; shape: number[] }

function sliceSpec(shape: readonly number[], ins: readonly Source[], node: OnnxNode): SliceSpec {
  const starts = constInts(ins[1], node, "starts"), ends = constInts(ins[2], node, "ends");
  const axes = (optionalInts(ins[3], node, "axes") ?? starts.map((_, i) => i)).map((a) => axisOf(a, shape.length));
  const steps = optionalInts(ins[4], node, "steps") ?? starts.map(() => 1);
  const spec: SliceSpec = { starts: shape.map(() => 0), steps: shape.map(() => 1), shape: [...shape] };
  axes.forEach((axis, i) => {
    const dim = shape[axis], step = steps[i];
    if (step === 0) fail(node, "step 0");
    const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v < 0 ? v + dim : v, lo), hi);
    const start = step > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], -1, dim - 1);
    const end = step > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
    spec.starts[axis] = start;
    spec.steps[axis] = step;
    spec.shape[axis] = Math.max(0, Math.ceil((end - start) / step));
  });
  return spec;
}

const permOf = (node: OnnxNode, rank: number) => list(node, "perm") ?? [...Array(rank).keys()].reverse();
const clampAxis = (a: number, rank: number) => Math.min(Math.max(a < 0 ? a + rank : a, 0), rank);

/** The sizes Split cuts along its axis: the `split` input (or attribute before 13), `num_outputs` (18), or equal parts. */
function splitSizes(shape: readonly number[], ins: readonly Source[], node: OnnxNode): { axis: number; sizes: number[] } {
  const axis = axisOf(num(node, "axis", 0), shape.length);
  const dim = shape[axis];
  const given = list(node, "split") ?? optionalInts(ins[1], node, "split");
  if (given) {
    if (given.reduce((a, b) => a + b, 0) !== dim) fail(node, `split sizes [${given}] do not add up to ${dim}`);
    return { axis, sizes: given };
  }
  const parts = num(node, "num_outputs", node.outputs.length);
  const each = Math.ceil(dim / parts);
  return { axis, sizes: Array.from({ length: parts }, (_, i) => Math.max(0, Math.min(each, dim - i * each))) };
}

/** numpy's broadcast of a shape to a target (Expand's rule: either side may be 1). */
function expandShape(shape: readonly number[], target: readonly number[], node: OnnxNode): number[] {
  const rank = Math.max(shape.length, target.length);
  return Array.from({ length: rank }, (_, i) => {
    const a = shape[shape.length - rank + i] ?? 1, b = target[target.length - rank + i] ?? 1;
    if (a !== b && a !== 1 && b !== 1) fail(node, `[${shape}] cannot expand to [${target}]`);
    return a === 1 ? b : a;
  });
}

/** Pads per axis (begins then ends, over every axis once `axes` is applied). */
function padsOf(rank: number, ins: readonly Source[], node: OnnxNode): number[] {
  const pads = list(node, "pads") ?? constInts(ins[1], node, "pads");
  const axes = optionalInts(ins[3], node, "axes")?.map((a) => axisOf(a, rank)) ?? [...Array(rank).keys()];
  if (pads.length !== 2 * axes.length) fail(node, `${pads.length} pads for ${axes.length} axes`);
  const all = new Array<number>(2 * rank).fill(0);
  axes.forEach((a, i) => { all[a] = pads[i]; all[rank + a] = pads[axes.length + i]; });
  return all;
}

function constantOf(node: OnnxNode): HostTensor {
  const a = node.attrs;
  const v: AttrValue | undefined = a.value ?? a.value_float ?? a.value_floats ?? a.value_int ?? a.value_ints;
  if (v === undefined) fail(node, "no value (string constants are not supported)");
  if (typeof v === "object" && "data" in v) return v;
  const floats = a.value_float !== undefined || a.value_floats !== undefined;
  const values = Array.isArray(v) ? v : [v as number];
  return { dtype: floats ? "float32" : "int64", shape: Array.isArray(v) ? [values.length] : [], data: floats ? Float32Array.from(values) : Float64Array.from(values) };
}

export const SHAPE_OPS: Record<string, HostOp> = {
  Reshape: viewOp(["allowzero"], (x, ins, node) => reshapeShape(x, constInts(ins[1], node, "the target shape"), num(node, "allowzero", 0) === 1)),
  Unsqueeze: viewOp(["axes"], (x, ins, node) => unsqueezeShape(x, list(node, "axes") ?? constInts(ins[1], node, "axes"))),
  Squeeze: viewOp(["axes"], squeezeShape),
  Flatten: viewOp(["axis"], (x, _, node) => flattenShape(x, node)),
  Shape: {
    attrs: ["start", "end"],
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
  Size: {
    attrs: [],
    infer: () => same("int64", []),
    run: (ins) => [{ dtype: "int64", shape: [], data: Float64Array.of(sizeOf(ins[0]!.shape)) }],
  },
  Transpose: {
    attrs: ["perm"],
    infer: (ins, node) => same(ins[0]!.dtype, permOf(node, ins[0]!.shape.length).map((p) => ins[0]!.shape[p])),
    run: (ins, node, out) => [transposeTo(ins[0]!, permOf(node, ins[0]!.shape.length), out?.[0])],
  },
  Concat: {
    attrs: ["axis"],
    infer(ins, node) {
      const axis = axisOf(num(node, "axis", 0), ins[0]!.shape.length);
      const shape = [...ins[0]!.shape];
      shape[axis] = ins.reduce((s, i) => s + i!.shape[axis], 0);
      return same(ins[0]!.dtype, shape);
    },
    run(ins, node, out) {
      const [{ shape }] = SHAPE_OPS.Concat.infer(ins, node);
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
    attrs: [],
    infer: (ins, node) => same(ins[0]!.dtype, sliceSpec(ins[0]!.shape, ins, node).shape),
    run(ins, node, out) {
      const x = ins[0]!;
      const spec = sliceSpec(x.shape, ins, node);
      return [gatherStrided(x, spec.starts, spec.steps, spec.shape, stridesOf(x.shape), out?.[0])];
    },
  },
  Split: {
    attrs: ["axis", "split", "num_outputs"],
    infer(ins, node) {
      const { axis, sizes } = splitSizes(ins[0]!.shape, ins, node);
      return sizes.map((s) => ({ dtype: ins[0]!.dtype, shape: ins[0]!.shape.map((d, i) => (i === axis ? s : d)) }));
    },
    run(ins, node, out) {
      const x = ins[0]!;
      const { axis, sizes } = splitSizes(x.shape, ins, node);
      const strides = stridesOf(x.shape);
      let at = 0;
      return sizes.map((s, i) => {
        const starts = x.shape.map((_, a) => (a === axis ? at : 0));
        at += s;
        return gatherStrided(x, starts, x.shape.map(() => 1), x.shape.map((d, a) => (a === axis ? s : d)), strides, out?.[i]);
      });
    },
  },
  Gather: {
    attrs: ["axis"],
    infer(ins, node) {
      const [data, indices] = [ins[0]!.shape, ins[1]!.shape];
      const axis = axisOf(num(node, "axis", 0), data.length);
      return same(ins[0]!.dtype, [...data.slice(0, axis), ...indices, ...data.slice(axis + 1)]);
    },
    run(ins, node, out) {
      const [x, indices] = ins as HostTensor[];
      const axis = axisOf(num(node, "axis", 0), x.shape.length);
      const { outer, dim, inner } = around(x.shape, axis);
      const y = output(x.dtype, [...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)], out?.[0]);
      const count = indices.data.length;
      for (let o = 0; o < outer; o++) {
        for (let i = 0; i < count; i++) {
          let at = indices.data[i];
          if (at < 0) at += dim;
          if (!(at >= 0 && at < dim)) fail(node, `index ${indices.data[i]} is out of range [0, ${dim})`);
          const src = (o * dim + at) * inner, dst = (o * count + i) * inner;
          y.data.set(x.data.subarray(src, src + inner), dst);
        }
      }
      return [y];
    },
  },
  Expand: {
    attrs: [],
    infer: (ins, node) => same(ins[0]!.dtype, expandShape(ins[0]!.shape, constInts(ins[1], node, "the shape"), node)),
    run(ins, node, out) {
      const x = ins[0]!;
      const shape = expandShape(x.shape, constInts(ins[1], node, "the shape"), node);
      const padded = [...Array(shape.length - x.shape.length).fill(1), ...x.shape];
      const own = stridesOf(padded);
      return [gatherStrided(x, shape.map(() => 0), shape.map(() => 1), shape, padded.map((d, i) => (d === 1 ? 0 : own[i])), out?.[0])];
    },
  },
  Tile: {
    attrs: [],
    infer: (ins, node) => same(ins[0]!.dtype, ins[0]!.shape.map((d, i) => d * constInts(ins[1], node, "repeats")[i])),
    run(ins, node, out) {
      const x = ins[0]!;
      const shape = x.shape.map((d, i) => d * constInts(ins[1], node, "repeats")[i]);
      const y = output(x.dtype, shape, out?.[0]);
      const src = stridesOf(x.shape), rank = shape.length;
      const index = new Array<number>(rank).fill(0);
      for (let o = 0; o < y.data.length; o++) {
        let at = 0;
        for (let a = 0; a < rank; a++) at += (index[a] % x.shape[a]) * src[a];
        y.data[o] = x.data[at];
        for (let a = rank - 1; a >= 0 && ++index[a] === shape[a]; a--) index[a] = 0;
      }
      return [y];
    },
  },
  Pad: {
    attrs: ["mode", "pads", "value"],
    infer(ins, node) {
      const shape = ins[0]!.shape, pads = padsOf(shape.length, ins, node);
      return same(ins[0]!.dtype, shape.map((d, i) => d + pads[i] + pads[shape.length + i]));
    },
    run(ins, node, out) {
      const x = ins[0]!, rank = x.shape.length, pads = padsOf(rank, ins, node);
      const mode = str(node, "mode", "constant");
      const fill = num(node, "value", scalarInput(ins[2], node, "constant_value", 0));
      const shape = x.shape.map((d, i) => d + pads[i] + pads[rank + i]);
      const y = output(x.dtype, shape, out?.[0]);
      const src = stridesOf(x.shape);
      const index = new Array<number>(rank).fill(0);
      for (let o = 0; o < y.data.length; o++) {
        let at = 0, inside = true;
        for (let a = 0; a < rank; a++) {
          let i = index[a] - pads[a];
          const d = x.shape[a];
          if (i < 0 || i >= d) {
            if (mode === "constant") inside = false;
            else if (mode === "edge") i = Math.min(Math.max(i, 0), d - 1);
            else if (mode === "reflect") { const p = 2 * (d - 1) || 1; i = ((i % p) + p) % p; if (i >= d) i = p - i; }
            else if (mode === "wrap") i = ((i % d) + d) % d;
            else fail(node, `mode ${mode} is not supported`);
          }
          at += i * src[a];
        }
        y.data[o] = inside ? x.data[at] : fill;
        for (let a = rank - 1; a >= 0 && ++index[a] === shape[a]; a--) index[a] = 0;
      }
      return [y];
    },
  },
  Range: {
    attrs: [],
    infer(ins, node) {
      const [start, limit, delta] = ins.map((i, k) => scalarInput(i, node, ["start", "limit", "delta"][k], 0));
      return same(ins[0]!.dtype, [Math.max(Math.ceil((limit - start) / delta), 0)]);
    },
    run(ins, node, out) {
      const [start, , delta] = ins.map((i, k) => scalarInput(i, node, ["start", "limit", "delta"][k], 0));
      const [{ dtype, shape }] = SHAPE_OPS.Range.infer(ins, node);
      const y = output(dtype, shape, out?.[0]);
      for (let i = 0; i < y.data.length; i++) y.data[i] = start + i * delta;
      return [y];
    },
  },
  ConstantOfShape: {
    attrs: ["value"],
    infer: (ins, node) => {
      const value = node.attrs.value as HostTensor | undefined;
      return same(value?.dtype ?? "float32", constInts(ins[0], node, "the shape"));
    },
    run(ins, node, out) {
      const value = node.attrs.value as HostTensor | undefined;
      const y = output(value?.dtype ?? "float32", constInts(ins[0], node, "the shape"), out?.[0]);
      y.data.fill(value?.data[0] ?? 0);
      return [y];
    },
  },
  Constant: {
    attrs: ["value", "value_float", "value_floats", "value_int", "value_ints"],
    infer: (_, node) => { const t = constantOf(node); return same(t.dtype, t.shape); },
    run: (_, node) => [constantOf(node)],
  },
};

/** Ops whose output is their input's elements unchanged, under another shape. */
export const VIEW_OPS: ReadonlySet<string> = new Set(["Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"]);
