import { TensorProto_DataType as DataType } from "../gen/onnx/onnx_pb.js";
import { dequantizeNBits, nbitsLayout } from "./host/linalg.js";
import type { OnnxGraph, OnnxNode } from "./onnx.js";
import type { HostTensor } from "./tensor.js";

/**
 * Rewrites, once at import, the quantized products of onnxruntime's tools into the float MatMuls
 * the engine runs as jitzoo kernels, with their weights dequantized once (the quantized kernels
 * will keep them packed):
 * - 4-bit `com.microsoft.MatMulNBits` → MatMul (+ Add for its bias);
 * - dynamic int8 (`DynamicQuantizeLinear` → `MatMulInteger` → Cast → Mul by the two scales) →
 *   DequantizeLinear of the quantized activation (the values onnxruntime multiplies, exactly) →
 *   MatMul with the weight's dequantized values. The bias Add that follows then fuses as it does
 *   for a float file.
 * A product whose weight is not a constant stays as it is (run by its host op).
 */
export function lower(graph: OnnxGraph): OnnxGraph {
  return new Lowering(graph).run();
}

class Lowering {
  private readonly producer = new Map<string, OnnxNode>();
  private readonly consumers = new Map<string, OnnxNode[]>();
  private readonly initializers: Map<string, HostTensor>;
  /** A node → what replaces it ([] drops it). */
  private readonly replaced = new Map<OnnxNode, OnnxNode[]>();
  /** A quantized activation → its dequantized value, made once for all the products that read it. */
  private readonly dequantized = new Map<string, string>();

  constructor(private readonly graph: OnnxGraph) {
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
    }
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
    const { k, n } = nbitsLayout(node);
    const weight = this.add(`${packed}:dequantized`, { dtype: "float32", shape: [k, n], data: dequantizeNBits(node, b, s, z, g) });
    const out = node.outputs[0];
    if (!bias) {
      this.replaced.set(node, [matmul(node.name, a, weight, out)]);
      return;
    }
    const product = `${out}:product`;
    this.replaced.set(node, [matmul(node.name, a, weight, product), { name: `${node.name}:bias`, opType: "Add", inputs: [product, bias], outputs: [out], attrs: {} }]);
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
    const w = new Float32Array(weight.data.length);
    for (let i = 0; i < w.length; i++) w[i] = (weight.data[i] - at(weightZero, i % n, 0)) * at(weightScale, i % n, 1);
    const deqWeight = this.add(`${wq}:dequantized`, { dtype: "float32", shape: [...weight.shape], data: w });
    let activation = this.dequantized.get(q);
    const nodes: OnnxNode[] = [];
    if (!activation) {
      activation = `${q}:dequantized`;
      this.dequantized.set(q, activation);
      nodes.push({ name: `${quantize.name}:dequantize`, opType: "DequantizeLinear", inputs: [q, quantize.outputs[1], zq], outputs: [activation], attrs: {} });
    }
    nodes.push(matmul(node.name, activation, deqWeight, mul.outputs[0]));
    this.replaced.set(node, nodes);
    this.replaced.set(cast, []);
    this.replaced.set(mul, []);
    if (this.only(scales!.outputs[0]) === mul) this.replaced.set(scales!, []);
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

const matmul = (name: string, a: string, b: string, out: string): OnnxNode =>
  ({ name: `${name}:float`, opType: "MatMul", inputs: [a, b], outputs: [out], attrs: {} });
