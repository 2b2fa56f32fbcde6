// Real exporter output as hubs serve it: a file's form from its name (model.onnx, model_int8.onnx,
// model_q4.onnx, model_fp16.onnx: what the export scripts in shared/models/real-exports write),
// and how close jitzoo must come to onnxruntime-web on each form. The benches and the tests share it.
import * as ort from "onnxruntime-web";
import { TOLERANCE, type OutputTensor, type Step, type TensorLike } from "@jitzoo/client/internal";

/** A file's numeric form. */
export type Form = "fp32" | "fp16" | "int8" | "q4";

export const formOf = (file: string): Form => (/_int8\.onnx$/.test(file) ? "int8" : /_q4\.onnx$/.test(file) ? "q4" : /_fp16\.onnx$/.test(file) ? "fp16" : "fp32");

/** The float32 file a quantized or half-precision one was converted from. */
export const fp32Sibling = (file: string): string => file.replace(/_(int8|q4|fp16)\.onnx$/, ".onnx");

/**
 * The largest difference from onnxruntime-web's output allowed for a form, given the magnitude of
 * that output: float32 the kernels' own tolerance (TOLERANCE, 1e-4) absolute; int8 and 4-bit 2% of the output's largest magnitude; float16
 * 2e-3 of it.
 */
export function allowed(form: Form, largest: number): number {
  return form === "fp32" ? TOLERANCE : relativeTolerance(form) * largest;
}

/** The same as a share of the output's largest magnitude (float32: the kernels' own relative tolerance). */
export const relativeTolerance = (form: Form): number => (form === "fp32" ? TOLERANCE : form === "fp16" ? 2e-3 : 0.02);

/**
 * The graph optimizations onnxruntime-web runs a form with: all of them, except on float16 files,
 * where its "all" level rewrites casts so that values skip float16's rounding here and there (on
 * the Llama file its output then moves 1.1% of its largest magnitude away from its own output at
 * "extended", and from the float32 file's); "extended" keeps ONNX's per-node float16 semantics.
 */
export const ortLevel = (form: Form): "extended" | "all" => (form === "fp16" ? "extended" : "all");

/** Feeds as onnxruntime-web's tensors (float32, or int64 as BigInt64Array). */
export function toOrt(feeds: Readonly<Record<string, TensorLike>>): Record<string, ort.Tensor> {
  return Object.fromEntries(Object.entries(feeds).map(([name, t]) => {
    const data = t.data as Float32Array | BigInt64Array;
    return [name, new ort.Tensor(data instanceof Float32Array ? "float32" : "int64", data, [...t.dims])];
  }));
}

/** A generation step of onnxruntime-web (generate.ts's Step): the feeds as its tensors, its float outputs as the SDK's. */
export function ortStep(session: ort.InferenceSession): Step {
  return async (feeds) => {
    const out = await session.run(toOrt(feeds));
    return Object.fromEntries(Object.entries(out).map(([name, v]) => [name, { type: "float32", dims: [...v.dims], data: v.data as Float32Array } as OutputTensor]));
  };
}

/** max |a − b| and max |b|. */
export function distance(a: ArrayLike<number>, b: ArrayLike<number>): { worst: number; largest: number } {
  if (a.length !== b.length) return { worst: Infinity, largest: 0 };
  let worst = 0, largest = 0;
  for (let i = 0; i < b.length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : e;
    largest = Math.max(largest, Math.abs(b[i]));
  }
  return { worst, largest };
}
