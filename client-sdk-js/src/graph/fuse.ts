import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConvWindowSchema, EpilogueKind, EpilogueSchema, OpKind, OpSpecSchema, type Epilogue, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { TensorProto_DataType as DataType } from "../gen/onnx/onnx_pb.js";
import { DEFAULT_LAYER_NORM_EPSILON, geluErf, geluTanh, opKey } from "../ops.js";
import type { FoldedGraph } from "./fold.js";
import { runNode, VIEW_OPS, type ValueMeta } from "./host/index.js";
import { convNodeWindow, type Window } from "./host/nn.js";
import { MATMUL_INT8, MATMUL_Q4 } from "./host/linalg.js";
import type { OnnxNode } from "./onnx.js";
import { sizeOf, type HostTensor } from "./tensor.js";

/** One jitzoo op in the model: which values are its operands (by ABI name) and what it replaced. */
export interface KernelStep {
  readonly kind: "kernel";
  readonly op: OpSpec;
  /** {@link opKey} of the op: steps with the same key share kernels. */
  readonly key: string;
  /** ABI operand name (A, B, C, Bias, Residual, Gamma, Beta) → value name. */
  readonly operands: Readonly<Record<string, string>>;
  /** The ONNX nodes this op computes, first to last. */
  readonly nodes: readonly string[];
}

/** A node run in JavaScript (data movement and the little arithmetic no kernel covers). */
export interface HostStep {
  readonly kind: "host";
  readonly node: OnnxNode;
}

export type Step = KernelStep | HostStep;

/** The graph as a program: steps in order, and the values that are another's elements under a new shape. */
export interface FusedGraph {
  readonly steps: readonly Step[];
  /** View output → the value whose memory it shares (Reshape, Unsqueeze, Squeeze, Identity). */
  readonly aliases: ReadonlyMap<string, string>;
}

const GELU_OPS = new Set(["Add", "Sub", "Mul", "Div", "Pow", "Erf", "Tanh", "Sqrt"]);
/** Most nodes a GELU written out in elementwise ops may take (the tanh form takes 8). */
const GELU_MAX_NODES = 10;

/**
 * Turns the input-dependent nodes into jitzoo ops where a pattern matches: MatMul/Gemm and
 * Conv (2-D and 1-D, a patch embedding as a MatMul) with scale, bias, ReLU, GELU (erf or tanh
 * form, however the formula is arranged), SiLU and residual (a mask broadcast over heads
 * included) fused in;
 * Q·Kᵀ (a MatMul of a transposed operand) as batch_matmul with transposeB; LayerNormalization
 * and its ReduceMean form as layer_norm; Softmax; same-shape Add and Mul. RMSNorm, rotary
 * embeddings and a softmax's NaN guard become one host step each (`host/fused.ts`); float casts
 * of float values are views. The rest runs in JavaScript. A float16 file's MatMuls become
 * `matmul_f16` (the weights kept 16-bit, widened in the kernel). Wasm kernels only (`float16`, the
 * values a float16 file declares float16): a product rounds to float16 in its epilogue
 * (`round_half`) after each step whose value the file rounds, as onnxruntime does op by op.
 * `conv` false leaves Convs other than patch embeddings to the host.
 */
export function fuse(folded: FoldedGraph, outputs: readonly string[], { float16, conv = true }: FuseOptions = {}): FusedGraph {
  return new Fuser(folded, outputs, float16, conv).run();
}

export interface FuseOptions {
  /** The values a float16 file declares float16 (Wasm kernels only: their products round in the kernel). */
  float16?: ReadonlySet<string>;
  /** Whether Convs other than patch embeddings become `conv` ops (the default). */
  conv?: boolean;
}

class Fuser {
  private readonly consumers = new Map<string, OnnxNode[]>();
  private readonly producer = new Map<string, OnnxNode>();
  private readonly absorbed = new Set<OnnxNode>();
  private readonly order = new Map<OnnxNode, number>();
  private readonly placed: { at: number; step: Step }[] = [];
  private readonly aliases = new Map<string, string>();
  private readonly outputs: Set<string>;

  constructor(private readonly g: FoldedGraph, outputs: readonly string[], private readonly float16: ReadonlySet<string> | undefined,
    private readonly convOps: boolean) {
    this.outputs = new Set(outputs);
    g.nodes.forEach((n, i) => {
      this.order.set(n, i);
      n.outputs.forEach((o) => this.producer.set(o, n));
      for (const input of n.inputs) {
        if (input && !this.constant(input)) {
          const list = this.consumers.get(input) ?? [];
          if (!list.includes(n)) list.push(n);
          this.consumers.set(input, list);
        }
      }
    });
  }

  run(): FusedGraph {
    for (const node of this.g.nodes) {
      if (this.absorbed.has(node)) continue;
      if (!this.empty(node) && this.match(node)) continue;
      if ((VIEW_OPS.has(node.opType) || this.floatCast(node) || this.sameOrder(node)) && this.meta(node.inputs[0]).dtype === "float32") {
        this.aliases.set(node.outputs[0], this.aliases.get(node.inputs[0]) ?? node.inputs[0]);
        continue;
      }
      this.place(node, { kind: "host", node });
    }
    // a node placed on the host before a later op took it in (a Transpose or a scale before a MatMul) runs inside that op only
    const steps = this.placed.filter((p) => p.step.kind !== "host" || !this.absorbed.has(p.step.node)).sort((a, b) => a.at - b.at).map((p) => p.step);
    return { steps, aliases: this.aliases };
  }

  /** A node reading or writing a tensor of no elements (a KV cache's first, empty past): the host's, no kernel's. */
  private empty(node: OnnxNode): boolean {
    return [...node.inputs, ...node.outputs].some((v) => v && this.g.values.has(v) && sizeOf(this.meta(v).shape) === 0);
  }

  private match(node: OnnxNode): boolean {
    switch (node.opType) {
      case "MatMul": return this.matmul(node);
      case MATMUL_INT8: return this.matmulInt8(node);
      case MATMUL_Q4: return this.matmulQ4(node);
      case "Gemm": return this.gemm(node);
      case "Softmax": return this.softmax(node);
      case "LayerNormalization": return this.layerNormOp(node);
      case "ReduceMean": return this.layerNormPattern(node);
      case "Conv": return this.patchEmbedding(node) || (this.convOps && this.conv(node));
      case "Pow": return this.rmsNorm(node);
      case "Where": return this.nanGuard(node);
      case "Add": return this.rotateHalf(node) || this.elementwise(node);
      case "Mul": return this.elementwise(node);
      default: return false;
    }
  }

  // ------------------------------------------------------------------ patterns

  /**
   * The int8 product (lower.ts) over rows of its float activation: a `matmul_int8`, its epilogue
   * fused as a MatMul's; its Work (A quantized) a value of its own, `<output>:work`, live for the step.
   */
  private matmulInt8(node: OnnxNode): boolean {
    const [a, weight, columns] = node.inputs;
    const aShape = this.meta(a).shape, [k, n] = this.meta(weight).shape;
    if (this.meta(a).dtype !== "float32" || !this.constant(weight) || !this.constant(columns) || aShape.length < 1 || aShape.at(-1) !== k) return false;
    return this.emitMatmul([node], { kind: OpKind.MATMUL_INT8, shape: [sizeOf(aShape.slice(0, -1)), k, n] }, a, weight, node.outputs[0],
      { BScale: columns, Work: `${node.outputs[0]}:work` });
  }

  /**
   * The 4-bit product (lower.ts) over rows of its float activation: a `matmul_q4`, its epilogue
   * fused as a MatMul's; its Work (a tile's weights widened) a value of its own, `<output>:work`.
   */
  private matmulQ4(node: OnnxNode): boolean {
    const [a, weight, scales, zeros] = node.inputs;
    const aShape = this.meta(a).shape, k = node.attrs.K as number, n = node.attrs.N as number;
    if (this.meta(a).dtype !== "float32" || ![weight, scales, zeros].every((v) => this.constant(v)) || aShape.length < 1 || aShape.at(-1) !== k) return false;
    return this.emitMatmul([node], { kind: OpKind.MATMUL_Q4, shape: [sizeOf(aShape.slice(0, -1)), k, n] }, a, weight, node.outputs[0],
      { BScale: scales, BZero: zeros, Work: `${node.outputs[0]}:work` });
  }

  private matmul(node: OnnxNode): boolean {
    if (node.inputs.some((v) => this.meta(v).shape.length < 2) || this.meta(node.inputs[0]).dtype !== "float32") return false;
    // attention scales Q and K by scalars before Q·Kᵀ (SDPA's exports): one scale on the product instead
    const [sa, sb] = node.inputs.map((v) => this.scaled(v, node));
    const a = sa?.value ?? node.inputs[0], b = sb?.value ?? node.inputs[1];
    const scale = (sa?.scale ?? 1) * (sb?.scale ?? 1);
    const init = { epilogue: scale === 1 ? [] : [epilogueOf(EpilogueKind.SCALE, scale)] };
    const aShape = this.meta(a).shape, bShape = this.meta(b).shape;
    const [m, k] = aShape.slice(-2);
    const n = bShape.at(-1)!;
    const nodes = [...[sa, sb].flatMap((s) => (s ? [s.node] : [])), node];
    const weight = this.constant(b);
    if (weight) {
      if (bShape.length !== 2) return false;
      // a float16 file's weights: kept 16-bit, widened in the kernel (its Work, on Wasm, a value of its own)
      const half = weight.half === true && weight.dtype === "float32";
      return this.emitMatmul(nodes, { ...init, kind: half ? OpKind.MATMUL_F16 : OpKind.MATMUL, shape: [sizeOf(aShape.slice(0, -1)), k, n] },
        a, b, node.outputs[0], half ? { Work: `${node.outputs[0]}:work` } : {});
    }
    let bValue = b, transposeB = false;
    const t = this.producer.get(b);
    const rank = bShape.length;
    const perm = t?.opType === "Transpose" ? (t.attrs.perm as number[] | undefined) : undefined;
    if (t && perm && this.single(b) === (sb?.node ?? node) && perm.every((p, i) => p === (i === rank - 2 ? rank - 1 : i === rank - 1 ? rank - 2 : i))) {
      bValue = t.inputs[0];
      transposeB = true;
      nodes.unshift(t);
    }
    const batchA = sizeOf(aShape.slice(0, -2)), batchB = sizeOf(bShape.slice(0, -2));
    const sameBatch = aShape.length === bShape.length && aShape.slice(0, -2).every((d, i) => d === bShape[i]);
    if (batchB === 1) {
      return this.emitMatmul(nodes, { ...init, kind: OpKind.MATMUL, shape: [batchA * m, k, n], transposeB }, a, bValue, node.outputs[0]);
    }
    if (!sameBatch) return false;
    return this.emitMatmul(nodes, { ...init, kind: OpKind.BATCH_MATMUL, shape: [batchA, m, k, n], transposeB }, a, bValue, node.outputs[0]);
  }

  /** An operand that is another value times (or over) a scalar constant, read by `consumer` only. */
  private scaled(value: string, consumer: OnnxNode): { value: string; scale: number; node: OnnxNode } | undefined {
    const mul = this.producer.get(value);
    if (!mul || (mul.opType !== "Mul" && mul.opType !== "Div") || this.single(value) !== consumer || this.absorbed.has(mul)) return undefined;
    const [x, y] = mul.inputs;
    const sx = mul.opType === "Mul" ? this.scalar(x) : undefined, sy = this.scalar(y);
    const [other, scale] = sy !== undefined ? [x, mul.opType === "Mul" ? sy : 1 / sy] : sx !== undefined ? [y, sx] : [undefined, 0];
    if (other === undefined || this.constant(other) || this.meta(other).dtype !== "float32" || this.meta(other).shape.length !== this.meta(value).shape.length) return undefined;
    return { value: other, scale, node: mul };
  }

  private gemm(node: OnnxNode): boolean {
    const [a, b, c] = node.inputs;
    if (node.attrs.transA || !this.constant(b) || this.meta(a).shape.length !== 2) return false;
    const transposeB = node.attrs.transB === 1;
    const [m, k] = this.meta(a).shape;
    const n = transposeB ? this.meta(b).shape[0] : this.meta(b).shape[1];
    const alpha = (node.attrs.alpha as number | undefined) ?? 1, beta = (node.attrs.beta as number | undefined) ?? 1;
    const epilogue: Epilogue[] = alpha === 1 ? [] : [epilogueOf(EpilogueKind.SCALE, alpha)];
    const extra: Record<string, string> = {};
    if (c) {
      const bias = this.constant(c);
      if (!bias || bias.data.length !== n || bias.shape.at(-1) !== n) return false;
      extra.Bias = this.derived(c, beta === 1 ? bias : { ...bias, data: bias.data.map((x) => x * beta) }, `×${beta}`);
      epilogue.push(epilogueOf(EpilogueKind.BIAS));
    }
    return this.emitMatmul([node], { kind: OpKind.MATMUL, shape: [m, k, n], transposeB, epilogue }, a, b, node.outputs[0], extra);
  }

  /**
   * A 2-D Conv whose stride equals its kernel, unpadded and undilated (ViT's and CLIP's patch
   * embedding): every patch is a row, so the conv is a MatMul of the patches `[N·P, C·kh·kw]` by the
   * weight as `[C·kh·kw, OC]`, with its bias. The patches are cut by one host Transpose (a view of X
   * as `[N, C, Hp, kh, Wp, kw]` → `[N, Hp, Wp, C, kh, kw]`), and the product `[N, Hp, Wp, OC]` is
   * turned to the conv's `[N, OC, Hp, Wp]` by another.
   */
  private patchEmbedding(node: OnnxNode): boolean {
    const [x, w, bias] = node.inputs;
    const weight = this.constant(w), xShape = this.meta(x).shape;
    if (!weight || weight.shape.length !== 4 || xShape.length !== 4 || this.meta(x).dtype !== "float32") return false;
    const [oc, c, kh, kw] = weight.shape, [n, , h, wd] = xShape;
    const ints = (name: string, fallback: number[]) => (node.attrs[name] as number[] | undefined) ?? fallback;
    const autoPad = (node.attrs.auto_pad as string | undefined) ?? "NOTSET";
    if ((node.attrs.group ?? 1) !== 1 || ints("dilations", [1, 1]).some((d) => d !== 1) || ints("pads", [0, 0, 0, 0]).some((p) => p !== 0)
      || !(autoPad === "NOTSET" || autoPad === "VALID") || ints("strides", [1, 1]).join() !== `${kh},${kw}` || h % kh || wd % kw || c !== xShape[1]) return false;
    if (bias && !this.isBias(bias, oc)) return false;
    const hp = h / kh, wp = wd / kw, k = c * kh * kw;
    const name = node.outputs[0];
    const matrix = new Float32Array(k * oc); // the weight as [K, OC]: column oc is filter oc
    for (let o = 0; o < oc; o++) for (let i = 0; i < k; i++) matrix[i * oc + o] = weight.data[o * k + i];
    const b = this.derived(w, { dtype: "float32", shape: [k, oc], data: matrix }, ":patch-matrix");
    const at = this.order.get(node)!;
    const split = this.view(`${name}:image`, x, [n, c, hp, kh, wp, kw]);
    const patches = this.value(`${name}:patches`, [n * hp * wp, k]);
    this.placed.push({ at, step: { kind: "host", node: transpose(`${node.name}:patches`, split, patches, [0, 2, 4, 1, 3, 5]) } });
    const product = this.value(`${name}:product`, [n * hp * wp, oc]);
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [n * hp * wp, k, oc], epilogue: bias ? [epilogueOf(EpilogueKind.BIAS)] : [] });
    this.emit([node], op, { A: patches, B: b, ...(bias ? { Bias: bias } : {}), C: product });
    const nhwc = this.view(`${name}:nhwc`, product, [n, hp, wp, oc]);
    this.placed.push({ at, step: { kind: "host", node: transpose(`${node.name}:nchw`, nhwc, name, [0, 3, 1, 2]) } });
    return true;
  }

  /**
   * Any other 2-D or 1-D Conv of float32 input by a constant weight (groups, depthwise, strides,
   * pads, dilations, auto_pad): a `conv` op, 1-D as H = KH = 1 (the same memory), its bias and the
   * activation (ReLU, GELU, SiLU), scale and residual after it fused as a MatMul's are.
   */
  private conv(node: OnnxNode): boolean {
    const [x, w, bias] = node.inputs;
    const weight = this.constant(w), xShape = this.meta(x).shape;
    if (!weight || weight.dtype !== "float32" || this.meta(x).dtype !== "float32" || !(xShape.length === 4 || xShape.length === 3)
      || weight.shape.length !== xShape.length) return false;
    const m = weight.shape[0];
    if (bias && !this.isBias(bias, m)) return false;
    let window: Window;
    try {
      window = convNodeWindow(node, xShape, weight.shape);
    } catch {
      return false; // the host op says what is wrong with it
    }
    const group = (node.attrs.group as number | undefined) ?? 1;
    const oneD = xShape.length === 3;
    const [n, c, h, wd] = oneD ? [xShape[0], xShape[1], 1, xShape[2]] : xShape;
    const two = (values: readonly number[]) => (oneD ? [1, values[0]] : values); // 1-D as H = KH = 1
    const [kh, kw] = two(weight.shape.slice(2));
    const [pt, pl, pb, pr] = oneD ? [0, window.pads[0], 0, window.pads[1]] : window.pads;
    const [sh, sw] = two(window.strides), [dh, dw] = two(window.dilations);
    if (c % group || m % group || weight.shape[1] * group !== c) return false;
    const op: MatmulInit = {
      kind: OpKind.CONV, shape: [n, c, h, wd, m, kh, kw],
      conv: { strideH: sh, strideW: sw, dilationH: dh, dilationW: dw, padTop: pt, padLeft: pl, padBottom: pb, padRight: pr, group },
      epilogue: bias ? [epilogueOf(EpilogueKind.BIAS)] : [],
    };
    return this.emitMatmul([node], op, x, w, node.outputs[0], { ...(bias ? { Bias: bias } : {}), Work: `${node.outputs[0]}:work` }, true);
  }

  /** A value made here, with its type and shape, computed by a step made here. */
  private value(name: string, shape: number[]): string {
    (this.g.values as Map<string, ValueMeta>).set(name, { dtype: "float32", shape });
    return name;
  }

  /** Another shape of `of`'s elements, sharing its memory. */
  private view(name: string, of: string, shape: number[]): string {
    this.aliases.set(this.value(name, shape), this.aliases.get(of) ?? of);
    return name;
  }

  /**
   * Takes scale, bias, ReLU, GELU, SiLU and residual steps that follow the product into the op,
   * then emits it. A conv's C is not rows of N: no bias along its last axis, no reshape taken in.
   */
  private emitMatmul(nodes: OnnxNode[], init: MatmulInit, a: string, b: string, product: string, extra: Record<string, string> = {},
    conv = false): boolean {
    const epilogue = [...(init.epilogue ?? [])];
    const operands: Record<string, string> = { A: a, B: b, ...extra };
    const n = conv ? -1 : init.shape.at(-1)!;
    let out = product;
    const rounded = () => { if (this.float16?.has(out)) epilogue.push(epilogueOf(EpilogueKind.ROUND_HALF)); };
    rounded();
    for (;;) {
      const next = this.single(out);
      if (next && VIEW_OPS.has(next.opType) && this.meta(next.outputs[0]).shape.at(-1) === n) {
        nodes.push(next); // a reshape that keeps rows of N (GPT-2's Conv1D folds its batch axes around the Gemm): the same memory
        out = next.outputs[0];
        continue;
      }
      const step = next?.opType === "Relu" ? epilogueOf(EpilogueKind.RELU)
        : next && next.outputs.length === 1 ? this.epilogueStep(next, out, n, operands) : undefined;
      if (step) {
        epilogue.push(step);
        nodes.push(next!);
        out = next!.outputs[0];
        rounded();
        continue;
      }
      const silu = this.silu(out);
      if (silu) {
        epilogue.push(epilogueOf(EpilogueKind.SILU));
        nodes.push(...silu.nodes);
        out = silu.out;
        rounded();
        continue;
      }
      const gelu = epilogue.some((e) => e.kind === EpilogueKind.GELU_ERF || e.kind === EpilogueKind.GELU_TANH) ? undefined : this.gelu(out);
      if (!gelu) break;
      epilogue.push(epilogueOf(gelu.kind));
      nodes.push(...gelu.nodes);
      out = gelu.out;
      rounded();
    }
    const op = create(OpSpecSchema, { ...init, epilogue });
    this.emit(nodes, op, { ...operands, C: out });
    return true;
  }

  /** Scale (× or ÷ a scalar), bias (+ a constant along N) or residual (+ a value shaped like C), or none. */
  private epilogueStep(next: OnnxNode, out: string, n: number, operands: Record<string, string>): Epilogue | undefined {
    const other = next.inputs[0] === out ? next.inputs[1] : next.inputs[0];
    if (other === undefined || other === out) return undefined;
    const scalar = this.scalar(other);
    if (scalar !== undefined && (next.opType === "Mul" || (next.opType === "Div" && next.inputs[0] === out))) {
      return epilogueOf(EpilogueKind.SCALE, next.opType === "Mul" ? scalar : 1 / scalar);
    }
    if (next.opType !== "Add") return undefined;
    if (!operands.Bias && this.isBias(other, n)) {
      operands.Bias = other;
      return epilogueOf(EpilogueKind.BIAS);
    }
    if (!operands.Residual && !this.constant(other) && this.sameShape(other, out)) {
      operands.Residual = other;
      return epilogueOf(EpilogueKind.RESIDUAL);
    }
    const expanded = operands.Residual ? undefined : this.expanded(other, out, next);
    if (expanded) {
      operands.Residual = expanded;
      return epilogueOf(EpilogueKind.RESIDUAL);
    }
    return undefined;
  }

  /**
   * A value added to C that broadcasts to C's shape along its leading axes (an attention mask
   * `[1, 1, S, S]` on scores `[1, heads, S, S]`), as a value shaped like C: one Expand on the
   * host, before the op, instead of an Add after it.
   */
  private expanded(value: string, c: string, add: OnnxNode): string | undefined {
    const shape = this.meta(c).shape, own = this.meta(value).shape;
    if (this.meta(value).dtype !== "float32" || this.constant(value) || own.length > shape.length || own.some((d, i) => d !== 1 && d !== shape[shape.length - own.length + i])) return undefined;
    const name = `${value}:as[${shape}]`;
    if (this.g.values.has(name)) return name; // another head's or layer's op adds the same value
    this.value(name, [...shape]);
    const target = this.derived(`${name}:shape`, { dtype: "int64", shape: [shape.length], data: Float64Array.from(shape) }, "");
    this.placed.push({ at: this.order.get(add)!, step: { kind: "host", node: { name: `${add.name}:expand`, opType: "Expand", inputs: [value, target], outputs: [name], attrs: {} } } });
    return name;
  }

  /**
   * A GELU written out in elementwise ops, starting at `x`: the nodes after x that compute
   * only from x and scalar constants, ending in one value that equals gelu (erf or tanh form)
   * on sample points. Matching by value, not by shape of the formula, takes every arrangement
   * exporters write.
   */
  private gelu(x: string): { kind: EpilogueKind; nodes: OnnxNode[]; out: string } | undefined {
    const region: OnnxNode[] = [];
    const inside = new Set([x]);
    const start = this.order.get(this.consumers.get(x)?.[0] ?? ({} as OnnxNode));
    if (start === undefined) return undefined;
    for (let i = start; i < this.g.nodes.length && region.length < GELU_MAX_NODES; i++) {
      const node = this.g.nodes[i];
      if (!node.inputs.some((v) => inside.has(v))) continue;
      if (!GELU_OPS.has(node.opType) || this.absorbed.has(node) || !node.inputs.every((v) => inside.has(v) || this.scalar(v) !== undefined)) break;
      region.push(node);
      inside.add(node.outputs[0]);
    }
    for (let end = region.length; end >= 3; end--) {
      const nodes = region.slice(0, end);
      const out = nodes[end - 1].outputs[0];
      const closed = [x, ...nodes.slice(0, -1).map((n) => n.outputs[0])].every((v) =>
        !this.outputs.has(v) && (this.consumers.get(v) ?? []).every((c) => nodes.includes(c)));
      if (!closed) continue;
      const kind = this.geluKind(x, nodes);
      if (kind) return { kind, nodes, out };
    }
    return undefined;
  }

  /** SiLU written out, `Mul(x, Sigmoid(x))` (Llama's and Qwen2's MLP), starting at `x`. */
  private silu(x: string): { nodes: OnnxNode[]; out: string } | undefined {
    const users = this.consumers.get(x) ?? [];
    const sigmoid = users.find((u) => u.opType === "Sigmoid"), mul = users.find((u) => u.opType === "Mul");
    if (users.length !== 2 || this.outputs.has(x) || !sigmoid || !mul || users.some((u) => this.absorbed.has(u))) return undefined;
    const gate = sigmoid.outputs[0];
    return this.single(gate) === mul && mul.inputs.includes(x) && mul.inputs.includes(gate) ? { nodes: [sigmoid, mul], out: mul.outputs[0] } : undefined;
  }

  private geluKind(x: string, nodes: OnnxNode[]): EpilogueKind | undefined {
    const points = Float32Array.from({ length: 49 }, (_, i) => (i - 24) / 4);
    const values = new Map<string, HostTensor>([[x, { dtype: "float32", shape: [points.length], data: points }]]);
    for (const node of nodes) {
      const ins = node.inputs.map((v) => values.get(v) ?? this.constant(v)!);
      values.set(node.outputs[0], runNode(node, ins)[0]);
    }
    const y = values.get(nodes.at(-1)!.outputs[0])!.data;
    // a float16 file writes its constants (√2, 0.044715) in float16: its GELU is GELU to float16's precision
    const tolerance = this.float16?.has(x) ? 2 ** -9 : 1e-5;
    const near = (f: (v: number) => number) => points.every((p, i) => Math.abs(y[i] - f(p)) <= tolerance * Math.max(1, Math.abs(f(p))));
    return near(geluErf) ? EpilogueKind.GELU_ERF : near(geluTanh) ? EpilogueKind.GELU_TANH : undefined;
  }

  private softmax(node: OnnxNode): boolean {
    const shape = this.meta(node.inputs[0]).shape;
    const axis = (node.attrs.axis as number | undefined) ?? -1;
    if (axis !== -1 && axis !== shape.length - 1) return false;
    const cols = shape.at(-1)!;
    this.emit([node], create(OpSpecSchema, { kind: OpKind.SOFTMAX, shape: [sizeOf(shape) / cols, cols] }), { A: node.inputs[0], C: node.outputs[0] });
    return true;
  }

  private layerNormOp(node: OnnxNode): boolean {
    const [x, gamma, beta] = node.inputs;
    const shape = this.meta(x).shape;
    const axis = (node.attrs.axis as number | undefined) ?? -1;
    if (axis !== -1 && axis !== shape.length - 1) return false;
    if (node.outputs.slice(1).some((o) => o && (this.consumers.has(o) || this.outputs.has(o)))) return false; // Mean, InvStdDev read
    const epsilon = (node.attrs.epsilon as number | undefined) ?? 1e-5;
    return this.emitLayerNorm([node], x, gamma, beta || undefined, epsilon, node.outputs[0]);
  }

  /** mean = ReduceMean(x); d = x − mean; std = Sqrt(ReduceMean(Pow(d, 2)) + eps); Div(d, std) × γ + β. */
  private layerNormPattern(mean: OnnxNode): boolean {
    const x = mean.inputs[0];
    const rank = this.meta(x).shape.length;
    if (!this.lastAxisMean(mean, rank)) return false;
    const sub = this.single(mean.outputs[0]);
    if (sub?.opType !== "Sub" || sub.inputs[0] !== x || sub.inputs[1] !== mean.outputs[0]) return false;
    const d = sub.outputs[0];
    const users = this.consumers.get(d) ?? [];
    const pow = users.find((u) => u.opType === "Pow" && u.inputs[0] === d && this.scalar(u.inputs[1]) === 2);
    const div = users.find((u) => u.opType === "Div" && u.inputs[0] === d);
    if (users.length !== 2 || !pow || !div || this.outputs.has(d)) return false;
    const mean2 = this.single(pow.outputs[0]);
    if (mean2?.opType !== "ReduceMean" || !this.lastAxisMean(mean2, rank)) return false;
    const add = this.single(mean2.outputs[0]);
    const epsName = add?.inputs.find((v) => v !== mean2.outputs[0]);
    const epsilon = epsName !== undefined ? this.scalar(epsName) : undefined;
    if (add?.opType !== "Add" || epsilon === undefined) return false;
    const sqrt = this.single(add.outputs[0]);
    if (sqrt?.opType !== "Sqrt" || this.single(sqrt.outputs[0]) !== div || div.inputs[1] !== sqrt.outputs[0]) return false;
    const nodes = [mean, sub, pow, mean2, add, sqrt, div];
    let out = div.outputs[0];
    let gamma: string | undefined, beta: string | undefined;
    const cols = this.meta(x).shape.at(-1)!;
    const mul = this.single(out);
    const g = mul?.inputs.find((v) => v !== out);
    if (mul?.opType === "Mul" && g !== undefined && this.isBias(g, cols)) {
      gamma = g;
      nodes.push(mul);
      out = mul.outputs[0];
      const plus = this.single(out);
      const bb = plus?.inputs.find((v) => v !== out);
      if (plus?.opType === "Add" && bb !== undefined && this.isBias(bb, cols)) {
        beta = bb;
        nodes.push(plus);
        out = plus.outputs[0];
      }
    }
    return this.emitLayerNorm(nodes, x, gamma, beta, epsilon, out);
  }

  private lastAxisMean(node: OnnxNode, rank: number): boolean {
    const axes = (node.attrs.axes as number[] | undefined) ?? (node.inputs[1] ? Array.from(this.constant(node.inputs[1])?.data ?? []) : undefined);
    return (node.attrs.keepdims ?? 1) === 1 && axes?.length === 1 && (axes[0] === -1 || axes[0] === rank - 1);
  }

  private emitLayerNorm(nodes: OnnxNode[], x: string, gamma: string | undefined, beta: string | undefined, epsilon: number, out: string): boolean {
    const shape = this.meta(x).shape;
    const cols = shape.at(-1)!;
    if (gamma !== undefined && !this.isBias(gamma, cols)) return false;
    if (beta !== undefined && !this.isBias(beta, cols)) return false;
    // the default epsilon is sent as 0, so the op has one key and one kernel id however it was written
    const own = Math.fround(epsilon) === Math.fround(DEFAULT_LAYER_NORM_EPSILON) ? 0 : epsilon;
    const op = create(OpSpecSchema, { kind: OpKind.LAYER_NORM, shape: [sizeOf(shape) / cols, cols], epsilon: own });
    this.emit(nodes, op, { A: x, Gamma: gamma ?? this.filled(out, cols, 1), Beta: beta ?? this.filled(out, cols, 0), C: out });
    return true;
  }

  private elementwise(node: OnnxNode): boolean {
    const [a, b] = node.inputs;
    const size = sizeOf(this.meta(node.outputs[0]).shape);
    const full = (v: string) => this.meta(v).dtype === "float32" && sizeOf(this.meta(v).shape) === size && !this.constant(v);
    if (!full(a) || !full(b)) return false;
    const kind = node.opType === "Add" ? OpKind.ADD : OpKind.MUL;
    this.emit([node], create(OpSpecSchema, { kind, shape: [size] }), { A: a, B: b, C: node.outputs[0] });
    return true;
  }

  /**
   * RMSNorm written out (Llama, Qwen2, T5): `x · 1/Sqrt(ReduceMean(Pow(x, 2)) + eps)` (or
   * `Div(x, Sqrt(...))`), then `× weight`, float casts between them, as one
   * `SimplifiedLayerNormalization` host step.
   */
  private rmsNorm(pow: OnnxNode): boolean {
    const x = pow.inputs[0];
    const shape = this.meta(x).shape, cols = shape.at(-1)!;
    if (this.scalar(pow.inputs[1]) !== 2 || this.meta(x).dtype !== "float32" || this.constant(x)) return false;
    const nodes = [pow];
    const mean = this.next(pow.outputs[0], nodes);
    if (mean?.opType !== "ReduceMean" || !this.lastAxisMean(mean, shape.length)) return false;
    nodes.push(mean);
    const add = this.next(mean.outputs[0], nodes);
    const epsilon = add?.opType === "Add" ? this.scalar(add.inputs.find((v) => v !== mean.outputs[0]) ?? "") : undefined;
    if (epsilon === undefined) return false;
    nodes.push(add!);
    const sqrt = this.next(add!.outputs[0], nodes);
    if (sqrt?.opType !== "Sqrt") return false;
    nodes.push(sqrt);
    let step = this.next(sqrt.outputs[0], nodes);
    if (step && (step.opType === "Reciprocal" || (step.opType === "Div" && this.scalar(step.inputs[0]) === 1 && step.inputs[1] === sqrt.outputs[0]))) {
      nodes.push(step); // 1 / rms, then x times it
      const r = step.outputs[0];
      step = this.next(r, nodes);
      if (step?.opType !== "Mul" || !step.inputs.includes(x) || !step.inputs.includes(r)) return false;
    } else if (step?.opType !== "Div" || step.inputs[0] !== x || step.inputs[1] !== sqrt.outputs[0]) {
      return false;
    }
    nodes.push(step);
    let out = step.outputs[0], scale: string | undefined;
    const chain = [...nodes];
    const mul = this.next(out, chain);
    const normalized = chain.at(-1)!.outputs[0]; // after the casts
    const weight = mul?.opType === "Mul" && mul.inputs.includes(normalized) ? mul.inputs.find((v) => v !== normalized) : undefined;
    if (weight !== undefined && this.isBias(weight, cols)) {
      nodes.splice(0, nodes.length, ...chain, mul!);
      out = mul!.outputs[0];
      scale = weight;
    }
    scale ??= this.filled(out, cols, 1);
    this.host(nodes, { name: `${pow.name}:rms`, opType: "SimplifiedLayerNormalization", inputs: [x, scale], outputs: [out], attrs: { axis: -1, epsilon } });
    return true;
  }

  /**
   * Rotary embedding as Hugging Face writes it: `x · cos + Concat(−x[h:], x[:h]) · sin` over the
   * last axis (h half of it), cos and sin constants that repeat over batch and heads, as one
   * `RotateHalf` host step.
   */
  private rotateHalf(add: OnnxNode): boolean {
    for (const [p, q] of [add.inputs, [...add.inputs].reverse()]) {
      const direct = this.producer.get(p), rotated = this.producer.get(q);
      if (direct?.opType !== "Mul" || rotated?.opType !== "Mul" || this.single(p) !== add || this.single(q) !== add) continue;
      const cos = direct.inputs.find((v) => this.constant(v)), x = direct.inputs.find((v) => !this.constant(v));
      const sin = rotated.inputs.find((v) => this.constant(v)), concat = this.producer.get(rotated.inputs.find((v) => !this.constant(v)) ?? "");
      if (!cos || !x || !sin || concat?.opType !== "Concat" || concat.inputs.length !== 2 || this.single(concat.outputs[0]) !== rotated) continue;
      const shape = this.meta(x).shape, cols = shape.at(-1)!;
      if (this.meta(x).dtype !== "float32" || cols % 2 || !this.lastAxis(concat.attrs.axis as number, shape.length)) continue;
      const neg = this.producer.get(concat.inputs[0]), first = this.producer.get(concat.inputs[1]);
      const second = neg?.opType === "Neg" && this.single(concat.inputs[0]) === concat ? this.producer.get(neg.inputs[0]) : undefined;
      if (!second || !first || this.single(neg!.inputs[0]) !== neg || this.single(concat.inputs[1]) !== concat
        || !this.halfSlice(first, x, 0, cols / 2) || !this.halfSlice(second, x, cols / 2, cols)) continue;
      if (![cos, sin].every((v) => this.repeats(v, shape))) continue;
      this.host([first, second, neg!, concat, direct, rotated, add], { name: `${add.name}:rotary`, opType: "jitzoo.RotateHalf", inputs: [x, cos, sin], outputs: [add.outputs[0]], attrs: {} });
      return true;
    }
    return false;
  }

  /** A Slice of x's last axis from `start` to `end` (an end past the axis counts as its end), step 1. */
  private halfSlice(node: OnnxNode, x: string, start: number, end: number): boolean {
    if (node.opType !== "Slice" || node.inputs[0] !== x) return false;
    const [, starts, ends, axes, steps] = node.inputs.map((v) => (v ? this.constant(v)?.data : undefined));
    const rank = this.meta(x).shape.length;
    return starts?.length === 1 && ends?.length === 1 && starts[0] === start && Math.min(ends[0], this.meta(x).shape[rank - 1]) === end
      && (axes === undefined ? rank === 1 : axes.length === 1 && this.lastAxis(axes[0], rank)) && (steps === undefined || steps[0] === 1);
  }

  /** A float constant whose shape is a trailing part of `shape` (leading 1s aside): it repeats over the leading axes. */
  private repeats(value: string, shape: readonly number[]): boolean {
    const c = this.constant(value);
    if (!c || c.dtype !== "float32") return false;
    const own = c.shape.slice(c.shape.findIndex((d) => d !== 1));
    return own.length <= shape.length && own.every((d, i) => d === shape[shape.length - own.length + i]);
  }

  /** `Where(IsNaN(p), value, p)`, a softmax's guard against fully masked rows, as one `ReplaceNaN` host step. */
  private nanGuard(where: OnnxNode): boolean {
    const [cond, value, p] = where.inputs;
    const isNaN = this.producer.get(cond);
    if (isNaN?.opType !== "IsNaN" || isNaN.inputs[0] !== p || this.single(cond) !== where || this.scalar(value) === undefined || this.meta(p).dtype !== "float32") return false;
    this.host([isNaN, where], { name: `${where.name}:nan`, opType: "jitzoo.ReplaceNaN", inputs: [p, value], outputs: [where.outputs[0]], attrs: {} });
    return true;
  }

  // ------------------------------------------------------------------ helpers

  /**
   * The only node after `value` in a chain, past float-to-float Casts (which join `nodes`): the
   * exporters put them around RMSNorm's arithmetic.
   */
  private next(value: string, nodes: OnnxNode[]): OnnxNode | undefined {
    let node = this.single(value);
    while (node && this.floatCast(node)) {
      nodes.push(node);
      node = this.single(node.outputs[0]);
    }
    return node;
  }

  /**
   * A node whose output has its input's elements in the same order: a Concat of one input, a
   * Transpose that moves only axes of length 1 (a decode step's heads: [1, 1, heads, d] ↔ [1, heads, 1, d]).
   */
  private sameOrder(node: OnnxNode): boolean {
    if (node.opType === "Concat") return node.inputs.filter(Boolean).length === 1;
    if (node.opType !== "Transpose") return false;
    const shape = this.meta(node.inputs[0]).shape;
    const perm = (node.attrs.perm as number[] | undefined) ?? shape.map((_, i) => shape.length - 1 - i);
    const moved = perm.filter((axis) => shape[axis] !== 1);
    return moved.every((axis, i) => i === 0 || moved[i - 1] < axis);
  }

  /** A Cast of float32 to float (or double, held as float32): the same values. */
  private floatCast(node: OnnxNode): boolean {
    return node.opType === "Cast" && (node.attrs.to === DataType.FLOAT || node.attrs.to === DataType.DOUBLE) && this.meta(node.inputs[0]).dtype === "float32";
  }

  private lastAxis(axis: number | undefined, rank: number): boolean {
    return axis === -1 || axis === rank - 1;
  }

  private emit(nodes: OnnxNode[], op: OpSpec, operands: Record<string, string>): void {
    const resolved = Object.fromEntries(Object.entries(operands).map(([k, v]) => [k, this.aliases.get(v) ?? v]));
    this.replace(nodes, { kind: "kernel", op, key: opKey(op), operands: resolved, nodes: nodes.map((n) => n.name) });
  }

  /** A host step made here that computes `nodes`' result. */
  private host(nodes: OnnxNode[], node: OnnxNode): void {
    this.replace(nodes, { kind: "host", node });
  }

  /** `step` in place of `nodes`, at the last one's place. */
  private replace(nodes: OnnxNode[], step: Step): void {
    nodes.forEach((n) => this.absorbed.add(n));
    this.placed.push({ at: Math.max(...nodes.map((n) => this.order.get(n)!)), step });
  }

  private place(node: OnnxNode, step: Step): void {
    this.placed.push({ at: this.order.get(node)!, step });
  }

  private meta(name: string): ValueMeta {
    const m = this.g.values.get(name);
    if (!m) throw new Error(`value ${name} is unknown`);
    return m;
  }

  private constant(name: string): HostTensor | undefined {
    return this.g.values.get(name)?.value;
  }

  /** A constant made here (scaled bias, default γ/β), registered as a value of its own. */
  private derived(base: string, value: HostTensor, suffix: string): string {
    const name = `${base}${suffix}`;
    (this.g.values as Map<string, ValueMeta>).set(name, { dtype: value.dtype, shape: value.shape, value });
    return name;
  }

  private scalar(name: string): number | undefined {
    const c = this.constant(name);
    return c && c.dtype === "float32" && c.data.length === 1 ? c.data[0] : undefined;
  }

  /** A constant row of `cols` copies of `value` (a default γ, β or RMSNorm weight), named after `out`. */
  private filled(out: string, cols: number, value: number): string {
    return this.derived(`${out}:${value}`, { dtype: "float32", shape: [cols], data: new Float32Array(cols).fill(value) }, "");
  }

  /** A float constant of `n` elements along the last axis only (a bias, γ or β). */
  private isBias(name: string | undefined, n: number): boolean {
    const c = name === undefined ? undefined : this.constant(name);
    return !!c && c.dtype === "float32" && c.data.length === n && c.shape.at(-1) === n;
  }

  private sameShape(a: string | undefined, b: string): boolean {
    if (a === undefined) return false;
    const x = this.meta(a).shape, y = this.meta(b).shape;
    return this.meta(a).dtype === "float32" && sizeOf(x) === sizeOf(y) && x.at(-1) === y.at(-1);
  }

  /** The only node that reads `value`, when the value is not also a graph output. */
  private single(value: string): OnnxNode | undefined {
    const list = this.consumers.get(value);
    return list?.length === 1 && !this.outputs.has(value) && !this.absorbed.has(list[0]) ? list[0] : undefined;
  }
}

/** What a matmul pattern knows before its epilogue is matched. */
interface MatmulInit {
  kind: OpKind;
  shape: number[];
  transposeB?: boolean;
  epilogue?: Epilogue[];
  /** A conv's window. */
  conv?: MessageInitShape<typeof ConvWindowSchema>;
}

/** A Transpose made by the fuser. */
const transpose = (name: string, input: string, output: string, perm: number[]): OnnxNode =>
  ({ name, opType: "Transpose", inputs: [input], outputs: [output], attrs: { perm } });

/** The wire carries an epilogue's value as a float32: the op, its key and its reference use that value. */
const epilogueOf = (kind: EpilogueKind, value = 0): Epilogue => create(EpilogueSchema, { kind, value: Math.fround(value) });
