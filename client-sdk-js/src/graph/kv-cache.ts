import { create, toBinary } from "@bufbuild/protobuf";
import {
  ModelProtoSchema, NodeProtoSchema, TensorProto_DataType as DataType, TensorProtoSchema, TensorShapeProto_DimensionSchema, ValueInfoProtoSchema,
  type NodeProto, type TensorShapeProto_Dimension, type ValueInfoProto,
} from "../gen/onnx/onnx_pb.js";
import { fold, type FoldedGraph } from "./fold.js";
import { embeddings } from "./embeddings.js";
import { runNode, type ValueMeta } from "./host/index.js";
import { graphOf, ModelError, parseModel, type ExternalFiles, type OnnxGraph, type OnnxNode } from "./onnx.js";
import { tensor, type HostTensor } from "./tensor.js";

// A KV cache built around a plain decoder: the file a user exported without `past_key_values`
// rewritten into the layout exporters write with it (`past_key_values.N.key/value` in,
// `present.N.key/value` out, `attention_mask` over past + new tokens), so that a decode step
// computes its one new row instead of the whole sequence again — on any runtime.
//
// How: the graph is folded at a trial length T and each value that depends on input_ids is
// followed along its sequence axis (its "rows"). Row-wise ops (products with weights, norms,
// activations, views) compute only the new rows. Where an attention product needs a value over
// every position (Kᵀ's columns, V's rows), the new rows are appended to a past input there — the
// cache — walking back to the key or value as the model has it per head ([batch, heads, seq,
// head size]) before any repeat over query groups. Values built over every position (the causal
// mask, position tables, rotary angles) are computed at the full length and sliced to the new rows
// where row-wise values meet them. An op that mixes positions in another way is refused by name.

/** The length the plain graph is folded at to tell positions apart: a prime no weight has as a dimension. */
function trialLength(graph: OnnxGraph): number {
  const dims = new Set([...graph.initializers.values()].flatMap((t) => t.shape));
  const prime = (n: number) => { for (let d = 2; d * d <= n; d++) if (n % d === 0) return false; return true; };
  let t = 17;
  while (dims.has(t) || !prime(t)) t++;
  return t;
}

/** Ops each of whose output elements comes from the inputs' elements at the same place (broadcast). */
const BROADCAST = [
  "Add", "Sub", "Mul", "Div", "Pow", "Where", "And", "Or", "Xor", "Not", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
  "Max", "Min", "Mod", "Cast", "CastLike", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh", "Sigmoid", "Relu", "Gelu",
  "Softplus", "IsNaN", "IsInf", "Sin", "Cos", "Identity", "Clip",
];
/** Ops that keep a row axis where their inputs have it: the broadcast ones, and those that work along one other axis. */
const ELEMENTWISE = new Set([
  ...BROADCAST, "DequantizeLinear", "QuantizeLinear", "Softmax", "LogSoftmax", "LayerNormalization", "SimplifiedLayerNormalization",
  "com.microsoft.SimplifiedLayerNormalization", "ReduceMean", "ReduceSum", "ReduceMax", "CumSum", "DynamicQuantizeLinear", "Concat",
]);
const VIEWS = new Set(["Reshape", "Flatten", "Unsqueeze", "Squeeze"]);
const PRODUCTS = new Set(["MatMul", "MatMulInteger", "Gemm", "com.microsoft.MatMulNBits"]);
/** Ops over every position that may compute the new rows alone: the broadcast ones, and Expand. */
const NARROWS = new Set([...BROADCAST, "Expand"]);
/** Ops a cache may be moved back through: the same values per row, in another layout or scale. */
const PASS_THROUGH = new Set(["Transpose", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Expand", "Concat", "Cast", "Mul", "Div"]);

/** Where a value's rows are: an axis, or REDUCED for a value of the new rows with no row axis (a quantization scale). */
const REDUCED = -1;

/** An attention operand fed from the cache: the value there, the node reading it (and at which input), its row axis. */
interface CachePoint {
  readonly value: string;
  readonly consumer: OnnxNode;
  readonly input: number;
  readonly axis: number;
  readonly kind: "key" | "value";
}

/** What one pass over the folded graph found, given the cache points so far. */
interface Analysis {
  /** Row axis of every value computed from the new rows. */
  readonly rows: Map<string, number>;
  /** Inputs computed over every position that meet new rows: sliced to them along `axis`. */
  readonly slices: Map<OnnxNode, { input: number; axis: number }[]>;
  /** Reshape/Expand targets given the new rows' count along `axis` of `dims`. */
  readonly targets: Map<OnnxNode, { dims: readonly number[]; axis: number }>;
  /** An attention operand of new rows read over every position: where a cache goes. */
  readonly needs: { node: OnnxNode; input: number; kind: "key" | "value" }[];
}

class CacheBuilder {
  readonly folded: FoldedGraph;
  /** The nodes fold left: those that depend on the inputs' contents. */
  readonly dynamic: Set<OnnxNode>;
  private readonly producer = new Map<string, OnnxNode>();
  /** How many nodes read each value. */
  private readonly readers = new Map<string, number>();
  readonly points: CachePoint[] = [];

  constructor(private readonly graph: OnnxGraph, private readonly T: number) {
    const ids = graph.inputs.find((i) => i.name === "input_ids");
    if (!ids) throw new ModelError(`a KV cache is built around a decoder with an input_ids input; the model has ${graph.inputs.map((i) => i.name).join(", ")}`);
    if (graph.inputs.some((i) => i.name.startsWith("past_key_values."))) throw new ModelError("the model already has a KV cache (past_key_values inputs)");
    const others = graph.inputs.filter((i) => i.name !== "input_ids" && i.name !== "attention_mask");
    if (others.length) throw new ModelError(`a KV cache is built around input_ids and attention_mask; the model also needs ${others.map((i) => i.name).join(", ")}`);
    this.folded = fold(graph, Object.fromEntries(graph.inputs.map((i) => [i.name, [1, T]])));
    this.dynamic = new Set(this.folded.nodes);
    for (const n of graph.nodes) {
      n.outputs.forEach((o) => o && this.producer.set(o, n));
      n.inputs.forEach((v) => v && this.readers.set(v, (this.readers.get(v) ?? 0) + 1));
    }
  }

  meta(v: string): ValueMeta {
    return this.folded.values.get(v)!;
  }

  producerOf(v: string): OnnxNode | undefined {
    return this.producer.get(v);
  }

  /**
   * The nodes over every position each of whose uses slices it to the new rows (the mask's
   * arithmetic: a [total, total] causal mask and-ed with the attention mask): computed on those
   * rows alone, at the axis given, their inputs sliced instead — [new, total], not [total, total].
   */
  narrow(a: Analysis): Map<OnnxNode, number> {
    const demand = new Map<string, Set<number | "whole">>();
    const want = (v: string, d: number | "whole") => { if (v) demand.set(v, (demand.get(v) ?? new Set()).add(d)); };
    this.graph.outputs.forEach((o) => want(o, "whole"));
    const narrowed = new Map<OnnxNode, number>();
    for (const n of [...this.graph.nodes].reverse()) {
      if (!this.dynamic.has(n) || n.outputs.some((o) => a.rows.has(o))) {
        const sliced = this.dynamic.has(n) ? a.slices.get(n) ?? [] : [];
        n.inputs.forEach((v, k) => want(v, sliced.find((x) => x.input === k)?.axis ?? "whole"));
        continue;
      }
      const wants = n.outputs.flatMap((o) => [...(demand.get(o) ?? ["whole" as const])]);
      const axis = wants[0];
      if (NARROWS.has(n.opType) && n.outputs.length === 1 && typeof axis === "number" && wants.every((d) => d === axis)) {
        narrowed.set(n, axis);
        const rank = this.meta(n.outputs[0]).shape.length;
        n.inputs.forEach((v, k) => {
          if (!v || (n.opType === "Expand" && k === 1)) return;
          const s = this.meta(v).shape, at = axis - (rank - s.length);
          want(v, at >= 0 && s[at] === this.T ? at : "whole");
        });
      } else n.inputs.forEach((v) => want(v, "whole"));
    }
    return narrowed;
  }

  /** Follows the rows until every attention operand that needs all positions reads a cache. */
  build(): Analysis {
    for (let pass = 0; ; pass++) {
      const a = this.analyze();
      if (!a.needs.length) {
        if (!this.points.length) throw new ModelError("found no attention over the sequence to cache: is this a decoder?");
        return a;
      }
      if (pass > this.graph.nodes.length) throw new ModelError("could not place the KV cache");
      for (const need of a.needs) this.points.push(this.cachePoint(need, a.rows));
    }
  }

  private analyze(): Analysis {
    const a: Analysis = { rows: new Map([["input_ids", 1]]), slices: new Map(), targets: new Map(), needs: [] };
    for (const node of this.folded.nodes) {
      const ins = node.inputs.map((v, i) => (v && !this.points.some((p) => p.consumer === node && p.input === i) ? a.rows.get(v) : undefined));
      if (ins.every((r) => r === undefined)) continue; // over every position (the mask's arithmetic)
      const outs = this.follow(node, ins, a);
      node.outputs.forEach((o, i) => o && outs[i] !== undefined && a.rows.set(o, outs[i]!));
    }
    // a value of new rows read by a node that was folded (only Shape may: the rest of the shape arithmetic is at the full length)
    for (const node of this.graph.nodes) {
      if (node.opType !== "Shape" && !this.dynamic.has(node) && node.inputs.some((v) => a.rows.has(v))) {
        throw this.refuse(node, "reads the new rows at fold time");
      }
    }
    return a;
  }

  private refuse(node: OnnxNode, why: string): ModelError {
    return new ModelError(`cannot build a KV cache around node ${node.name} (${node.opType}): ${why}`);
  }

  /** The row axis of each output of a node some of whose inputs are new rows. */
  private follow(node: OnnxNode, ins: (number | undefined)[], a: Analysis): (number | undefined)[] {
    const T = this.T, shape = (i: number) => this.meta(node.inputs[i]).shape;
    const out = this.meta(node.outputs[0]).shape;
    const axisAttr = (fallback: number, rank: number) => { const x = (node.attrs.axis as number | undefined) ?? fallback; return x < 0 ? x + rank : x; };
    const op = node.opType;
    if (op === "DynamicQuantizeLinear") return [ins[0], REDUCED, REDUCED];
    if (ELEMENTWISE.has(op)) {
      const axes = new Set(ins.flatMap((r, i) => (r === undefined || r === REDUCED ? [] : [r + out.length - shape(i).length])));
      if (axes.size > 1) throw this.refuse(node, "its inputs' rows lie on different axes");
      const row = axes.size ? [...axes][0] : REDUCED;
      if (row === REDUCED) return node.outputs.map(() => REDUCED);
      const reduced = (axis: number) => { throw this.refuse(node, `it ${axis === row ? "reduces" : "normalizes"} over the positions`); };
      const concat = op === "Concat" && node.inputs.filter(Boolean).length > 1; // a Concat of one input is a copy
      if ((op === "Softmax" || op === "LogSoftmax" || concat || op === "CumSum") && axisAttr(-1, out.length) === row) reduced(row);
      if (op.endsWith("LayerNormalization") && row >= axisAttr(-1, out.length)) reduced(row);
      if (op.startsWith("Reduce") && (out.length !== shape(0).length || out[row] !== shape(0)[row])) reduced(row);
      this.sliceFull(node, ins, row, out.length, a);
      return [row, ...node.outputs.slice(1).map(() => (op.endsWith("LayerNormalization") ? row : undefined))];
    }
    if (op === "Transpose") {
      const perm = (node.attrs.perm as number[] | undefined) ?? out.map((_, i) => out.length - 1 - i);
      return [perm.indexOf(ins[0]!)];
    }
    if (VIEWS.has(op) || op === "Expand") {
      const r = ins[0];
      if (r === undefined || ins.slice(1).some((x) => x !== undefined)) throw this.refuse(node, "its shape comes from the new rows");
      const row = op === "Expand" ? r + out.length - shape(0).length : viewAxis(shape(0), r, out, T);
      if (row < 0) throw this.refuse(node, "it merges the positions with another axis");
      if (op === "Reshape" || op === "Expand") a.targets.set(node, { dims: out, axis: row });
      return [row];
    }
    if (op === "Split") {
      if (axisAttr(0, shape(0).length) === ins[0]) throw this.refuse(node, "it splits the positions");
      return node.outputs.map(() => ins[0]);
    }
    if (op === "Slice") {
      const r = ins[0];
      if (r === undefined || r === REDUCED || out[r] !== shape(0)[r]) throw this.refuse(node, "it slices the positions");
      return [r];
    }
    if (op === "Gather") {
      const data = ins[0], idx = ins[1], axis = axisAttr(0, shape(0).length);
      if (data === undefined && idx !== undefined && idx !== REDUCED) return [axis + idx]; // an embedding of the new tokens
      if (data !== undefined && data !== REDUCED && idx === undefined && data !== axis) return [data < axis ? data : data - 1 + shape(1).length];
      throw this.refuse(node, "it gathers along the positions");
    }
    if (PRODUCTS.has(op)) return [this.product(node, ins, out, a)];
    throw this.refuse(node, "its op is not followed along the positions");
  }

  /** A product's output row axis; an operand read over every position (Kᵀ's columns, V's rows) is a need for the cache. */
  private product(node: OnnxNode, ins: (number | undefined)[], out: readonly number[], a: Analysis): number {
    const rank = (i: number) => this.meta(node.inputs[i]).shape.length;
    const [ra, rb] = [ins[0], ins[1]];
    if (node.opType === "Gemm" && (node.attrs.transA || rb !== undefined)) throw this.refuse(node, "a Gemm's rows are A's, untransposed, alone");
    let row: number | undefined;
    if (ra !== undefined && ra !== REDUCED) {
      if (ra === rank(0) - 1) throw this.refuse(node, "it sums over the positions of new rows alone");
      row = ra === rank(0) - 2 ? out.length - 2 : ra + out.length - rank(0);
    }
    if (rb !== undefined && rb !== REDUCED && PRODUCTS.has(node.opType) && node.opType !== "com.microsoft.MatMulNBits") {
      if (rb >= rank(1) - 2) a.needs.push({ node, input: 1, kind: rb === rank(1) - 1 ? "key" : "value" });
      else {
        const batch = rb + out.length - rank(1);
        if (row !== undefined && row !== batch) throw this.refuse(node, "its operands' rows lie on different axes");
        row = batch;
      }
    }
    if (row === undefined) return REDUCED;
    if (row < out.length - 2) this.sliceFull(node, ins.slice(0, 2), row, out.length, a);
    return row;
  }

  /** Inputs over every position aligned with the new rows' axis (`row` of an output of rank `rank`) are sliced to the new rows. */
  private sliceFull(node: OnnxNode, ins: readonly (number | undefined)[], row: number, rank: number, a: Analysis): void {
    ins.forEach((r, i) => {
      const v = node.inputs[i];
      if (r !== undefined || !v) return;
      const s = this.meta(v).shape, axis = row - (rank - s.length);
      if (axis >= 0 && s[axis] === this.T) a.slices.set(node, [...(a.slices.get(node) ?? []), { input: i, axis }]);
    });
  }

  /**
   * Where the cache for an operand goes: back from the product through ops that keep each row's
   * values (views, transposes, a repeat over query groups, a scale) to the earliest value laid out
   * [batch, heads, positions, head size], else the earliest value reached.
   */
  private cachePoint(need: Analysis["needs"][number], rows: ReadonlyMap<string, number>): CachePoint {
    let at = { value: need.node.inputs[need.input], consumer: need.node, input: need.input };
    const reached = [at];
    for (;;) {
      const p = this.producer.get(at.value);
      if (!p || !PASS_THROUGH.has(p.opType) || this.readers.get(at.value) !== 1) break;
      const fed = p.inputs.map((v, i) => (v && rows.has(v) ? i : -1)).filter((i) => i >= 0);
      const others = p.inputs.filter((v, i) => v && !fed.includes(i));
      if (fed.length !== 1 || (p.opType === "Concat" && p.inputs.length > 1)) break;
      if ((p.opType === "Mul" || p.opType === "Div") && others.some((v) => this.meta(v).value === undefined || this.meta(v).shape.includes(this.T))) break;
      at = { value: p.inputs[fed[0]], consumer: p, input: fed[0] };
      reached.push(at);
    }
    const perHead = reached.filter((r) => this.meta(r.value).shape.length === 4 && rows.get(r.value) === 2);
    const chosen = perHead.at(-1) ?? reached.at(-1)!;
    return { ...chosen, axis: rows.get(chosen.value)!, kind: need.kind };
  }
}

/**
 * The axis of a view's output that holds the rows of the input's axis `r`, or -1 where the view
 * merges them with another axis (the products of the dimensions before it must agree, and it must
 * keep its length).
 */
function viewAxis(input: readonly number[], r: number, output: readonly number[], T: number): number {
  const before = input.slice(0, r).reduce((p, d) => p * d, 1);
  for (let b = 0, p = 1; b < output.length; p *= output[b++]) {
    if (p === before && output[b] === T) return b;
    if (p > before) break;
  }
  return -1;
}

/** The rewrite of the file's graph: nodes added before the node that reads them. */
class Rewrite {
  private count = 0;
  readonly initializers: ReturnType<typeof create<typeof TensorProtoSchema>>[] = [];
  readonly nodes: NodeProto[] = [];
  private readonly sliced = new Map<string, string>();

  private name(what: string): string {
    return `kv_cache/${what}_${this.count++}`;
  }

  node(opType: string, input: string[], attrs: { name: string; i: bigint }[] = [], output = this.name(`${opType}_output`)): string {
    this.nodes.push(create(NodeProtoSchema, {
      name: this.name(opType), opType, input, output: [output],
      attribute: attrs.map((a) => ({ name: a.name, i: a.i, type: 2 })), // INT
    }));
    return output;
  }

  /** An int64 scalar. */
  scalar(value: number): string {
    const name = this.name("const");
    this.initializers.push(create(TensorProtoSchema, { name, dataType: DataType.INT64, dims: [], int64Data: [BigInt(value)] }));
    return name;
  }

  ints(values: readonly number[]): string {
    const name = this.name("const");
    this.initializers.push(create(TensorProtoSchema, { name, dataType: DataType.INT64, dims: [BigInt(values.length)], int64Data: values.map(BigInt) }));
    return name;
  }

  /** A 1-D int64 tensor: the constant dims, with `T` replaced by `total` and the row axis by `rowLength`. */
  shape(dims: readonly number[], axis: number, rowLength: string, T: number, total: string): string {
    const pieces: string[] = [];
    let run: number[] = [];
    dims.forEach((d, i) => {
      const live = i === axis ? rowLength : d === T ? total : undefined;
      if (live === undefined) return void run.push(d);
      if (run.length) pieces.push(this.ints(run));
      run = [];
      pieces.push(live);
    });
    if (run.length) pieces.push(this.ints(run));
    return this.node("Concat", pieces, [{ name: "axis", i: 0n }]);
  }

  /** `value`'s positions past..total along `axis`. */
  rows(value: string, axis: number, past: string, total: string): string {
    const key = `${value}@${axis}`;
    let out = this.sliced.get(key);
    if (!out) this.sliced.set(key, (out = this.node("Slice", [value, past, total, this.ints([axis])])));
    return out;
  }
}

const dimParam = (value: string): TensorShapeProto_Dimension => create(TensorShapeProto_DimensionSchema, { value: { case: "dimParam", value } });
const dimValue = (value: number): TensorShapeProto_Dimension => create(TensorShapeProto_DimensionSchema, { value: { case: "dimValue", value: BigInt(value) } });

/** A float (or float16) tensor's ValueInfo with `dims` (a string: a symbolic dimension). */
function floatInfo(name: string, dims: readonly (number | string)[], half: boolean): ValueInfoProto {
  return create(ValueInfoProtoSchema, {
    name,
    type: { value: { case: "tensorType", value: { elemType: half ? DataType.FLOAT16 : DataType.FLOAT, shape: { dim: dims.map((d) => (typeof d === "string" ? dimParam(d) : dimValue(d))) } } } },
  });
}

/**
 * A plain decoder's file (`input_ids`, optional `attention_mask`; no `past_key_values`) rewritten
 * with a KV cache in the layout exporters write: inputs `input_ids` (the new tokens),
 * `attention_mask` (over past + new tokens), `past_key_values.N.key/value` (`[batch, heads, past,
 * head size]`, empty at first); outputs the file's own for the new tokens, `logits` of the last one
 * where the file has none (its tied head: see tiedHead), and `present.N.key/value` (past + new) to
 * feed back. Outputs equal the plain file's rows for the same tokens. Throws a
 * ModelError naming the node where the graph mixes positions other than through attention.
 */
export function withKvCache(bytes: Uint8Array, external: ExternalFiles = new Map()): Uint8Array {
  const model = parseModel(bytes);
  const graph = graphOf(model, external, { lowered: false });
  const T = trialLength(graph);
  const builder = new CacheBuilder(graph, T);
  const a = builder.build();
  const points = [...builder.points].sort((x, y) => graph.nodes.indexOf(x.consumer) - graph.nodes.indexOf(y.consumer));
  const keys = points.filter((p) => p.kind === "key"), values = points.filter((p) => p.kind === "value");
  if (keys.length !== values.length) throw new ModelError(`found ${keys.length} attention keys but ${values.length} values to cache`);
  const layer = (p: CachePoint) => (p.kind === "key" ? keys : values).indexOf(p);
  const past = (p: CachePoint) => `past_key_values.${layer(p)}.${p.kind}`;
  const present = (p: CachePoint) => `present.${layer(p)}.${p.kind}`;

  const w = new Rewrite();
  const first = keys[0];
  const seq = w.node("Gather", [w.node("Shape", ["input_ids"]), w.ints([1])]);
  const pastLength = w.node("Gather", [w.node("Shape", [past(first)]), w.ints([first.axis])]);
  const total = w.node("Add", [pastLength, seq]);
  const protoOf = new Map((model.graph!.node).map((n) => [n.output.find(Boolean)!, n]));
  const narrowed = builder.narrow(a);
  const isNarrowed = (v: string) => { const p = builder.producerOf(v); return p !== undefined && narrowed.has(p); };
  for (const node of graph.nodes) {
    const proto = protoOf.get(node.outputs.find(Boolean)!)!;
    if (node.opType === "Shape" && a.rows.has(node.inputs[0])) {
      // the shape arithmetic (positions, the causal mask) runs at the full length: past + new
      const dims = builder.meta(node.inputs[0]).shape, start = norm(node.attrs.start as number | undefined, 0, dims.length);
      const end = norm(node.attrs.end as number | undefined, dims.length, dims.length);
      const full = w.shape(dims.slice(start, end), a.rows.get(node.inputs[0])! - start, total, T, total);
      w.nodes.push(create(NodeProtoSchema, { name: proto.name, opType: "Identity", input: [full], output: [...proto.output] }));
      continue;
    }
    const input = [...proto.input];
    const narrowAt = narrowed.get(node);
    if (narrowAt !== undefined) {
      // over the new rows alone: inputs at the full length sliced, those already narrowed as they are
      const rank = builder.meta(node.outputs[0]).shape.length;
      node.inputs.forEach((v, k) => {
        if (!v || isNarrowed(v) || (node.opType === "Expand" && k === 1)) return;
        const dims = builder.meta(v).shape, at = narrowAt - (rank - dims.length);
        if (at >= 0 && dims[at] === T) input[k] = w.rows(v, at, pastLength, total);
      });
      if (node.opType === "Expand") input[1] = w.shape(builder.meta(node.outputs[0]).shape, narrowAt, seq, T, total);
    } else if (builder.dynamic.has(node)) {
      for (const s of a.slices.get(node) ?? []) if (!isNarrowed(input[s.input])) input[s.input] = w.rows(input[s.input], s.axis, pastLength, total);
      const target = a.targets.get(node);
      if (target) input[1] = w.shape(target.dims, target.axis, seq, T, total);
      for (const p of points.filter((q) => q.consumer === node)) {
        input[p.input] = w.node("Concat", [past(p), input[p.input]], [{ name: "axis", i: BigInt(p.axis) }], present(p));
      }
    }
    w.nodes.push(create(NodeProtoSchema, { ...proto, input }));
  }

  const logits = tiedHead(graph, a.rows, w);
  const g = model.graph!;
  const cacheInfo = (p: CachePoint, name: string, length: string) =>
    floatInfo(name, builder.meta(p.value).shape.map((d, i) => (i === p.axis ? length : d)), graph.half.has(p.value));
  const ordered = [...keys.map((k, i) => [k, values[i]]).flat()];
  const inputs = g.input.filter((i) => !g.initializer.some((t) => t.name === i.name));
  for (const i of inputs) {
    const t = i.name === "attention_mask" && i.type?.value.case === "tensorType" ? i.type.value.value : undefined;
    if (t?.shape?.dim[1]) t.shape.dim[1] = dimParam("past_sequence + sequence");
  }
  const rewritten = create(ModelProtoSchema, {
    ...model,
    graph: {
      ...g,
      node: w.nodes,
      initializer: [...g.initializer, ...w.initializers],
      input: [...inputs, ...ordered.map((p) => cacheInfo(p, past(p), "past_sequence"))],
      output: [...g.output, ...(logits ? [logits] : []), ...ordered.map((p) => cacheInfo(p, present(p), "past_sequence + sequence"))],
      valueInfo: [], // the file's intermediate shapes were for the whole sequence
    },
  });
  const int8 = graph.nodes.some((n) => n.opType === "DynamicQuantizeLinear");
  selfCheck(graph, graphOf(rewritten, external, { lowered: false }), int8, a.rows, ordered.map((p) => ({ past: past(p), dims: builder.meta(p.value).shape.map((d, i) => (i === p.axis ? 0 : d)) })));
  return toBinary(ModelProtoSchema, rewritten);
}

/**
 * A `logits` output for a file exported without a head (a base model: GPT-2's head is its token
 * embedding): the last position's hidden state times the token embedding, transposed (a Gemm with
 * transB, so both runtimes run it as a product). Undefined where the file has logits, or no float32
 * token embedding (a float16 one would need a Cast of the whole table each step), or its hidden
 * state is not [batch, positions, hidden].
 */
function tiedHead(graph: OnnxGraph, rows: ReadonlyMap<string, number>, w: Rewrite): ValueInfoProto | undefined {
  const { tokens, tokensName } = embeddings(graph);
  const hidden = graph.outputs.includes("last_hidden_state") ? "last_hidden_state" : graph.outputs[0];
  if (graph.outputs.includes("logits") || !tokens || !tokensName || graph.half.has(tokensName) || rows.get(hidden) !== 1) return undefined;
  const last = w.node("Gather", [hidden, w.scalar(-1)], [{ name: "axis", i: 1n }]);
  w.node("Gemm", [last, tokensName], [{ name: "transB", i: 1n }], "logits");
  return floatInfo("logits", [1, tokens.shape[0]], false);
}

/**
 * How far apart two runs' rows may be (of the largest value): float rows agree to rounding; an int8
 * file's rows are quantized with a scale over the rows of each run (DynamicQuantizeLinear).
 */
const CHECK_TOLERANCE = { float: 1e-3, int8: 0.05 } as const;

/**
 * Runs both files on the host on three tokens: the plain file's rows must not change with a later
 * token (a decoder is causal: an encoder's are refused), and the cached file's — the first two
 * tokens, then the third with their presents — must be the plain file's.
 */
function selfCheck(plain: OnnxGraph, cached: OnnxGraph, int8: boolean, rows: ReadonlyMap<string, number>, pasts: { past: string; dims: number[] }[]): void {
  const checked = plain.outputs.filter((o) => rows.get(o) === 1);
  const tolerance = int8 ? CHECK_TOLERANCE.int8 : CHECK_TOLERANCE.float;
  const apart = (got: HostTensor["data"], want: HostTensor["data"]) => {
    let worst = 0, scale = 1;
    for (let i = 0; i < want.length; i++) {
      worst = Math.max(worst, Math.abs(Number(got[i]) - Number(want[i])));
      scale = Math.max(scale, Math.abs(Number(want[i])));
    }
    return got.length !== want.length || !(worst <= tolerance * scale);
  };
  const feeds = (ids: number[], total = ids.length): Record<string, HostTensor> => ({
    input_ids: tensor("int64", [1, ids.length], ids),
    ...(plain.inputs.some((i) => i.name === "attention_mask") ? { attention_mask: tensor("int64", [1, total], new Array(total).fill(1)) } : {}),
  });
  const three = evaluate(plain, feeds([0, 1, 2])), two = evaluate(plain, feeds([0, 1]));
  const prefill = evaluate(cached, { ...feeds([0, 1]), ...Object.fromEntries(pasts.map((p) => [p.past, tensor("float32", p.dims, [])])) });
  const step = evaluate(cached, { ...feeds([2], 3), ...Object.fromEntries(pasts.map((p) => [p.past, prefill.get(p.past.replace("past_key_values", "present"))!])) });
  for (const o of checked) {
    const whole = three.get(o)!.data, width = whole.length / 3;
    if (apart(two.get(o)!.data, whole.subarray(0, 2 * width))) {
      throw new ModelError(`the model is not causal: its ${o} for the first tokens changes with a later token (an encoder?); a KV cache would change its outputs`);
    }
    if (apart(prefill.get(o)!.data, whole.subarray(0, 2 * width)) || apart(step.get(o)!.data, whole.subarray(2 * width))) {
      throw new ModelError(`the cached model's ${o} differs from the plain model's: a KV cache cannot be built around this graph`);
    }
  }
}

/** Every value of a graph run on the host (the reference ops). */
function evaluate(graph: OnnxGraph, feeds: Readonly<Record<string, HostTensor>>): Map<string, HostTensor> {
  const values = new Map<string, HostTensor>([...graph.initializers, ...Object.entries(feeds)]);
  for (const node of graph.nodes) {
    const outs = runNode(node, node.inputs.map((v) => (v ? values.get(v) : undefined)));
    outs.forEach((t, i) => node.outputs[i] && values.set(node.outputs[i], t));
  }
  return values;
}

const norm = (x: number | undefined, fallback: number, rank: number): number => {
  const v = x ?? fallback;
  return Math.min(Math.max(v < 0 ? v + rank : v, 0), rank);
};
