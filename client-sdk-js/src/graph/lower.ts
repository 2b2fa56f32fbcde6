import { TensorProto_DataType as DataType } from "../gen/onnx/onnx_pb.js";
import { Q4_BLOCK, q4Layout } from "../ops.js";
import { dequantizeNBits, MATMUL_INT8, MATMUL_Q4, nbitsLayout } from "./host/linalg.js";
import type { OnnxGraph, OnnxNode } from "./onnx.js";
import type { HostTensor } from "./tensor.js";

/**
 * Rewrites, once at import, the quantized products of onnxruntime's tools into the products the
 * engine runs as jitzoo kernels:
 * - dynamic int8 (`DynamicQuantizeLinear` → `MatMulInteger` → Cast → Mul by the two scales) with
 *   int8 weights whose zero point is 0 (onnxruntime's default) → one `jitzoo.MatMulInt8` node of
 *   the float activation, the int8 weights and a scale per column (the `matmul_int8` kernel:
 *   quantizes A as DynamicQuantizeLinear does, keeps the weights int8, sums integers); the
 *   DynamicQuantizeLinear goes once no other node reads it;
 *   other int8 files (uint8 weights, a weight zero point) → DequantizeLinear of the quantized
 *   activation (the values onnxruntime multiplies, exactly) → MatMul with the weight's
 *   dequantized values;
 * - 4-bit `com.microsoft.MatMulNBits` in blocks of 32 (zero points absent or 4-bit) → one
 *   `jitzoo.MatMulQ4` node of the float activation, the packed weights as the file has them, the
 *   scales and the zero points (8 for each block where the file has none): the `matmul_q4` kernel
 *   keeps them 4-bit (+ Add for its bias); other MatMulNBits (8 bits, other blocks, g_idx, float
 *   zero points) → MatMul over its weights dequantized once.
 * The bias Add that follows then fuses as it does for a float file. A product whose weight is not
 * a constant stays as it is (run by its host op).
 */
export function lower(graph: OnnxGraph): OnnxGraph {
  return new Lowering(graph, true).run();
}

/**
 * The int8 products of a lowered graph as float MatMuls over dequantized weights, for a backend
 * with 4-bit kernels but no int8 ones (WebGPU).
 */
export function withoutInt8Kernels(graph: OnnxGraph): OnnxGraph {
  return new Lowering(graph, false).run();
}

class Lowering {
  private readonly producer = new Map<string, OnnxNode>();
  private readonly consumers = new Map<string, OnnxNode[]>();
  private readonly initializers: Map<string, HostTensor>;
  /** A node → what replaces it ([] drops it). */
  private readonly replaced = new Map<OnnxNode, OnnxNode[]>();
  /** A quantized activation → its dequantized value, made once for all the products that read it. */
  private readonly dequantized = new Map<string, string>();

  constructor(private readonly graph: OnnxGraph, private readonly quantizedKernels: boolean) {
    this.initializers = new Map(graph.initializers);
    for (const n of graph.nodes) {
      n.outputs.forEach((o) => this.producer.set(o, n));
      for (const i of n.inputs) {
        if (!i) continue;
        const list = this.consumers.get(i);
        if (list) list.push(n);
        else this.consumers.set(i, [n]);
      }
    }
  }

  run(): OnnxGraph {
    for (const node of this.graph.nodes) {
      if (node.opType === "com.microsoft.MatMulNBits") this.nbits(node);
      else if (node.opType === "MatMulInteger") this.integer(node);
      else if (node.opType === MATMUL_INT8 && !this.quantizedKernels) this.unfuseInt8(node);
    }
    for (const node of this.graph.nodes) if (node.opType === "DynamicQuantizeLinear") this.dropWhenUnread(node);
    if (this.replaced.size === 0) return this.graph;
    const nodes = this.graph.nodes.flatMap((n) => this.replaced.get(n) ?? [n]);
    const used = new Set(nodes.flatMap((n) => n.inputs));
    for (const name of [...this.initializers.keys()]) {
      if (!used.has(name) && !this.graph.outputs.includes(name)) this.initializers.delete(name); // the packed weights: held once, as floats
    }
    return { ...this.graph, nodes, initializers: this.initializers };
  }

  private nbits(node: OnnxNode): void {
    const [a, packed, scales, zeros, groups, bias] = node.inputs;
    const [b, s, z, g] = [packed, scales, zeros, groups].map((v) => (v ? this.initializers.get(v) : undefined));
    if (!b || !s || (zeros && !z) || (groups && !g)) return;
    const { k, n, bits, blockSize } = nbitsLayout(node);
    if (this.quantizedKernels && bits === 4 && blockSize === Q4_BLOCK && !g && (!z || z.dtype === "uint8")) {
      const zeroName = zeros ?? this.add(`${packed}:zeros`, { dtype: "uint8", shape: [n, q4Layout(k).zeroBytes], data: new Uint8Array(n * q4Layout(k).zeroBytes).fill(0x88) });
      this.replaced.set(node, withBias(node, bias, (out) => ({ name: `${node.name}:q4`, opType: MATMUL_Q4, inputs: [a, packed, scales, zeroName], outputs: [out], attrs: { K: k, N: n } })));
      return;
    }
    const weight = this.add(`${packed}:dequantized`, { dtype: "float32", shape: [k, n], data: dequantizeNBits(node, b, s, z, g) });
    this.replaced.set(node, withBias(node, bias, (out) => matmul(node.name, a, weight, out)));
  }

  /** MatMulInteger(q, Wq, zq, zw) → Cast → Mul(s · sw), with q, s, zq from one DynamicQuantizeLinear and Wq, zw, sw constants. */
  private integer(node: OnnxNode): void {
    const [q, wq, zq, zw] = node.inputs;
    const weight = this.initializers.get(wq);
    const weightZero = zw ? this.initializers.get(zw) : undefined;
    const quantize = this.producer.get(q);
    const cast = this.only(node.outputs[0]);
    const mul = cast && this.only(cast.outputs[0]);
    if (!weight || weight.shape.length !== 2 || (zw && !weightZero) || quantize?.opType !== "DynamicQuantizeLinear" || quantize.outputs[2] !== zq) return;
    if (cast?.opType !== "Cast" || cast.attrs.to !== DataType.FLOAT || mul?.opType !== "Mul") return;
    const scales = this.producer.get(mul.inputs[0] === cast.outputs[0] ? mul.inputs[1] : mul.inputs[0]);
    const weightScale = scales?.opType === "Mul" && scales.inputs.includes(quantize.outputs[1])
      ? this.initializers.get(scales.inputs.find((i) => i !== quantize.outputs[1])!) : undefined;
    const n = weight.shape[1];
    const perColumn = (t: HostTensor | undefined) => !t || t.data.length === 1 || t.data.length === n;
    if (!weightScale || !perColumn(weightScale) || !perColumn(weightZero)) return;
    const at = (t: HostTensor | undefined, col: number, fallback: number) => (t ? t.data[t.data.length === 1 ? 0 : col] : fallback);
    const columns = Float32Array.from({ length: n }, (_, j) => at(weightScale, j, 1));
    this.replaced.set(cast, []);
    this.replaced.set(mul, []);
    if (this.only(scales!.outputs[0]) === mul) this.replaced.set(scales!, []);
    const zeroWeights = !weightZero || weightZero.data.every((z) => z === 0);
    if (this.quantizedKernels && weight.dtype === "int8" && zeroWeights) {
      const scaleName = this.add(`${wq}:scales`, { dtype: "float32", shape: [n], data: columns });
      this.replaced.set(node, [{ name: `${node.name}:int8`, opType: MATMUL_INT8, inputs: [quantize.inputs[0], wq, scaleName], outputs: [mul.outputs[0]], attrs: {} }]);
      return;
    }
    const w = new Float32Array(weight.data.length);
    for (let i = 0; i < w.length; i++) w[i] = (weight.data[i] - at(weightZero, i % n, 0)) * columns[i % n];
    this.replaced.set(node, this.dequantizedProduct(node, q, quantize.outputs[1], zq, this.add(`${wq}:dequantized`, { dtype: "float32", shape: [...weight.shape], data: w }), mul.outputs[0]));
  }

  /** A DynamicQuantizeLinear whose every reader went (each into an int8 product): it goes too. */
  private dropWhenUnread(quantize: OnnxNode): void {
    const outputs = quantize.outputs.filter(Boolean);
    if (outputs.some((o) => this.graph.outputs.includes(o))) return;
    const readers = outputs.flatMap((o) => this.consumers.get(o) ?? []);
    const gone = (reader: OnnxNode) => this.replaced.get(reader)?.every((n) => !n.inputs.some((i) => outputs.includes(i)));
    if (readers.every(gone)) this.replaced.set(quantize, []);
  }

  /**
   * An int8 product node (a float activation, int8 weights, a scale per column) as onnxruntime's
   * nodes would compute it in float: DynamicQuantizeLinear of the activation (once for every
   * product of it), DequantizeLinear, a float MatMul with the weights dequantized.
   */
  private unfuseInt8(node: OnnxNode): void {
    const [a, wq, columns] = node.inputs;
    const weight = this.initializers.get(wq)!, scales = this.initializers.get(columns)!;
    const n = weight.shape[1];
    const w = Float32Array.from(weight.data, (v, i) => v * scales.data[i % n]);
    const nodes: OnnxNode[] = [];
    const [q, scale, zero] = [`${a}:quantized`, `${a}:scale`, `${a}:zero`];
    if (!this.dequantized.has(q)) {
      nodes.push({ name: `${node.name}:quantize`, opType: "DynamicQuantizeLinear", inputs: [a], outputs: [q, scale, zero], attrs: {} });
    }
    nodes.push(...this.dequantizedProduct(node, q, scale, zero, this.add(`${wq}:dequantized`, { dtype: "float32", shape: [...weight.shape], data: w }), node.outputs[0]));
    this.replaced.set(node, nodes);
  }

  /** A float MatMul of the dequantized activation (made once for every product reading it) and a float weight. */
  private dequantizedProduct(node: OnnxNode, q: string, scale: string, zero: string, weight: string, out: string): OnnxNode[] {
    let activation = this.dequantized.get(q);
    const nodes: OnnxNode[] = [];
    if (!activation) {
      activation = `${q}:dequantized`;
      this.dequantized.set(q, activation);
      nodes.push({ name: `${node.name}:dequantize`, opType: "DequantizeLinear", inputs: [q, scale, zero], outputs: [activation], attrs: {} });
    }
    nodes.push(matmul(node.name, activation, weight, out));
    return nodes;
  }

  /** The one node reading a value that is not a graph output. */
  private only(value: string): OnnxNode | undefined {
    const list = this.consumers.get(value);
    return list?.length === 1 && !this.graph.outputs.includes(value) ? list[0] : undefined;
  }

  private add(name: string, value: HostTensor): string {
    this.initializers.set(name, value);
    return name;
  }
}

/** A product's nodes with MatMulNBits' optional bias as an Add after it (which then fuses as a float file's would). */
function withBias(node: OnnxNode, bias: string | undefined, product: (out: string) => OnnxNode): OnnxNode[] {
  const out = node.outputs[0];
  if (!bias) return [product(out)];
  return [product(`${out}:product`), { name: `${node.name}:bias`, opType: "Add", inputs: [`${out}:product`, bias], outputs: [out], attrs: {} }];
}

const matmul = (name: string, a: string, b: string, out: string): OnnxNode =>
  ({ name: `${name}:float`, opType: "MatMul", inputs: [a, b], outputs: [out], attrs: {} });
