import { TensorProto_DataType as DataType } from "../../gen/onnx/onnx_pb.js";
import type { OnnxNode } from "../onnx.js";
import { axisOf, roundHalfEven, stridesOf, type DType, type HostTensor } from "../tensor.js";
import { fail, num, output, same, type HostOp } from "./op.js";

/** Linear quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked) and DynamicQuantizeLinear. */

const RANGE: Partial<Record<DType, [number, number]>> = { uint8: [0, 255], int8: [-128, 127] };

/**
 * For each element of `x`, the index of its scale (and zero point): one for the whole tensor,
 * one per index along `axis` (a 1-D scale), or one per block of `block_size` along `axis`
 * (a scale of x's rank).
 */
function scaleIndex(x: HostTensor, scale: HostTensor, node: OnnxNode): (i: number) => number {
  if (scale.data.length === 1) return () => 0;
  const axis = axisOf(num(node, "axis", 1), x.shape.length);
  const block = num(node, "block_size", 0);
  const strides = stridesOf(x.shape);
  if (block === 0) {
    if (scale.shape.length !== 1 || scale.shape[0] !== x.shape[axis]) fail(node, `scale [${scale.shape}] is not one per index of axis ${axis} of [${x.shape}]`);
    return (i) => Math.floor(i / strides[axis]) % x.shape[axis];
  }
  const scaleStrides = stridesOf(scale.shape);
  return (i) => {
    let at = 0;
    for (let a = 0; a < x.shape.length; a++) {
      const index = Math.floor(i / strides[a]) % x.shape[a];
      at += (a === axis ? Math.floor(index / block) : index) * scaleStrides[a];
    }
    return at;
  };
}

/** The type QuantizeLinear writes: its zero point's, `output_dtype`'s, or uint8. */
function quantizedType(node: OnnxNode, zero?: { dtype: DType }): DType {
  const asked = num(node, "output_dtype", 0);
  const dtype = zero?.dtype ?? (asked === DataType.INT8 ? "int8" : asked === 0 || asked === DataType.UINT8 ? "uint8" : undefined);
  if (!dtype || !RANGE[dtype]) fail(node, `quantizing to ${zero?.dtype ?? DataType[asked]} is not supported (int8, uint8)`);
  return dtype;
}

/** The smallest and largest value, with 0 in the range (so that 0 is exact): one pass over float32. */
function rangeWithZero(x: Float32Array): [number, number] {
  let min = 0, max = 0;
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min, max];
}

/**
 * Every activation of a dynamically quantized MatMul, at every inference: `x / scale` rounded to
 * float32 (onnxruntime divides in float32), to nearest with ties to even, plus the zero point,
 * saturated to 0..255. One loop over typed arrays, the rounding written out.
 */
function quantizeToUint8(x: Float32Array, y: Uint8Array, scale: number, zero: number): void {
  for (let i = 0; i < x.length; i++) {
    // adding and taking away 1.5 · 2^52 leaves a double rounded to an integer, ties to even
    const r = (Math.fround(x[i] / scale) + ROUNDING) - ROUNDING + zero;
    y[i] = r < 0 ? 0 : r > 255 ? 255 : r;
  }
}

const ROUNDING = 6755399441055744;

/** A per-tensor dequantization of uint8 values (every int8 MatMul's activation): one typed loop. */
function dequantizeUint8(x: Uint8Array, y: Float32Array, scale: number, zero: number): void {
  for (let i = 0; i < x.length; i++) y[i] = (x[i] - zero) * scale;
}

export const QUANT_OPS: Record<string, HostOp> = {
  QuantizeLinear: {
    attrs: ["axis", "saturate", "block_size", "output_dtype"],
    infer: (ins, node) => same(quantizedType(node, ins[2]), ins[0]!.shape),
    run(ins, node, out) {
      const [x, scale, zero] = ins as [HostTensor, HostTensor, HostTensor | undefined];
      const dtype = quantizedType(node, zero);
      const [lo, hi] = RANGE[dtype]!;
      const y = output(dtype, x.shape, out?.[0]);
      const at = scaleIndex(x, scale, node);
      // the quotient rounded to float32 first, as onnxruntime and ONNX's reference divide in float32
      for (let i = 0; i < x.data.length; i++) {
        const s = at(i);
        y.data[i] = Math.min(Math.max(roundHalfEven(Math.fround(x.data[i] / scale.data[s])) + (zero ? zero.data[s] : 0), lo), hi);
      }
      return [y];
    },
  },
  DequantizeLinear: {
    attrs: ["axis", "block_size"],
    infer: (ins) => same("float32", ins[0]!.shape),
    run(ins, node, out) {
      const [x, scale, zero] = ins as [HostTensor, HostTensor, HostTensor | undefined];
      const y = output("float32", x.shape, out?.[0]);
      if (scale.data.length === 1 && x.data instanceof Uint8Array && y.data instanceof Float32Array) { // per tensor
        dequantizeUint8(x.data, y.data, scale.data[0], zero ? zero.data[0] : 0);
        return [y];
      }
      const at = scaleIndex(x, scale, node);
      for (let i = 0; i < x.data.length; i++) {
        const s = at(i);
        y.data[i] = (x.data[i] - (zero ? zero.data[s] : 0)) * scale.data[s];
      }
      return [y];
    },
  },
  DynamicQuantizeLinear: {
    attrs: [],
    infer: (ins) => [{ dtype: "uint8", shape: [...ins[0]!.shape] }, { dtype: "float32", shape: [] }, { dtype: "uint8", shape: [] }],
    run(ins, _node, out) {
      const x = ins[0]!;
      const [min, max] = rangeWithZero(x.data as Float32Array);
      const scale = Math.fround((max - min) / 255);
      const zero = scale === 0 ? 0 : Math.min(Math.max(roundHalfEven(-min / scale), 0), 255);
      const y = output("uint8", x.shape, out?.[0]);
      if (scale === 0) y.data.fill(zero);
      else quantizeToUint8(x.data as Float32Array, y.data as Uint8Array, scale, zero);
      const s = output("float32", [], out?.[1]), z = output("uint8", [], out?.[2]);
      s.data[0] = scale;
      z.data[0] = zero;
      return [y, s, z];
    },
  },
};
