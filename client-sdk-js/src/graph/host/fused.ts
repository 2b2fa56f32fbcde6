import { axisOf, sizeOf, type HostTensor } from "../tensor.js";
import { fail, num, output, same, scalarInput, type HostOp } from "./op.js";

/**
 * Ops that stand for a pattern exporters write out node by node, each one pass over its rows
 * instead of a tensor per node (the fuser makes them: `model/fuse.ts`):
 * - `SimplifiedLayerNormalization`, RMSNorm (Llama, Qwen2, T5): onnxruntime's own op (which it
 *   keeps in the default domain), so the files its optimizer writes load too;
 * - `jitzoo.RotateHalf`, rotary embeddings as Hugging Face writes them:
 *   `x·cos + concat(−x₂, x₁)·sin`, x₁ and x₂ the halves of the last axis;
 * - `jitzoo.ReplaceNaN`, an attention softmax's guard `Where(IsNaN(p), value, p)`.
 * The `jitzoo` domain is the engine's own: the importer refuses it in a file.
 */
export const FUSED_OPS: Record<string, HostOp> = {
  "SimplifiedLayerNormalization": {
    attrs: ["axis", "epsilon", "stash_type"],
    infer(ins, node) {
      const shape = ins[0]!.shape;
      const axis = axisOf(num(node, "axis", -1), shape.length);
      return [{ dtype: "float32", shape: [...shape] }, ...node.outputs.slice(1).map(() => ({ dtype: "float32" as const, shape: shape.map((d, i) => (i < axis ? d : 1)) }))];
    },
    run(ins, node, out) {
      const [x, scale] = ins as HostTensor[];
      const axis = axisOf(num(node, "axis", -1), x.shape.length);
      const cols = sizeOf(x.shape.slice(axis));
      if (scale.data.length !== cols) fail(node, `scale has ${scale.data.length} elements, the normalized axes ${cols}`);
      const y = output("float32", x.shape, out?.[0]);
      // output 1 (the rows' 1 / sqrt(mean(x²) + eps)) only when the graph reads it
      const inv = node.outputs[1] ? output("float32", x.shape.map((d, i) => (i < axis ? d : 1)), out?.[1]) : undefined;
      rmsNorm(x.data as Float32Array, scale.data as Float32Array, y.data as Float32Array, cols, num(node, "epsilon", 1e-5), inv?.data as Float32Array | undefined);
      return inv ? [y, inv] : [y];
    },
  },
  "jitzoo.RotateHalf": {
    attrs: [],
    infer: (ins) => same("float32", ins[0]!.shape),
    run(ins, node, out) {
      const [x, cos, sin] = ins as HostTensor[];
      if (!rotates(x.shape, cos.shape, sin.shape)) fail(node, `cos [${cos.shape}] and sin [${sin.shape}] do not repeat over x [${x.shape}]`);
      const y = output("float32", x.shape, out?.[0]);
      rotateHalf(x.data as Float32Array, cos.data as Float32Array, sin.data as Float32Array, y.data as Float32Array, x.shape.at(-1)!);
      return [y];
    },
  },
  "jitzoo.ReplaceNaN": {
    attrs: [],
    infer: (ins) => same("float32", ins[0]!.shape),
    run(ins, node, out) {
      const x = ins[0]!.data as Float32Array, value = scalarInput(ins[1], node, "the value", 0);
      const y = output("float32", ins[0]!.shape, out?.[0]), d = y.data as Float32Array;
      // a copy, then a scan that writes only NaNs (there are none but in a fully masked row): about 3x faster than writing each element
      if (d !== x) d.set(x);
      for (let i = 0; i < d.length; i++) if (d[i] !== d[i]) d[i] = value; // only NaN differs from itself
      return [y];
    },
  },
};

/** Whether RotateHalf applies: x's last axis even, cos and sin of one size that repeats whole rows of x over x. */
export function rotates(x: readonly number[], cos: readonly number[], sin: readonly number[]): boolean {
  const cols = x.at(-1)!, period = sizeOf(cos);
  return cols % 2 === 0 && period === sizeOf(sin) && period % cols === 0 && sizeOf(x) % period === 0;
}

/** y = x / sqrt(mean(x²) + eps) · scale over rows of `cols`; the rows' 1 / sqrt(...) into `inv` when given. */
function rmsNorm(x: Float32Array, scale: Float32Array, y: Float32Array, cols: number, eps: number, inv?: Float32Array): void {
  for (let at = 0, row = 0; at < x.length; at += cols, row++) {
    let squares = 0;
    for (let j = 0; j < cols; j++) squares += x[at + j] * x[at + j];
    const r = 1 / Math.sqrt(squares / cols + eps);
    for (let j = 0; j < cols; j++) y[at + j] = x[at + j] * r * scale[j];
    if (inv) inv[row] = r;
  }
}

/** y = x·cos + rotate_half(x)·sin, cos and sin repeating every `cos.length` elements of x (over batch and heads). */
function rotateHalf(x: Float32Array, cos: Float32Array, sin: Float32Array, y: Float32Array, cols: number): void {
  const half = cols / 2, period = cos.length;
  for (let at = 0, c = 0; at < x.length; at += cols, c = (c + cols) % period) {
    for (let j = 0; j < half; j++) {
      const x1 = x[at + j], x2 = x[at + half + j];
      y[at + j] = x1 * cos[c + j] - x2 * sin[c + j];
      y[at + half + j] = x2 * cos[c + half + j] + x1 * sin[c + half + j];
    }
  }
}
