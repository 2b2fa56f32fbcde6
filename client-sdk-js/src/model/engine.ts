import type { OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { median } from "../timing.js";
import { Arena, layOut, type Lifetime } from "./arena.js";
import { fold, type InputShapes } from "./fold.js";
import { fuse, type KernelStep } from "./fuse.js";
import { runNode, type ValueMeta } from "./host-ops.js";
import { referenceKernel, type Bindings, type OpKernel, type Operand } from "./kernels.js";
import { decodeModel, ModelError, type OnnxGraph } from "./onnx.js";
import { sizeOf, type HostTensor } from "./tensor.js";

/**
 * A tensor fed to {@link Model.run}: onnxruntime-web's `Tensor` fits, as does `{ data, dims }`
 * with numbers or bigints (a Float32Array, Int32Array, BigInt64Array or a plain array).
 */
export interface TensorLike {
  readonly data: ArrayLike<unknown>;
  readonly dims: readonly number[];
}

/** A model output, row-major: float32, int64 (BigInt64Array) or bool (0 or 1), as onnxruntime-web returns them. */
export interface OutputTensor {
  readonly type: "float32" | "int64" | "bool";
  readonly dims: number[];
  readonly data: Float32Array | BigInt64Array | Uint8Array;
}

/** Options of {@link loadModel}. */
export interface LoadOptions {
  /** Receives progress lines. */
  log?: (line: string) => void;
}

/** What one distinct op of the model runs on. */
export interface OpStats {
  /** {@link opKey} of the op. */
  key: string;
  op: OpSpec;
  /** How many places in the model compute it (steps of the current plans). */
  instances: number;
  /** The kernel in use: a server-issued id, or `reference`. */
  kernelId: string;
  source: "reference" | "wasm";
}

/** What a model has done so far. */
export interface ModelStats {
  runs: number;
  /** Median latency of `run()` over the runs so far, milliseconds (NaN before the first). */
  medianRunMs: number;
  lastRunMs: number;
  /** Plans compiled, one per set of input shapes seen. */
  plans: number;
  /** Bytes of the model's Wasm memory (weights, activations, packed copies). */
  memoryBytes: number;
  /** Every distinct jitzoo op, in first-use order. */
  ops: OpStats[];
  /** Steps run in JavaScript per run (data movement and the like), in the latest plan. */
  hostSteps: number;
  /** Why the model runs as it does (e.g. no gateway: the reference kernels). */
  notes: string[];
}

/**
 * Loads an ONNX model (bytes, or a URL to fetch) and prepares it to run on jitzoo kernels.
 * @throws ModelError naming the node and op type when the model uses something unsupported
 */
export async function loadModel(source: Uint8Array | ArrayBuffer | string | URL, options: LoadOptions = {}): Promise<Model> {
  const bytes = await bytesOf(source);
  const graph = decodeModel(bytes);
  options.log?.(`model ${graph.name || "(unnamed)"}: ${graph.nodes.length} nodes, opset ${graph.opset}, inputs ${graph.inputs.map((i) => i.name).join(", ")}`);
  return new Model(graph, options);
}

async function bytesOf(source: Uint8Array | ArrayBuffer | string | URL): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  const response = await fetch(source);
  if (!response.ok) throw new ModelError(`cannot fetch ${String(source)}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** One distinct op: its kernel, and every place (step) that calls it. */
class KernelSlot {
  kernel: OpKernel;
  private readonly uses: { bindings: Bindings; call: () => void }[] = [];

  constructor(readonly key: string, readonly op: OpSpec, kernel: OpKernel) {
    this.kernel = kernel;
  }

  /** A step's call, which follows the slot's kernel when it is replaced. */
  use(bindings: Bindings): () => void {
    const use = { bindings, call: this.kernel.bind(bindings) };
    this.uses.push(use);
    return () => use.call();
  }

  get instances(): number {
    return this.uses.length;
  }

  /** Swaps in another kernel for every use, releasing the old one. */
  replace(kernel: OpKernel): void {
    const old = this.kernel;
    this.kernel = kernel;
    for (const use of this.uses) use.call = kernel.bind(use.bindings);
    old.release();
  }
}

/** A compiled program for one set of input shapes. */
interface Plan {
  readonly run: () => void;
  readonly write: (feeds: Readonly<Record<string, TensorLike>>) => void;
  readonly read: () => Record<string, OutputTensor>;
  readonly hostSteps: number;
}

/** A model ready to run. Create it with {@link loadModel}. */
export class Model {
  private readonly arena = new Arena();
  private readonly plans = new Map<string, Plan>();
  private readonly slots = new Map<string, KernelSlot>();
  /** Initializers written to the arena, shared by every plan. */
  private readonly weights = new Map<string, Operand>();
  private readonly runMs: number[] = [];
  private hostSteps = 0;
  private readonly notes = ["no gateway: every op runs its reference kernel (correct, not fast); pass a gateway to tune"];

  /** @internal use {@link loadModel} */
  constructor(private readonly graph: OnnxGraph, private readonly options: LoadOptions) {}

  /** Names of the inputs a run must feed. */
  get inputNames(): string[] {
    return this.graph.inputs.map((i) => i.name);
  }

  /** Names of the outputs a run returns. */
  get outputNames(): string[] {
    return [...this.graph.outputs];
  }

  /**
   * Runs the model. Feeds are keyed by input name; int64 inputs take a BigInt64Array, an
   * Int32Array or numbers. Resolves to every graph output.
   */
  async run(feeds: Readonly<Record<string, TensorLike>>): Promise<Record<string, OutputTensor>> {
    const start = performance.now();
    const plan = this.planFor(feeds);
    plan.write(feeds);
    plan.run();
    const outputs = plan.read();
    this.runMs.push(performance.now() - start);
    return outputs;
  }

  /** Latency, memory and the kernel of every op so far. */
  stats(): ModelStats {
    return {
      runs: this.runMs.length,
      medianRunMs: this.runMs.length ? median(this.runMs) : NaN,
      lastRunMs: this.runMs.at(-1) ?? NaN,
      plans: this.plans.size,
      memoryBytes: this.arena.bytes,
      ops: [...this.slots.values()].map((s) => ({ key: s.key, op: s.op, instances: s.instances, kernelId: s.kernel.id, source: s.kernel.source })),
      hostSteps: this.hostSteps,
      notes: [...this.notes],
    };
  }

  private planFor(feeds: Readonly<Record<string, TensorLike>>): Plan {
    const shapes: Record<string, readonly number[]> = {};
    for (const input of this.graph.inputs) {
      const feed = feeds[input.name];
      if (!feed) throw new ModelError(`input ${input.name} is missing (inputs: ${this.inputNames.join(", ")})`);
      shapes[input.name] = [...feed.dims];
    }
    for (const name of Object.keys(feeds)) {
      if (!shapes[name]) throw new ModelError(`${name} is not an input of the model (inputs: ${this.inputNames.join(", ")})`);
    }
    const key = JSON.stringify(shapes);
    let plan = this.plans.get(key);
    if (!plan) {
      const start = performance.now();
      plan = this.compile(shapes);
      this.plans.set(key, plan);
      this.options.log?.(`compiled a plan for ${key} in ${(performance.now() - start).toFixed(0)} ms: ${this.slots.size} distinct ops`);
    }
    return plan;
  }

  private compile(shapes: InputShapes): Plan {
    const folded = fold(this.graph, shapes);
    const { steps, aliases } = fuse(folded, this.graph.outputs);
    const values = folded.values;
    const base = (v: string) => aliases.get(v) ?? v;
    const meta = (v: string): ValueMeta => values.get(v)!;
    const isConst = (v: string) => meta(v).value !== undefined;

    // Values kernels read or write live in the arena; the rest (ids, masks, shapes) in JS.
    const inArena = new Set<string>();
    for (const s of steps) if (s.kind === "kernel") for (const v of Object.values(s.operands)) inArena.add(base(v));
    const lifetimes = new Map<string, { first: number; last: number }>();
    const touch = (v: string, at: number) => {
      const b = base(v);
      if (!inArena.has(b) || isConst(b)) return;
      const l = lifetimes.get(b) ?? { first: at, last: at };
      lifetimes.set(b, { first: Math.min(l.first, at), last: Math.max(l.last, at) });
    };
    this.graph.inputs.forEach((i) => touch(i.name, -1));
    steps.forEach((s, i) => {
      const names = s.kind === "kernel" ? Object.values(s.operands) : [...s.node.inputs, ...s.node.outputs];
      names.filter(Boolean).forEach((v) => touch(v, i));
    });
    this.graph.outputs.forEach((o) => touch(o, steps.length));
    const layout = layOut([...lifetimes].map(([name, l]): Lifetime => ({ name, bytes: sizeOf(meta(name).shape) * 4, ...l })));
    const region = this.arena.alloc(layout.bytes);
    const foldedConsts = new Map<string, Operand>();
    const operand = (v: string): Operand => {
      const b = base(v);
      if (isConst(b)) return this.weight(b, meta(b).value!, foldedConsts);
      return { offset: region + layout.offsets.get(b)!, floats: sizeOf(meta(b).shape) };
    };

    const host = new Map<string, HostTensor>();
    const read = (v: string): HostTensor => {
      const m = meta(v), b = base(v);
      if (m.value) return m.value;
      if (inArena.has(b)) { const o = operand(b); return { dtype: "float32", shape: m.shape, data: this.arena.f32(o.offset, o.floats) }; }
      const t = host.get(b);
      if (!t) throw new Error(`value ${v} was not computed`);
      return { ...t, shape: m.shape };
    };

    const calls = steps.map((s): (() => void) => {
      if (s.kind === "kernel") return this.slotFor(s).use({ operands: Object.fromEntries(Object.entries(s.operands).map(([k, v]) => [k, operand(v)])), constantB: s.operands.B !== undefined && isConst(base(s.operands.B)) });
      const node = s.node;
      return () => {
        const out = node.outputs.map((o) => (o && inArena.has(base(o)) ? read(o) : undefined));
        const results = runNode(node, node.inputs.map((v) => (v ? read(v) : undefined)), out);
        results.forEach((r, i) => node.outputs[i] && !out[i] && host.set(base(node.outputs[i]), r));
      };
    });
    this.hostSteps = steps.length - steps.filter((s) => s.kind === "kernel").length;

    return {
      hostSteps: this.hostSteps,
      write: (feeds) => {
        for (const input of this.graph.inputs) {
          const data = feeds[input.name].data;
          const b = base(input.name);
          const values = toHost(input.name, input.dtype, data);
          if (inArena.has(b)) {
            const o = operand(b);
            this.arena.f32(o.offset, o.floats).set(values);
          } else {
            host.set(b, { dtype: input.dtype, shape: shapes[input.name], data: values });
          }
        }
      },
      run: () => { for (const call of calls) call(); },
      read: () => Object.fromEntries(this.graph.outputs.map((o) => {
        const t = read(o);
        return [o, { type: t.dtype, dims: [...t.shape], data: fromHost(t) }];
      })),
    };
  }

  private slotFor(step: KernelStep): KernelSlot {
    let slot = this.slots.get(step.key);
    if (!slot) {
      slot = new KernelSlot(step.key, step.op, referenceKernel(step.op, this.arena));
      this.slots.set(step.key, slot);
    }
    return slot;
  }

  /** A constant in the arena: initializers once for the model, folded constants once per plan (`local`). */
  private weight(name: string, value: HostTensor, local: Map<string, Operand>): Operand {
    const cache = this.graph.initializers.has(name) ? this.weights : local;
    let w = cache.get(name);
    if (!w) {
      w = { offset: this.arena.alloc(value.data.length * 4), floats: value.data.length };
      this.arena.f32(w.offset, w.floats).set(value.data);
      cache.set(name, w);
    }
    return w;
  }
}

function toHost(name: string, dtype: HostTensor["dtype"], data: ArrayLike<unknown>): HostTensor["data"] {
  const kind = data.length ? typeof data[0] : "number";
  if (kind !== "number" && kind !== "bigint") throw new ModelError(`input ${name}: elements must be numbers or bigints, got ${kind}`);
  const values = kind === "bigint" ? Array.from(data as ArrayLike<bigint>, Number) : (data as ArrayLike<number>);
  if (dtype === "float32") return Float32Array.from(values);
  return dtype === "bool" ? Uint8Array.from(values) : Float64Array.from(values);
}

function fromHost(t: HostTensor): OutputTensor["data"] {
  if (t.dtype === "float32") return Float32Array.from(t.data);
  return t.dtype === "int64" ? BigInt64Array.from(t.data, (x) => BigInt(x)) : Uint8Array.from(t.data);
}
