import { create } from "@bufbuild/protobuf";
import { clockInfo } from "../clock.js";
import type { DynamicPlan, InitialKernel } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import {
  Backend, KernelArtifactSchema, OpKind, OpSpecSchema, type DeviceProfile, type ExtentPlan, type KernelArtifact, type OpSpec,
} from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opKey } from "../ops.js";
import { probeDevice } from "../probe.js";
import type { WorkerPool } from "../threads/pool.js";
import { median } from "../timing.js";
import { Arena, ArenaWeight, layOut, ModelWeight, type Lifetime } from "./arena.js";
import { ModelEmitter, type ModelEvent, type ModelListener } from "./events.js";
import { fold, type FoldedGraph, type InputShapes } from "./fold.js";
import { fuse, type FusedGraph, type KernelStep } from "./fuse.js";
import { runNode, type ValueMeta } from "./host/index.js";
import { indexedDbKernelStore, type KernelStore } from "./kernel-store.js";
import { referenceKernel, type Bindings, type KernelCode, type Operand, type Weight } from "./kernels.js";
import { DEFAULT_TUNING, KernelSlot, OpTuner, triedOut, type Task, type TuningOptions } from "./op-tuner.js";
import { ModelSession, requestPlans, sessionGroups, type DynamicMatmul } from "./session.js";
import type { LoadOptions, Model, ModelStats, OutputTensor, RunRecord, TensorLike } from "./model.js";
import { ModelError, type GraphInput, type OnnxGraph } from "./onnx.js";
import { halfToFloat, LazyTensor, roundIfFloat, roundToHalfInPlace, sizeOf, type HostTensor } from "./tensor.js";

/** Default of {@link LoadOptions.dynamicRows}: BERT's longest sequence. */
const DEFAULT_DYNAMIC_ROWS = 512;


/** A kernel kept on the device, compiled and tried out for this load. */
interface KeptKernel {
  kernelId: string;
  code: KernelCode;
  artifact: KernelArtifact;
  error: number;
}

/** A compiled program for one set of input shapes. */
interface Plan {
  /** Runs every step; returns the milliseconds spent in host steps. */
  readonly run: () => number;
  readonly write: (feeds: Readonly<Record<string, TensorLike>>) => void;
  readonly read: () => Record<string, OutputTensor>;
  readonly hostSteps: number;
  readonly dynamicSteps: number;
}

/** What every model over an ONNX graph on this thread shares: its inputs and outputs, `run` and its events. */
export abstract class GraphModel implements Model {
  protected readonly events = new ModelEmitter();

  constructor(protected readonly graph: OnnxGraph) {}

  /** The inputs a run must feed: name, element type, declared dimensions (strings for symbolic ones). */
  get inputs(): readonly GraphInput[] {
    return this.graph.inputs;
  }

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
    let result!: Record<string, OutputTensor>;
    await this.runThenTune(feeds, (outputs) => { result = outputs; });
    return result;
  }

  /**
   * One inference, its outputs handed to `deliver` as soon as they are read, then this run's
   * share of tuning. {@link run} returns after both; the model's worker posts the outputs to the
   * page first, so a page never waits for tuning.
   * @internal
   */
  abstract runThenTune(feeds: Readonly<Record<string, TensorLike>>, deliver: (outputs: Record<string, OutputTensor>) => void): Promise<void>;

  on<E extends ModelEvent>(event: E, listener: ModelListener<E>): () => void {
    return this.events.on(event, listener);
  }

  abstract stats(): ModelStats;
  abstract close(): Promise<void>;
}

/** A model run on this thread. Create it with {@link loadModel} (`worker: false`, or where there is no Worker). */
export class LocalModel extends GraphModel {
  private readonly arena: Arena;
  private readonly plans = new Map<string, Plan>();
  private readonly slots = new Map<string, KernelSlot>();
  /** Initializers, shared by every plan (in the arena while a kernel reads them there). */
  private readonly weights = new Map<string, ModelWeight>();
  private readonly tuners = new Map<string, OpTuner>();
  private readonly store?: KernelStore;
  private readonly timeline: RunRecord[] = [];
  private readonly tuning: Required<TuningOptions>;
  private credit = 0;
  private started?: number;
  /** The plan of the latest run. */
  private latest?: Plan;
  private readonly notes: string[] = [];
  /** MatMuls and layer_norms by {@link familyOf}: the rows of their first plan, and a MatMul's uKernel plan once asked for (null: not served). */
  private readonly families = new Map<string, { firstRows: number; plan?: DynamicPlan | null }>();
  private device?: Promise<DeviceProfile>;
  /** Stops listening to `pagehide`. */
  private pageHide?: () => void;

  /** @internal use {@link loadModel}; with `pool`, kernels are split for its threads and run there */
  constructor(graph: OnnxGraph, private readonly options: LoadOptions, why?: string, pool?: WorkerPool) {
    super(graph);
    this.arena = new Arena(pool);
    if (pool) closeWhenCollected.register(this, pool);
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.store = options.store === null ? undefined : (options.store ?? indexedDbKernelStore());
    if (!options.gateway) this.notes.push("no gateway: every op runs its reference kernel (correct, not fast); pass a gateway to tune");
    if (why) this.notes.push(why);
  }

  async runThenTune(feeds: Readonly<Record<string, TensorLike>>, deliver: (outputs: Record<string, OutputTensor>) => void): Promise<void> {
    const plan = await this.planFor(feeds);
    this.latest = plan;
    const start = performance.now();
    this.started ??= start;
    plan.write(feeds);
    const hostMs = plan.run();
    const outputs = plan.read();
    const inferMs = performance.now() - start;
    const record: RunRecord = { atMs: start - this.started, inferMs, hostMs, tuneMs: 0 };
    this.timeline.push(record);
    deliver(outputs);
    record.tuneMs = await this.tune(inferMs);
    this.arena.pool?.park(); // until the app's next run
    // offers and compiled candidates arrive as events: give them a turn even when the app calls run() in a tight loop
    if (this.tuners.size && ![...this.tuners.values()].every((t) => t.settled)) await nextTurn();
  }

  /** Waits for every report sent so far to be acknowledged (or refused), then closes the sessions. */
  async close(): Promise<void> {
    this.pageHide?.();
    await Promise.all([...this.tuners.values()].map((t) => t.report));
    for (const t of this.tuners.values()) t.close();
  }

  /**
   * When the page goes away (`pagehide`: a navigation, a closed tab, the page frozen into the
   * back-forward cache), every op still tuning settles on its kernel and reports what it timed,
   * while the socket can still carry it.
   */
  private flushOnPageHide(): void {
    const page = globalThis as { addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener };
    if (this.pageHide || !page.addEventListener) return;
    const flush = () => {
      const open = [...this.tuners.values()].filter((t) => !t.settled);
      if (open.length) this.options.log?.(`page hidden: ${open.length} ops report what they timed`);
      open.forEach((t) => t.settleNow());
    };
    page.addEventListener("pagehide", flush);
    this.pageHide = () => page.removeEventListener?.("pagehide", flush);
  }

  /** This run's share of tuning ({@link spendCredit}). */
  private async tune(inferMs: number): Promise<number> {
    const start = performance.now();
    this.credit = await spendCredit([...this.tuners.values()], this.credit, this.tuning.budget, inferMs);
    return performance.now() - start;
  }

  stats(): ModelStats {
    const runMs = this.timeline.map((r) => r.inferMs);
    return {
      backend: "wasm",
      threads: this.arena.pool?.threads ?? 1,
      runs: runMs.length,
      medianRunMs: runMs.length ? median(runMs) : NaN,
      lastRunMs: runMs.at(-1) ?? NaN,
      plans: this.plans.size,
      memoryBytes: this.arena.bytes,
      weightBytes: [...this.weights.values()].reduce((held, w) => ({ ...held, [w.held]: held[w.held] + w.bytes }), { javascript: 0, arena: 0, packed: 0 }),
      tuningMemoryBytes: [...this.tuners.values()].reduce((sum, t) => sum + t.benchBytes, 0),
      ops: [...this.slots.values()].map((s) => {
        const t = this.tuners.get(s.key);
        return {
          key: s.key, op: s.op, instances: s.instances, kernelId: s.kernel.id, source: s.kernel.source, fromZoo: t?.fromZoo ?? false,
          restored: t?.restored ?? false,
          ms: t ? t.incumbentMs() : NaN, history: t ? [...t.history] : [], refused: t?.refused.size ?? 0, settled: t?.settled ?? false,
        };
      }),
      hostSteps: this.latest?.hostSteps ?? 0,
      dynamicSteps: this.latest?.dynamicSteps ?? 0,
      notes: [...this.notes, ...[...this.tuners.values()].flatMap((t) => t.notes())],
      timeline: this.timeline.map((r) => ({ ...r })),
      settled: this.plans.size > 0 && [...this.tuners.values()].every((t) => t.settled),
      clock: clockInfo(),
    };
  }

  private async planFor(feeds: Readonly<Record<string, TensorLike>>): Promise<Plan> {
    const shapes = inputShapes(this.graph, feeds);
    const key = JSON.stringify(shapes);
    let plan = this.plans.get(key);
    if (!plan) {
      const start = performance.now();
      const known = new Set(this.slots.keys());
      const folded = fold(this.graph, shapes);
      const program = fuse(folded, this.graph.outputs);
      if (this.options.gateway) await this.planDynamic(program);
      plan = this.compile(shapes, folded, program);
      this.plans.set(key, plan);
      this.options.log?.(`compiled a plan for ${key} in ${(performance.now() - start).toFixed(0)} ms: ${this.slots.size} distinct ops`);
      if (this.options.gateway) {
        await this.connect([...this.slots.values()].filter((s) => !known.has(s.key)));
        this.warmUp(plan, feeds);
      }
    }
    return plan;
  }

  /**
   * Runs a new plan once on the app's feeds before its first inference: V8 runs a function's
   * first calls on its baseline tiers and the activations' pages are mapped at their first
   * write, so without it the app's first inference pays for both (about a third more on the
   * BERT-base layer). The tuners copy each op's real tensors there too. Not an inference of the
   * app's: it is in neither the timeline nor the tuning budget. Without a gateway every op runs
   * the slow reference kernel, so nothing is warmed.
   */
  private warmUp(plan: Plan, feeds: Readonly<Record<string, TensorLike>>): void {
    const start = performance.now();
    plan.write(feeds);
    plan.run();
    this.options.log?.(`warmed the plan up in ${(performance.now() - start).toFixed(0)} ms`);
  }

  /**
   * Opens gateway sessions for new ops and waits for their Welcomes, so the first run already
   * uses the zoo's (or the default) kernels, each checked at its first call. A gateway that
   * cannot be reached leaves the ops on the reference kernels, and a note says why.
   */
  private async connect(slots: KernelSlot[]): Promise<void> {
    const log = this.options.log ?? (() => undefined);
    const device = await this.probe();
    this.flushOnPageHide();
    for (const group of sessionGroups(slots)) {
      const kept = await this.restore(group, device.fingerprint);
      const session = new ModelSession(this.options.gateway!, device, group.map((s) => s.op), {
        client: this.options.client, reconnect: this.options.reconnect, log,
        onConnection: (state, detail) => this.events.emit("connection", { state, ops: group.length, detail }),
      });
      const clock = () => performance.now() - (this.started ?? performance.now());
      const tunerOf = (slot: KernelSlot) => {
        const tuner = new OpTuner(slot, this.arena, session, this.tuning, clock, log, this.events.emit, this.keeper(device.fingerprint, slot.key));
        this.tuners.set(slot.key, tuner);
        const k = kept.get(slot.key);
        if (k) tuner.adoptRestored(k.kernelId, k.code, k.artifact, k.error);
        return tuner;
      };
      const welcomed = session.welcome.then(
        (welcome) => {
          this.events.emit("connection", { state: "open", ops: group.length, detail: "" });
          return welcome;
        },
        (e: Error) => {
          this.notes.push(`the gateway did not answer (${e.message}): ${group.length - kept.size} ops run their reference kernels`
            + (kept.size ? `, ${kept.size} the kernels kept on this device` : ""));
          this.events.emit("connection", { state: "failed", ops: group.length, detail: e.message });
          return undefined;
        });
      // an op with a kept kernel runs it from the first call; the Welcome's kernel is then timed against it
      const tuners = new Map(group.filter((slot) => kept.has(slot.key)).map((slot) => [slot.key, tunerOf(slot)]));
      const greet = async (welcome: Map<string, InitialKernel> | undefined): Promise<void> => {
        if (!welcome) return session.close();
        await Promise.all(group.map((slot) => {
          const tuner = tuners.get(slot.key);
          return tuner ? tuner.reconcile(welcome.get(slot.key)!) : tunerOf(slot).offerInitial(welcome.get(slot.key)!);
        }));
      };
      if (kept.size === group.length) {
        void welcomed.then(greet); // every op has a kept kernel: the first run need not wait for the gateway
      } else {
        await greet(await welcomed);
      }
    }
  }

  /** The kernels kept on this device for these ops, each compiled and tried out; a bad entry is skipped. */
  private async restore(slots: KernelSlot[], fingerprint: string): Promise<Map<string, KeptKernel>> {
    const kept = new Map<string, KeptKernel>();
    if (!this.store) return kept;
    for (const slot of slots) {
      const entry = await this.store.get(fingerprint, slot.key);
      if (!entry?.wasm) continue;
      const artifact = create(KernelArtifactSchema, {
        ref: { kernelId: entry.kernelId, op: slot.op, backend: Backend.WASM },
        code: { case: "wasm", value: entry.wasm }, metadataJson: entry.metadataJson,
      });
      try {
        const { code, error } = await triedOut(artifact, slot.op, this.tuning.tolerance, this.arena.pool);
        kept.set(slot.key, { kernelId: entry.kernelId, code, artifact, error });
      } catch (e) {
        this.options.log?.(`  ${slot.key}: the kernel kept on this device is unusable (${(e as Error).message}); ignored`);
      }
    }
    return kept;
  }

  /** What keeps an op's settled kernel in the store, for the next load on this device kind. */
  private keeper(fingerprint: string, op: string): (kernelId: string, artifact: KernelArtifact, ms: number) => void {
    return (kernelId, artifact, ms) => {
      if (!this.store || artifact.code.case !== "wasm") return;
      this.store.put({
        format: 1, fingerprint, op, kernelId, wasm: artifact.code.value, metadataJson: artifact.metadataJson, ms, savedAt: Date.now(),
      }).catch((e: Error) => this.options.log?.(`  ${op}: kernel not kept on this device (${e.message})`));
    };
  }

  private probe(): Promise<DeviceProfile> {
    return (this.device ??= probeDevice(this.options.fingerprint, undefined, undefined, this.arena.pool?.threads ?? 1));
  }

  /**
   * A MatMul met again with other rows than in the model's first plan has a dynamic M: asks the
   * gateway once per MatMul for its uKernel plan over 1..dynamicRows. Those not served keep a
   * kernel per length.
   */
  private async planDynamic(program: FusedGraph): Promise<void> {
    const most = this.options.dynamicRows ?? DEFAULT_DYNAMIC_ROWS;
    if (most < 1) return;
    const asks = new Map<string, DynamicMatmul>();
    for (const step of program.steps) {
      if (step.kind !== "kernel" || !ROW_SLICED.has(step.op.kind)) continue;
      const family = familyOf(step.op);
      const rows = step.op.shape[0];
      const known = this.families.get(family);
      if (!known) this.families.set(family, { firstRows: rows });
      else if (step.op.kind === OpKind.MATMUL && known.plan === undefined && rows !== known.firstRows && !asks.has(family)) {
        asks.set(family, { op: withRows(step.op, most), lo: 1, hi: most });
      }
    }
    if (asks.size === 0) return;
    const plans = await requestPlans(this.options.gateway!, await this.probe(), [...asks.values()], this.options.client, this.options.log);
    for (const [family, ask] of asks) this.families.get(family)!.plan = plans.get(ask) ?? null;
    this.options.log?.(`uKernel plans for ${plans.size} of ${asks.size} MatMuls whose rows changed`);
    const missing = asks.size - plans.size;
    if (missing) {
      this.notes.push(`${missing} MatMul${missing > 1 ? "s" : ""} whose rows change run${missing > 1 ? "" : "s"} a kernel per length: the gateway served no uKernel plan for ${missing > 1 ? "them" : "it"}`);
    }
  }

  /**
   * How a step's rows are covered by uKernel calls, when its rows changed since the first plan: a
   * MatMul by its own plan; a layer_norm, whose rows are independent too, by the row pieces of any
   * MatMul's plan (its uKernels are layer_norms of those rows).
   */
  private extentPlan(step: KernelStep): ExtentPlan | undefined {
    const family = this.families.get(familyOf(step.op));
    const rows = step.op.shape[0];
    if (!family || rows === family.firstRows || !ROW_SLICED.has(step.op.kind)) return undefined;
    const plans = step.op.kind === OpKind.MATMUL ? [family.plan] : [...this.families.values()].map((f) => f.plan);
    for (const plan of plans) {
      const extent = plan ? plan.plans[rows - plan.lo] : undefined;
      if (extent?.extent === rows) return extent;
    }
    return undefined;
  }

  private compile(shapes: InputShapes, folded: FoldedGraph, { steps, aliases }: FusedGraph): Plan {
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
    // a dynamic MatMul's last uKernel call may run past its rows: A, C and the residual get room for the padded rows
    const dynamic = new Map<KernelStep, ExtentPlan>();
    const paddedBytes = new Map<string, number>();
    for (const s of steps) {
      if (s.kind !== "kernel") continue;
      const plan = this.extentPlan(s);
      if (!plan) continue;
      dynamic.set(s, plan);
      for (const [name, cols] of rowOperands(s.op)) {
        const v = s.operands[name];
        if (v === undefined || isConst(base(v))) continue;
        paddedBytes.set(base(v), Math.max(paddedBytes.get(base(v)) ?? 0, plan.paddedExtent * cols * 4));
      }
    }
    const layout = layOut([...lifetimes].map(([name, l]): Lifetime => ({
      name, bytes: Math.max(sizeOf(meta(name).shape) * 4, paddedBytes.get(name) ?? 0), ...l,
    })));
    const region = this.arena.alloc(layout.bytes);
    const foldedConsts = new Map<string, ArenaWeight>();
    const operand = (v: string): Operand => {
      const b = base(v);
      return { offset: region + layout.offsets.get(b)!, floats: sizeOf(meta(b).shape) };
    };
    const bindings = (operands: Record<string, string>): Bindings => {
      const named = Object.entries(operands);
      return {
        operands: Object.fromEntries(named.filter(([, v]) => !isConst(base(v))).map(([k, v]) => [k, operand(v)])),
        weights: Object.fromEntries(named.filter(([, v]) => isConst(base(v))).map(([k, v]) => [k, this.weight(base(v), values, foldedConsts)])),
      };
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

    const half = this.graph.half;
    let hostMs = 0;
    const calls = steps.map((s): (() => void) => {
      if (s.kind === "kernel") {
        const plan = dynamic.get(s);
        const call = plan ? this.uKernelCalls(s, plan, bindings(s.operands)) : this.slotFor(s).use(bindings(s.operands));
        if (!half.has(s.operands.C)) return call;
        const c = operand(s.operands.C);
        return () => { call(); roundToHalfInPlace(this.arena.f32(c.offset, c.floats)); };
      }
      const node = s.node;
      return () => {
        const t0 = performance.now();
        const out = node.outputs.map((o) => (o && inArena.has(base(o)) ? read(o) : undefined));
        const results = runNode(node, node.inputs.map((v) => (v ? read(v) : undefined)), out);
        results.forEach((r, i) => {
          if (!node.outputs[i]) return;
          if (half.has(node.outputs[i])) roundIfFloat(r);
          if (!out[i]) host.set(base(node.outputs[i]), r);
        });
        hostMs += performance.now() - t0;
      };
    });

    return {
      hostSteps: steps.length - steps.filter((s) => s.kind === "kernel").length,
      dynamicSteps: dynamic.size,
      write: (feeds) => {
        for (const input of this.graph.inputs) {
          const data = feeds[input.name].data;
          const b = base(input.name);
          const values = toHost(input.name, input.dtype, data, this.graph.half.has(input.name));
          if (inArena.has(b)) {
            const o = operand(b);
            this.arena.f32(o.offset, o.floats).set(values);
          } else {
            host.set(b, { dtype: input.dtype, shape: shapes[input.name], data: values });
          }
        }
      },
      run: () => {
        hostMs = 0;
        for (const call of calls) call();
        return hostMs;
      },
      read: () => Object.fromEntries(this.graph.outputs.map((o) => {
        const t = read(o);
        return [o, { type: t.dtype, dims: [...t.shape], data: fromHost(t) }];
      })),
    };
  }

  /**
   * A step whose rows changed as its plan's uKernel calls, one row slice after another. Each
   * uKernel is an op of its own (the step's op with the uKernel's rows), with one slot, kernel and
   * tuning for every length. The padded rows of A and the residual are zeroed first: they hold
   * whatever the arena held there before, and the calls that read them write only C's padding.
   */
  private uKernelCalls(step: KernelStep, plan: ExtentPlan, whole: Bindings): () => void {
    const rows = step.op.shape[0];
    const calls: (() => void)[] = [];
    let row = 0;
    for (const piece of plan.pieces) {
      const op = withRows(step.op, piece.rows);
      const slot = this.slotFor({ ...step, op, key: opKey(op) });
      for (let i = 0; i < piece.count; i++, row += piece.rows) calls.push(slot.use(sliceRows(step.op, whole, row, piece.rows)));
    }
    const padding = rowOperands(step.op).filter(([name]) => name !== "C" && whole.operands[name])
      .map(([name, cols]) => ({ offset: whole.operands[name].offset + rows * cols * 4, floats: (plan.paddedExtent - rows) * cols }));
    return () => {
      for (const p of padding) if (p.floats > 0) this.arena.f32(p.offset, p.floats).fill(0);
      for (const call of calls) call();
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

  /**
   * A constant operand. An initializer is held once for the model (see {@link ModelWeight}): the
   * graph, and this plan's values, read it through the weight from its first use on; a folded
   * constant is copied in once per plan (`local`) while a kernel holds it.
   */
  private weight(name: string, values: ReadonlyMap<string, ValueMeta>, local: Map<string, ArenaWeight>): Weight {
    const meta = values.get(name)!;
    const initializer = this.graph.initializers.get(name);
    if (!initializer) {
      let w = local.get(name);
      if (!w) {
        w = new ArenaWeight(this.arena, () => floatsOf(meta.value!.data)); // read when held: a view of a model weight is lazy
        local.set(name, w);
      }
      return w;
    }
    let w = this.weights.get(name);
    if (!w) {
      w = new ModelWeight(this.arena, floatsOf(initializer.data));
      this.weights.set(name, w);
      if (initializer.dtype === "float32") (this.graph.initializers as Map<string, HostTensor>).set(name, w.tensor(initializer));
    }
    if (initializer.dtype === "float32" && !(meta.value instanceof LazyTensor)) (values as Map<string, ValueMeta>).set(name, { ...meta, value: this.graph.initializers.get(name) });
    return w;
  }
}

/** A constant's elements as a kernel reads them. */
const floatsOf = (data: HostTensor["data"]): Float32Array => (data instanceof Float32Array ? data : Float32Array.from(data as ArrayLike<number>));

/** A model's worker pool stops once the model is gone (its threads would otherwise wait forever). */
const closeWhenCollected = new FinalizationRegistry<WorkerPool>((pool) => pool.close());

/** An op's key with its rows left out: the ops that differ only in M (a MatMul) or in rows (a layer_norm). */
const familyOf = (op: OpSpec): string => opKey(withRows(op, 0));

const withRows = (op: OpSpec, rows: number): OpSpec => create(OpSpecSchema, { ...op, shape: [rows, ...op.shape.slice(1)] });

/** The ops whose rows (M of a MatMul, the rows of a layer_norm) may run as uKernel calls over row slices. */
const ROW_SLICED = new Set([OpKind.MATMUL, OpKind.LAYER_NORM]);

/**
 * The operands of an op laid out by rows of C, with their row length: a MatMul's A (K), C and
 * Residual (N); a layer_norm's A and C (its columns).
 */
const rowOperands = (op: OpSpec): [string, number][] => (op.kind === OpKind.MATMUL
  ? [["A", op.shape[1]], ["C", op.shape[2]], ["Residual", op.shape[2]]]
  : [["A", op.shape[1]], ["C", op.shape[1]]]);

/** An op's bindings for `count` rows from `row` on: the row operands sliced, the rest (B, bias, γ, β) whole. */
function sliceRows(op: OpSpec, whole: Bindings, row: number, count: number): Bindings {
  const operands = { ...whole.operands };
  for (const [name, cols] of rowOperands(op)) {
    const o = whole.operands[name];
    if (o) operands[name] = { offset: o.offset + row * cols * 4, floats: count * cols };
  }
  return { operands, weights: whole.weights };
}

/** The shapes of a run's feeds by input name; throws a ModelError naming a missing or unknown input. */
export function inputShapes(graph: OnnxGraph, feeds: Readonly<Record<string, TensorLike>>): Record<string, readonly number[]> {
  const names = graph.inputs.map((i) => i.name).join(", ");
  const shapes: Record<string, readonly number[]> = {};
  for (const input of graph.inputs) {
    const feed = feeds[input.name];
    if (!feed) throw new ModelError(`input ${input.name} is missing (inputs: ${names})`);
    shapes[input.name] = [...feed.dims];
  }
  for (const name of Object.keys(feeds)) {
    if (!shapes[name]) throw new ModelError(`${name} is not an input of the model (inputs: ${names})`);
  }
  return shapes;
}

/**
 * Tuning between runs: the budget's share of this run's inference time is added to a credit
 * (capped at one inference), and tasks (checks, timed pairs) run round-robin over the ops while
 * the credit covers them, so tuning takes the budget on average (one task at most past the credit,
 * once it is full). Nothing runs while the page is hidden. Returns the credit left.
 */
export async function spendCredit(tuners: readonly { next(): Task | undefined }[],
  credit: number, budget: number, inferMs: number): Promise<number> {
  if (tuners.length === 0 || pageHidden()) return credit;
  const cap = inferMs;
  credit = Math.min(credit + budget * inferMs, cap);
  for (let progress = true; progress;) {
    progress = false;
    for (const tuner of tuners) {
      const task = tuner.next();
      // a task dearer than one inference runs once the credit is full, or it would never run
      if (!task || (task.costMs > credit && credit < cap)) continue;
      const t0 = performance.now();
      await task.run();
      credit -= performance.now() - t0;
      progress = true;
    }
  }
  return credit;
}

/** One turn of the event loop (a macrotask), without the 4 ms clamp of nested setTimeout in browsers. */
export function nextTurn(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: (f: () => void) => void }).setImmediate;
  if (immediate) return new Promise((resolve) => immediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { channel.port1.close(); resolve(); };
    channel.port2.postMessage(undefined);
  });
}

export const pageHidden = () => (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState === "hidden";

/**
 * The typed arrays a feed of each element type may come in: onnxruntime-web's, and a Float64Array
 * for numbers (how the engine holds integers); a plain array of numbers (or bigints for integers)
 * fits every type.
 */
const FEED_ARRAYS: Record<HostTensor["dtype"], readonly string[]> = {
  float32: ["Float32Array", "Float64Array"], int64: ["BigInt64Array", "Int32Array", "Float64Array"], bool: ["Uint8Array"],
  int8: ["Int8Array"], uint8: ["Uint8Array"],
};

/**
 * A feed's elements as the engine holds the input's type; a ModelError names a feed of another
 * type. A float16 input (`half`) also takes its values' bits in a Uint16Array, as onnxruntime-web
 * holds float16 tensors.
 */
export function toHost(name: string, dtype: HostTensor["dtype"], data: ArrayLike<unknown>, half = false): HostTensor["data"] {
  if (half && data instanceof Uint16Array) return Float32Array.from(data, halfToFloat);
  const array = ArrayBuffer.isView(data) ? data.constructor.name : undefined;
  if (array && !FEED_ARRAYS[dtype].includes(array)) {
    const accepted = [...FEED_ARRAYS[dtype], ...(half ? ["Uint16Array (float16 bits)"] : []), "an array of numbers"];
    throw new ModelError(`input ${name}: ${half ? "float16" : dtype} expected (${accepted.join(", ")}), got a${/^[AEIOU]/.test(array) ? "n" : ""} ${array}`);
  }
  const kind = data.length ? typeof data[0] : "number";
  if (kind !== "number" && !(kind === "bigint" && dtype !== "float32")) throw new ModelError(`input ${name}: ${dtype} elements must be numbers${dtype === "float32" ? "" : " or bigints"}, got ${kind}`);
  const values = kind === "bigint" ? Array.from(data as ArrayLike<bigint>, Number) : (data as ArrayLike<number>);
  if (dtype === "float32") return Float32Array.from(values);
  if (dtype === "int8") return Int8Array.from(values);
  return dtype === "bool" || dtype === "uint8" ? Uint8Array.from(values) : Float64Array.from(values);
}

export function fromHost(t: HostTensor): OutputTensor["data"] {
  if (t.dtype === "float32") return Float32Array.from(t.data);
  if (t.dtype === "int8") return Int8Array.from(t.data);
  return t.dtype === "int64" ? BigInt64Array.from(t.data, (x) => BigInt(x)) : Uint8Array.from(t.data);
}
