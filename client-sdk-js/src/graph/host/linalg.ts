import type { OnnxNode } from "../onnx.js";
import { dequantizeBlocks, dequantizeQ4, dynamicQuantize } from "../../ops.js";
import { broadcastShape, forEachBroadcast, type HostTensor } from "../tensor.js";
import { fail, num, output, same, transposeTo, type HostOp } from "./op.js";

/**
 * Products: MatMul (numpy's rules, 1-D operands included), Gemm, the integer MatMulInteger and
 * onnxruntime's 4-bit `com.microsoft.MatMulNBits`. The engine runs the heavy ones as jitzoo
 * kernels; these are the reference, and the path for the odd shapes no kernel takes.
 */

/** Shapes of a product with numpy's 1-D rules: a 1-D A is a row, a 1-D B a column, and that axis is dropped after. */
function matmulShape(a: readonly number[], b: readonly number[], node: OnnxNode): number[] {
  const a2 = a.length === 1 ? [1, a[0]] : a, b2 = b.length === 1 ? [b[0], 1] : b;
  const [m, k] = a2.slice(-2), [k2, n] = b2.slice(-2);
  if (k !== k2) fail(node, `[${a}] × [${b}]: inner dimensions differ`);
  return [...broadcastShape(a2.slice(0, -2), b2.slice(0, -2)), ...(a.length === 1 ? [] : [m]), ...(b.length === 1 ? [] : [n])];
}

/** A·B in float64 accumulators, under numpy broadcasting of the batch axes. */
function product(a: HostTensor, b: HostTensor, node: OnnxNode, out?: HostTensor, zeroA = 0, zeroB = 0): HostTensor {
  const shape = matmulShape(a.shape, b.shape, node);
  const as = a.shape.length === 1 ? [1, a.shape[0]] : a.shape, bs = b.shape.length === 1 ? [b.shape[0], 1] : b.shape;
  const y = output(a.dtype === "float32" ? "float32" : "int64", shape, out);
  const [m, k] = as.slice(-2), n = bs.at(-1)!;
  const batch = broadcastShape(as.slice(0, -2), bs.slice(0, -2));
  const row = new Float64Array(n);
  forEachBroadcast(batch, [as.slice(0, -2), bs.slice(0, -2)], (t, [ia, ib]) => {
    const ao = ia * m * k, bo = ib * k * n, co = t * m * n;
    for (let i = 0; i < m; i++) {
      row.fill(0);
      for (let p = 0; p < k; p++) {
        const av = a.data[ao + i * k + p] - zeroA, bp = bo + p * n;
        for (let j = 0; j < n; j++) row[j] += av * (b.data[bp + j] - zeroB);
      }
      y.data.set(row, co + i * n);
    }
  });
  return y;
}

/** A zero point that is one number for the whole tensor (per-row or per-column ones are refused). */
function scalarZero(t: HostTensor | undefined, node: OnnxNode, what: string): number {
  if (!t) return 0;
  if (t.data.length !== 1 && !t.data.every((v) => v === t.data[0])) fail(node, `a ${what} zero point per row or column is not supported`);
  return t.data[0] ?? 0;
}

/** MatMulNBits' attributes and the layout of its packed weight. */
export interface NBitsLayout {
  readonly k: number;
  readonly n: number;
  readonly bits: number;
  readonly blockSize: number;
  /** Blocks along K per column. */
  readonly blocks: number;
}

export function nbitsLayout(node: OnnxNode): NBitsLayout {
  const k = num(node, "K", 0), n = num(node, "N", 0), bits = num(node, "bits", 4), blockSize = num(node, "block_size", 0);
  if (bits !== 4 && bits !== 8) fail(node, `${bits}-bit weights are not supported (4 or 8)`);
  if (!(k > 0 && n > 0 && blockSize >= 16 && (blockSize & (blockSize - 1)) === 0)) fail(node, `K ${k}, N ${n}, block_size ${blockSize} are not a valid layout`);
  return { k, n, bits, blockSize, blocks: Math.ceil(k / blockSize) };
}

/** MatMulNBits' weight as float32 `[K, N]` ({@link dequantizeBlocks}), its inputs checked against the node's layout. */
export function dequantizeNBits(node: OnnxNode, packed: HostTensor, scales: HostTensor, zeros?: HostTensor, groups?: HostTensor): Float32Array {
  const { k, n, bits, blockSize, blocks } = nbitsLayout(node);
  if (groups) fail(node, "g_idx (act-order) is not supported");
  const blob = (blockSize * bits) / 8;
  if (packed.data.length !== n * blocks * blob) fail(node, `the packed weight holds ${packed.data.length} bytes, [${n}, ${blocks}, ${blob}] expected`);
  if (scales.data.length !== n * blocks) fail(node, `${scales.data.length} scales, ${n * blocks} expected`);
  return dequantizeBlocks(k, n, bits, blockSize, packed.data, scales.data, zeros?.data);
}

/** The op type of the engine's int8 product node (never in a file: lower.ts writes it). */
export const MATMUL_INT8 = "jitzoo.MatMulInt8";

/** The op type of the engine's 4-bit product node (lower.ts writes it; attributes K and N). */
export const MATMUL_Q4 = "jitzoo.MatMulQ4";

export const LINALG_OPS: Record<string, HostOp> = {
  MatMul: {
    attrs: [],
    infer: (ins, node) => same(ins[0]!.dtype, matmulShape(ins[0]!.shape, ins[1]!.shape, node)),
    run: (ins, node, out) => [product(ins[0]!, ins[1]!, node, out?.[0])],
  },
  Gemm: {
    attrs: ["alpha", "beta", "transA", "transB"],
    infer(ins, node) {
      const [a, b] = [ins[0]!.shape, ins[1]!.shape];
      const m = num(node, "transA", 0) ? a[1] : a[0], n = num(node, "transB", 0) ? b[0] : b[1];
      return same(ins[0]!.dtype, [m, n]);
    },
    run(ins, node, out) {
      const [a0, b0, c] = ins;
      const a = num(node, "transA", 0) ? transposeTo(a0!, [1, 0]) : a0!;
      const b = num(node, "transB", 0) ? transposeTo(b0!, [1, 0]) : b0!;
      const ab = product(a, b, node);
      const alpha = num(node, "alpha", 1), beta = num(node, "beta", 1);
      const y = output(ab.dtype, ab.shape, out?.[0]);
      const n = ab.shape[1];
      for (let i = 0; i < y.data.length; i++) {
        let v = alpha * ab.data[i];
        if (c) {
          // C broadcasts to [M, N] from [], [N], [1, N], [M, 1] or [M, N]
          const [cm, cn] = c.shape.length === 2 ? c.shape : [1, c.shape[0] ?? 1];
          v += beta * c.data[(cm === 1 ? 0 : Math.floor(i / n)) * cn + (cn === 1 ? 0 : i % n)];
        }
        y.data[i] = v;
      }
      return [y];
    },
  },
  MatMulInteger: {
    attrs: [],
    infer: (ins, node) => same("int64", matmulShape(ins[0]!.shape, ins[1]!.shape, node)),
    run(ins, node, out) {
      const [a, b, za, zb] = ins;
      return [product(a!, b!, node, out?.[0], scalarZero(za, node, "A"), scalarZero(zb, node, "B"))];
    },
  },
  /**
   * The engine's own node for onnxruntime's dynamic int8 product (lower.ts): (A float, Wq int8,
   * column scales) → A quantized as DynamicQuantizeLinear does, × Wq, × A's scale · column scale,
   * in float32. It runs as a `matmul_int8` kernel; this is the same product in JavaScript, for
   * where no kernel step covers it.
   */
  [MATMUL_INT8]: {
    attrs: [],
    infer: (ins, node) => same("float32", matmulShape(ins[0]!.shape, ins[1]!.shape, node)),
    run(ins, node, out) {
      const [a, w, columns] = ins;
      const { values, scale } = dynamicQuantize(a!.data as Float32Array);
      const y = product({ dtype: "int64", shape: a!.shape, data: Float64Array.from(values) }, w!, node); // exact integer sums
      const result = output("float32", y.shape, out?.[0]);
      const n = w!.shape[1];
      for (let i = 0; i < y.data.length; i++) result.data[i] = y.data[i] * scale * columns!.data[i % n];
      return [result];
    },
  },
  /**
   * The engine's node for MatMulNBits' 4-bit blocks of 32 (lower.ts): (A float, B packed as the
   * file has it, scales, 4-bit zero points) → A × the dequantized weights. It runs as a
   * `matmul_q4` kernel; this is the same product in JavaScript, for where no kernel step covers it.
   */
  [MATMUL_Q4]: {
    attrs: ["K", "N"],
    infer: (ins, node) => same("float32", [...ins[0]!.shape.slice(0, -1), num(node, "N", 0)]),
    run(ins, node, out) {
      const [a, packed, scales, zeros] = ins;
      const k = num(node, "K", 0), n = num(node, "N", 0);
      const w: HostTensor = { dtype: "float32", shape: [k, n], data: dequantizeQ4(k, n, packed!.data as Uint8Array, scales!.data as Float32Array, zeros!.data as Uint8Array) };
      return [product(a!, w, node, out?.[0])];
    },
  },
  "com.microsoft.MatMulNBits": {
    attrs: ["K", "N", "bits", "block_size", "accuracy_level"],
    infer(ins, node) {
      const { n } = nbitsLayout(node);
      return same("float32", [...ins[0]!.shape.slice(0, -1), n]);
    },
    run(ins, node, out) {
      const [a, packed, scales, zeros, groups, bias] = ins;
      const { k, n } = nbitsLayout(node);
      if (a!.shape.at(-1) !== k) fail(node, `A's last dimension is ${a!.shape.at(-1)}, K is ${k}`);
      const w: HostTensor = { dtype: "float32", shape: [k, n], data: dequantizeNBits(node, packed!, scales!, zeros, groups) };
      const y = product(a!, w, node, out?.[0]);
      if (bias) for (let i = 0; i < y.data.length; i++) y.data[i] += bias.data[i % n];
      return [y];
    },
  },
};
