import { create } from "@bufbuild/protobuf";
import { clockInfo } from "../clock.js";
import { SessionLimit, type DynamicPlan } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, EpilogueKind, OpKind, OpSpecSchema, type DeviceProfile, type ExtentPlan, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { fromHost, inputShapes, toHost } from "../graph/feeds.js";
import { fold, type FoldedGraph, type InputShapes } from "../graph/fold.js";
import { bucketAttention } from "../graph/buckets.js";
import { fuse, type FusedGraph, type KernelStep } from "../graph/fuse.js";
import { runNode, type ValueMeta } from "../graph/host/index.js";
import type { OnnxGraph } from "../graph/onnx.js";
import { halfWords, LazyTensor, roundIfFloat, roundToHalfInPlace, sizeOf, type HostTensor } from "../graph/tensor.js";
import { GraphModel, type LoadOptions, type ModelStats, type OutputTensor, type RunRecord, type TensorLike } from "../model/model.js";
import type { DecoderLayout } from "../model/generate.js";
import { requestPlans, type DynamicMatmul } from "../model/session.js";
import { ModelTuning, nextTurn } from "../model/tuning.js";
import { bytesAsWords, flopsOf, opKey, operandShapes, operandTypes, scratchOperands, wordsOf } from "../ops.js";
import { probeDevice } from "../probe.js";
import type { WorkerPool } from "../threads/pool.js";
import { median } from "../timing.js";
import { Arena, ArenaWeight, layOut, ModelWeight, type Lifetime } from "./arena.js";
import { type Bindings, type Bound, type Operand, type Weight } from "./kernels.js";
import { baseKernel, genericUnavailable } from "./generic.js";
import { KernelSlot, OpTuner } from "./op-tuner.js";

/** Default of {@link LoadOptions.dynamicRows}: BERT's longest sequence. */
const DEFAULT_DYNAMIC_ROWS = 512;


/**
 * A MatMul or layer_norm as its rows vary ({@link familyOf}): the rows of its first plan; for a
 * MatMul, whether its uKernel plan was asked for, and that plan once answered (null: not served).
 */
interface RowFamily {
  readonly firstRows: number;
  asked?: boolean;
  plan?: DynamicPlan | null;
}

/** A compiled program for one set of input shapes. */
interface Plan {
  /** Runs every step; returns the milliseconds spent in host steps. */
  readonly run: () => number;
  readonly write: (feeds: Readonly<Record<string, TensorLike>>) => void;
  readonly read: () => Record<string, OutputTensor>;
  readonly hostSteps: number;
  readonly dynamicSteps: number;
  /**
   * Steps whose rows changed, run on their generic (or reference) kernels while the uKernel plan
   * that would cover them is still asked for: once it is answered the plan goes stale, and its
   * shapes' next run compiles them again (see {@link WasmModel.planDynamic}).
   */
  readonly interimSteps: number;
  stale?: boolean;
  /** The held KV cache its pasts and presents are bound to (see {@link HeldCache}), if any. */
  readonly held?: HeldCache;
  /** Gives its activations' region and its kernels' bindings back (the plan is dropped). */
  readonly release: () => void;
}

/**
 * A generation's KV cache, held in the arena for its whole length: two buffers per
 * `past_key_values.N.*` input, each of `rows` positions. A cache of n positions lives in the
 * buffer of n's parity, so a decode step reads its past from one and its Concat writes the
 * present (one position more) into the other, the next step's past: nothing is copied between
 * steps, and a plan per past length binds the same buffers.
 */
interface HeldCache {
  readonly offset: number;
  readonly bytes: number;
  readonly rows: number;
  /** Each past input's buffers, and its present output's. */
  readonly entries: readonly { past: string; present: string; buffers: readonly [number, number] }[];
}

/** Memory that plans lay their activations out in, and how many plans do. */
interface ActivationBlock {
  readonly offset: number;
  readonly bytes: number;
  plans: number;
}

/** Positions a held cache is made for at least (and in powers of two above): the next generations reuse it, and every plan bound to it. */
const HELD_ROWS = 64;

/**
 * Flops an op may take on its float64 reference kernel while the first inference runs before the
 * gateway answers (a softmax's or a layer_norm's rows: a few milliseconds); an op above it with no
 * generic kernel (a convolution) waits for the Welcome's.
 */
const REFERENCE_FLOPS = 2 ** 22;

/** Whether a new op's kernel can serve the first inference without the gateway's: generic, kept, or a small reference. */
const runsWithoutGateway = (slot: KernelSlot): boolean => slot.kernel.source !== "reference" || flopsOf(slot.op) <= REFERENCE_FLOPS;

/** A model run on this thread with Wasm kernels. Create it with {@link loadModel} (`worker: false`, or where there is no Worker). */
export class WasmModel extends GraphModel {
  private readonly arena: Arena;
  private readonly plans = new Map<string, Plan>();
  private readonly slots = new Map<string, KernelSlot>();
  /** Ops first met in a decode step, on their generic (or reference) kernels with no session yet (see planFor). */
  private readonly untuned = new Set<string>();
  /** The ops the plan being compiled uses (a uKernel plan's calls included). */
  private readonly touched = new Set<string>();
  /** The ops each plan uses. */
  private readonly planOps = new WeakMap<Plan, string[]>();
  /** Ops met again in decode steps, waiting to share a session (see tuneMetAgain). */
  private readonly metAgain: KernelSlot[] = [];
  /** Sessions being opened in the background (see openSessions): close() waits for them. */
  private opening: Promise<void> = Promise.resolve();
  private sessionsOpening = 0;
  /** Initializers, shared by every plan (in the arena while a kernel reads them there). */
  private readonly weights = new Map<string, ModelWeight>();
  private readonly tuning: ModelTuning<KernelSlot, OpTuner>;
  private readonly timeline: RunRecord[] = [];
  private started?: number;
  /** The plan of the latest run. */
  private latest?: Plan;
  private readonly notes: string[] = [];
  /** MatMuls and layer_norms by {@link familyOf} (see {@link RowFamily}). */
  private readonly families = new Map<string, RowFamily>();
  /** Aborted by close(): a uKernel plan still asked for is waited for no more. */
  private readonly closing = new AbortController();
  private device?: Promise<DeviceProfile>;
  /** The KV cache of the generate() call under way, when this model holds it (see {@link holdCache}). */
  private held?: HeldCache;
  /** Where the latest held cache was, so that the next one is claimed there and the plans bound to it stay valid. */
  private lastHeld?: HeldCache;
  /** The block new plans lay their activations out in (see {@link activations}). */
  private block?: ActivationBlock;

  /** @internal use {@link loadModel}; with `pool`, kernels are split for its threads and run there */
  constructor(graph: OnnxGraph, private readonly options: LoadOptions, why?: string, pool?: WorkerPool) {
    super(graph);
    this.arena = new Arena(pool);
    if (pool) closeWhenCollected.register(this, pool);
    this.tuning = new ModelTuning(options, Backend.WASM, this.events, this.notes, () => performance.now() - (this.started ?? performance.now()),
      (slot, session, context) => new OpTuner(slot, this.arena, session, context));
    // without WebAssembly at all, loadModel's note says it all
    const wasm = typeof WebAssembly === "object", noGeneric = wasm ? genericUnavailable() : undefined;
    if (noGeneric) this.notes.push(`${noGeneric}: ops start on the SDK's reference kernels (correct, slow) until the gateway's are checked`);
    if (!options.gateway && wasm) {
      this.notes.push(`no gateway: ${noGeneric ? "every op runs its reference kernel" : "products run the SDK's generic kernels, the other ops their reference ones"}`
        + " (correct, not tuned); pass a gateway to tune");
    }
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
    record.tuneMs = await this.tuning.spend(inferMs);
    // until the app's next run; a generation's next step follows at once (its helpers spin for it): it parks when done
    if (!this.generating) this.arena.pool?.park();
    // offers and compiled candidates arrive as events: give them a turn even when the app calls run() in a tight loop
    if (!this.settled) await nextTurn();
  }

  /** Waits for every report sent so far to be acknowledged (or refused), then closes the sessions. */
  close(): Promise<void> {
    this.closing.abort();
    // sessions a decode step opened in the background are opened by then, and closed with the rest
    return this.opening.then(() => this.tuning.close());
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
      tuningMemoryBytes: this.tuning.benchBytes,
      kvCacheBytes: this.cacheBytes,
      ops: [...this.slots.values()].map((s) => this.tuning.opStats(s, s.kernel.source)),
      hostSteps: this.latest?.hostSteps ?? 0,
      dynamicSteps: this.latest?.dynamicSteps ?? 0,
      interimSteps: this.latest?.interimSteps ?? 0,
      notes: [...this.notes, ...this.tuning.tunerNotes()],
      timeline: this.timeline.map((r) => ({ ...r })),
      settled: this.plans.size > 0 && this.settled,
      clock: clockInfo(),
    };
  }

  /** The first decode step's plan, compiled while the prompt's runs, its ops' sessions opened without waiting for them. */
  protected override async planAhead(feeds: Readonly<Record<string, TensorLike>>): Promise<void> {
    if (this.options.gateway) await this.planFor(feeds, true);
  }

  protected override holdCache(layout: DecoderLayout, rows: number): boolean {
    const held = Math.max(HELD_ROWS, 2 ** Math.ceil(Math.log2(rows)));
    const last = this.lastHeld;
    if (last?.rows === held && this.arena.claim(last.offset, last.bytes)) {
      this.held = last; // where it was: the plans bound to it stay valid
      return true;
    }
    const floats = layout.cache.map((c) => c.heads * c.headDim);
    const bytes = floats.reduce((sum, f) => sum + 2 * f * held * 4, 0);
    const offset = this.arena.alloc(bytes);
    let at = offset;
    const buffer = (f: number) => (at += f * held * 4) - f * held * 4;
    this.held = this.lastHeld = {
      offset, bytes, rows: held,
      entries: layout.cache.map((c, i) => ({ past: c.past, present: c.present, buffers: [buffer(floats[i]), buffer(floats[i])] })),
    };
    return true;
  }

  protected override releaseCache(): void {
    if (!this.held) return;
    this.arena.release(this.held.offset, this.held.bytes);
    this.held = undefined;
  }

  private async planFor(feeds: Readonly<Record<string, TensorLike>>, ahead = false): Promise<Plan> {
    const shapes = inputShapes(this.graph, feeds);
    const key = JSON.stringify(shapes);
    let plan = this.plans.get(key);
    if (plan && (plan.held !== this.held || plan.stale)) {
      // bound to another cache (or to one freed since), or compiled before the uKernel plans it waited for: compiled again
      plan.release();
      this.plans.delete(key);
      plan = undefined;
    }
    if (!plan) {
      const start = performance.now();
      const known = new Set(this.slots.keys());
      this.touched.clear();
      const folded = fold(this.graph, shapes);
      const program = fuse(folded, this.graph.outputs, { float16: this.graph.half });
      if (this.options.gateway) this.planDynamic(program);
      plan = this.compile(shapes, folded, program);
      this.plans.set(key, plan);
      this.planOps.set(plan, [...this.touched]);
      this.options.log?.(`compiled a plan for ${key} in ${(performance.now() - start).toFixed(0)} ms: ${this.slots.size} distinct ops`);
      const fresh = [...this.slots.values()].filter((s) => !known.has(s.key));
      if (this.options.gateway && ahead) {
        this.metAgain.push(...fresh);
        this.openMetAgain();
      } else if (this.options.gateway && this.decoding) {
        // a decode step's new past length: its new ops, met once, run their generic (or reference) kernels; an
        // op met again in a later length's plan (a one-row product, a bucket's attention) is one
        // of many decode steps' and is tuned from then on, its session opened at once without
        // waiting for it
        this.tuneMetAgain(plan, true);
        fresh.forEach((s) => this.untuned.add(s.key));
      } else if (this.options.gateway && fresh.every(runsWithoutGateway)) {
        // no op needs the gateway's kernel to run: the first inference starts at once on the generic
        // (or small reference) kernels, while the kernels kept on this device are checked and the
        // sessions open; each op swaps in its kept kernel, then the Welcome's, once checked
        this.openSessions(fresh);
      } else if (this.options.gateway) {
        await this.tuning.connect(fresh, await this.probe());
        this.warmUp(plan, feeds);
      }
    } else if (this.options.gateway && this.untuned.size) {
      this.tuneMetAgain(plan);
    }
    return plan;
  }

  /**
   * The ops of `plan` first met in an earlier decode step are tuned from now on: they share
   * sessions, a full Hello's worth at a time unless `now` (a session per op would soon reach the
   * gateway's cap of connections an address); the rest open when the generation ends.
   */
  private tuneMetAgain(plan: Plan, now = false): void {
    const again = (this.planOps.get(plan) ?? []).filter((key) => this.untuned.has(key)).map((key) => this.slots.get(key)!);
    again.forEach((s) => this.untuned.delete(s.key));
    this.metAgain.push(...again);
    if (this.metAgain.length >= SessionLimit.OPS_PER_HELLO || (now && again.length)) this.openMetAgain();
  }

  protected override generated(): void {
    this.arena.pool?.park();
    this.openMetAgain();
  }

  /** Opens sessions, without waiting for them, for the ops met again so far (see tuneMetAgain). */
  private openMetAgain(): void {
    this.openSessions(this.metAgain.splice(0));
  }

  /** Opens sessions for these ops without waiting for them: each op runs the kernel it has until its Welcome's is checked. */
  private openSessions(ops: KernelSlot[]): void {
    if (!ops.length) return;
    this.sessionsOpening++;
    const opened = this.probe().then((device) => this.tuning.connect(ops, device, undefined, { wait: false }))
      .finally(() => this.sessionsOpening--);
    this.opening = Promise.all([this.opening, opened]).then(() => undefined, () => undefined);
  }

  /** Whether every op tunes no more (sessions still opening have ops to tune, a uKernel plan asked for has uKernels). */
  private get settled(): boolean {
    return this.sessionsOpening === 0 && !this.plansAsked([...this.families.values()]) && this.tuning.settled;
  }

  /** Whether any of these families' uKernel plan was asked for and not answered yet. */
  private plansAsked(families: RowFamily[]): boolean {
    return families.some((f) => f.asked && f.plan === undefined);
  }

  /**
   * Runs a new plan once on the app's feeds before its first inference: V8 runs a function's
   * first calls on its baseline tiers and the activations' pages are mapped at their first
   * write, so without it the app's first inference pays for both (about a third more on the
   * BERT-base layer). The tuners copy each op's real tensors there too. Not an inference of the
   * app's: it is in neither the timeline nor the tuning budget. Only a plan that waited for its
   * Welcome (an op with no generic kernel, too slow on its reference) is warmed: one that starts
   * at once would pay for a second inference before its first.
   */
  private warmUp(plan: Plan, feeds: Readonly<Record<string, TensorLike>>): void {
    const start = performance.now();
    plan.write(feeds);
    plan.run();
    this.options.log?.(`warmed the plan up in ${(performance.now() - start).toFixed(0)} ms`);
  }

  private probe(): Promise<DeviceProfile> {
    return (this.device ??= probeDevice(this.options.fingerprint, undefined, undefined, this.arena.pool?.threads ?? 1));
  }

  /**
   * A MatMul met again with other rows than in the model's first plan has a dynamic M: asks the
   * gateway once per MatMul for its uKernel plan over 1..dynamicRows, without waiting for the
   * answer. Until it comes, the steps it would cover run their generic kernels ({@link awaitsPlan});
   * then the plans compiled meanwhile go stale and are compiled again at their next run. MatMuls
   * it does not serve keep a kernel per length.
   */
  private planDynamic(program: FusedGraph): void {
    const most = this.options.dynamicRows ?? DEFAULT_DYNAMIC_ROWS;
    if (most < 1) return;
    const asks = new Map<string, DynamicMatmul>();
    for (const step of program.steps) {
      if (step.kind !== "kernel" || !ROW_SLICED.has(step.op.kind)) continue;
      const family = familyOf(step.op);
      const rows = step.op.shape[0];
      // one row (a decode step's) is an op of its own (see extentPlan): nothing to ask the gateway, no step to hold up,
      // and not the rows a family starts at (a generation plans its first decode step before its prompt's)
      if (rows === 1) continue;
      const known = this.families.get(family);
      if (!known) this.families.set(family, { firstRows: rows });
      else if (step.op.kind === OpKind.MATMUL && !known.asked && rows !== known.firstRows) {
        known.asked = true;
        asks.set(family, { op: withRows(step.op, most), lo: 1, hi: most });
      }
    }
    if (asks.size === 0) return;
    const answer = (plans: ReadonlyMap<DynamicMatmul, DynamicPlan>) => {
      for (const [family, ask] of asks) this.families.get(family)!.plan = plans.get(ask) ?? null;
      for (const plan of this.plans.values()) if (plan.interimSteps) plan.stale = true;
      this.options.log?.(`uKernel plans for ${plans.size} of ${asks.size} MatMuls whose rows changed`);
      const missing = asks.size - plans.size;
      if (missing) {
        this.notes.push(`${missing} MatMul${missing > 1 ? "s" : ""} whose rows change run${missing > 1 ? "" : "s"} a kernel per length: the gateway served no uKernel plan for ${missing > 1 ? "them" : "it"}`);
      }
    };
    const answered = this.probe()
      .then((device) => requestPlans(this.options.gateway!, device, [...asks.values()], this.options.client, this.options.log, this.closing.signal))
      .then(answer, (e: Error) => {
        this.options.log?.(`  uKernel plans not served (${e.message})`);
        answer(new Map());
      });
    this.opening = Promise.all([this.opening, answered]).then(() => undefined, () => undefined);
  }

  /**
   * The family of a step whose rows changed since its first plan and may run as uKernel calls
   * (a MatMul or a layer_norm, not one row); undefined for any other step.
   */
  private changedRows(step: KernelStep): RowFamily | undefined {
    const family = this.families.get(familyOf(step.op));
    const rows = step.op.shape[0];
    // one row (a decode step's) is an op of its own, met at every step: a matrix-vector product tuned as such
    if (!family || rows === family.firstRows || rows === 1 || !ROW_SLICED.has(step.op.kind)) return undefined;
    return family;
  }

  /** Whether a step whose rows changed waits for a uKernel plan still asked for (a layer_norm: any MatMul's). */
  private awaitsPlan(step: KernelStep): boolean {
    const family = this.changedRows(step);
    if (!family) return false;
    return this.plansAsked(step.op.kind === OpKind.MATMUL ? [family] : [...this.families.values()]);
  }

  /**
   * How a step's rows are covered by uKernel calls, when its rows changed since the first plan: a
   * MatMul by its own plan; a layer_norm, whose rows are independent too, by the row pieces of any
   * MatMul's plan (its uKernels are layer_norms of those rows).
   */
  private extentPlan(step: KernelStep): ExtentPlan | undefined {
    const family = this.changedRows(step);
    if (!family) return undefined;
    const rows = step.op.shape[0];
    const plans = step.op.kind === OpKind.MATMUL ? [family.plan] : [...this.families.values()].map((f) => f.plan);
    for (const plan of plans) {
      const extent = plan ? plan.plans[rows - plan.lo] : undefined;
      if (extent?.extent === rows) return extent;
    }
    return undefined;
  }

  private compile(shapes: InputShapes, folded: FoldedGraph, fused: FusedGraph): Plan {
    const values = folded.values as Map<string, ValueMeta>;
    const base = (v: string) => fused.aliases.get(v) ?? v;
    const meta = (v: string): ValueMeta => values.get(v)!;
    const steps = bucketAttention(fused.steps, values, base, this.graph.outputs);
    const isConst = (v: string) => meta(v).value !== undefined;

    // a kernel's scratch (an int8 matmul's Work) is a value of its step alone, laid out with the activations
    for (const s of steps) {
      if (s.kind !== "kernel") continue;
      const shapes = new Map(operandShapes(s.op));
      for (const name of scratchOperands(s.op)) {
        const words = wordsOf(operandTypes(s.op)[name] ?? "float32", sizeOf(shapes.get(name)!));
        values.set(s.operands[name], { dtype: "float32", shape: [words] });
      }
    }
    // Values kernels read or write live in the arena; the rest (ids, masks, shapes) in JS. A held
    // cache's pasts and presents live in its buffers, outside the plan's region.
    const arenaValues = (s: (typeof steps)[number]): string[] => (s.kind === "kernel" ? Object.values(s.operands) : s.kind === "pad" ? [s.from, s.to] : []);
    const inArena = new Set<string>();
    for (const s of steps) for (const v of arenaValues(s)) inArena.add(base(v));
    const cached = this.cacheBindings(shapes, values, base);
    for (const name of cached.keys()) inArena.add(name);
    const lifetimes = new Map<string, { first: number; last: number }>();
    const touch = (v: string, at: number) => {
      const b = base(v);
      if (!inArena.has(b) || isConst(b) || cached.has(b)) return;
      const l = lifetimes.get(b) ?? { first: at, last: at };
      lifetimes.set(b, { first: Math.min(l.first, at), last: Math.max(l.last, at) });
    };
    this.graph.inputs.forEach((i) => touch(i.name, -1));
    steps.forEach((s, i) => {
      const names = s.kind === "host" ? [...s.node.inputs, ...s.node.outputs] : arenaValues(s);
      names.filter(Boolean).forEach((v) => touch(v, i));
    });
    this.graph.outputs.forEach((o) => touch(o, steps.length));
    // a dynamic MatMul's last uKernel call may run past its rows: A, C and the residual get room for the padded rows
    const dynamic = new Map<KernelStep, ExtentPlan>();
    const interim = new Set<KernelStep>();
    const paddedBytes = new Map<string, number>();
    for (const s of steps) {
      if (s.kind !== "kernel") continue;
      const plan = this.extentPlan(s);
      if (!plan) {
        if (this.awaitsPlan(s)) interim.add(s);
        continue;
      }
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
    const block = this.activations(layout.bytes), region = block.offset;
    const foldedConsts = new Map<string, ArenaWeight>();
    const operand = (v: string): Operand => {
      const b = base(v);
      return { offset: cached.get(b) ?? region + layout.offsets.get(b)!, floats: sizeOf(meta(b).shape) };
    };
    const bindings = ({ operands, op }: KernelStep): Bindings => {
      const named = Object.entries(operands);
      const types = operandTypes(op);
      return {
        operands: Object.fromEntries(named.filter(([, v]) => !isConst(base(v))).map(([k, v]) => [k, operand(v)])),
        weights: Object.fromEntries(named.filter(([, v]) => isConst(base(v)))
          .map(([k, v]) => [k, this.weight(base(v), values, foldedConsts, types[k] === "float16")])),
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
    const uses: [KernelSlot, () => void][] = [];
    const use = (slot: KernelSlot, b: Bindings) => {
      const call = slot.use(b);
      uses.push([slot, call]);
      return call;
    };
    // a step waiting for its uKernel plan runs its base kernel, with no slot: no op of that length is tuned
    const interimBound: Bound[] = [];
    const interimCall = (s: KernelStep) => {
      const bound = baseKernel(s.op, this.arena).bind(bindings(s));
      interimBound.push(bound);
      return bound.call;
    };
    const calls = steps.map((s): (() => void) => {
      if (s.kind === "kernel") {
        const plan = dynamic.get(s);
        const call = plan ? this.uKernelCalls(s, plan, bindings(s), use) : interim.has(s) ? interimCall(s) : use(this.slotFor(s), bindings(s));
        if (!half.has(s.operands.C) || s.op.epilogue.at(-1)?.kind === EpilogueKind.ROUND_HALF) return call; // rounded in the kernel
        const c = operand(s.operands.C);
        return () => { call(); roundToHalfInPlace(this.arena.f32(c.offset, c.floats)); };
      }
      if (s.kind === "pad") {
        const from = operand(s.from), to = operand(s.to);
        return () => {
          const src = this.arena.f32(from.offset, from.floats), dst = this.arena.f32(to.offset, to.floats);
          for (let i = 0, repeat = s.repeat ?? 1; i < s.outer; i++) {
            const at = Math.floor(i / repeat) * s.inner;
            dst.set(src.subarray(at, at + s.inner), i * s.padded);
            dst.fill(s.fill, i * s.padded + s.inner, (i + 1) * s.padded);
          }
        };
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
      interimSteps: interim.size,
      held: cached.size ? this.held : undefined,
      release: () => {
        for (const [slot, call] of uses) slot.release(call);
        for (const bound of interimBound) bound.release();
        if (--block.plans === 0 && block !== this.block) this.arena.release(block.offset, block.bytes);
      },
      write: (feeds) => {
        for (const input of this.graph.inputs) {
          const data = feeds[input.name].data;
          const b = base(input.name);
          if (cached.has(b)) continue; // the held cache has it
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
      read: () => Object.fromEntries(this.graph.outputs.filter((o) => !cached.has(base(o))).map((o) => {
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
  private uKernelCalls(step: KernelStep, plan: ExtentPlan, whole: Bindings, use: (slot: KernelSlot, b: Bindings) => () => void): () => void {
    const rows = step.op.shape[0];
    const calls: (() => void)[] = [];
    let row = 0;
    for (const piece of plan.pieces) {
      const op = withRows(step.op, piece.rows);
      const slot = this.slotFor({ ...step, op, key: opKey(op) });
      for (let i = 0; i < piece.count; i++, row += piece.rows) calls.push(use(slot, sliceRows(step.op, whole, row, piece.rows)));
    }
    const padding = rowOperands(step.op).filter(([name]) => name !== "C" && whole.operands[name])
      .map(([name, cols]) => ({ offset: whole.operands[name].offset + rows * cols * 4, floats: (plan.paddedExtent - rows) * cols }));
    return () => {
      for (const p of padding) if (p.floats > 0) this.arena.f32(p.offset, p.floats).fill(0);
      for (const call of calls) call();
    };
  }

  /**
   * The block a new plan's activations go in. Plans never run at once (a run writes its inputs,
   * runs and reads its outputs in one go; outputs are copied out, and a tuner copies the tensors it
   * keeps), so every plan lays its activations out from the start of one shared block. A plan that
   * needs more than the block holds gets a new one, at least twice as big, and the plans before it
   * keep the old one: a plan per past length costs memory of the longest, not of all lengths.
   */
  private activations(bytes: number): ActivationBlock {
    let block = this.block;
    if (!block || block.bytes < bytes) {
      if (block && block.plans === 0) this.arena.release(block.offset, block.bytes);
      const size = Math.max(bytes, 2 * (block?.bytes ?? 0));
      block = this.block = { offset: this.arena.alloc(size), bytes: size, plans: 0 };
    }
    block.plans++;
    return block;
  }

  /**
   * Where a plan's pasts and presents live while a cache is held: each in its entry's buffer of
   * its positions' parity (a past of n positions, the present of n + new). None without a held
   * cache.
   */
  private cacheBindings(shapes: InputShapes, values: ReadonlyMap<string, ValueMeta>, base: (v: string) => string): Map<string, number> {
    const at = new Map<string, number>();
    for (const e of this.held?.entries ?? []) {
      const past = shapes[e.past][2], present = values.get(e.present)!.shape[2];
      if (present > this.held!.rows) throw new Error(`a held cache of ${this.held!.rows} positions cannot take ${present}`);
      if (past > 0 && past % 2 === present % 2) throw new Error(`a held cache's step goes from ${past} to ${present} positions: one buffer for both`);
      at.set(e.past, e.buffers[past % 2]);
      at.set(base(e.present), e.buffers[present % 2]);
    }
    return at;
  }

  private slotFor(step: KernelStep): KernelSlot {
    this.touched.add(step.key);
    let slot = this.slots.get(step.key);
    if (!slot) {
      slot = new KernelSlot(step.key, step.op, baseKernel(step.op, this.arena));
      this.slots.set(step.key, slot);
    }
    return slot;
  }

  /**
   * A constant operand. An initializer is held once for the model (see {@link ModelWeight}): the
   * graph, and this plan's values, read it through the weight from its first use on; a folded
   * constant is copied in once per plan (`local`) while a kernel holds it.
   */
  private weight(name: string, values: ReadonlyMap<string, ValueMeta>, local: Map<string, ArenaWeight>, half = false): Weight {
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
    // a float16 file's weight read by a matmul_f16 is held as its float16 bits, two to a word
    const key = half ? `${name}:float16` : name;
    let w = this.weights.get(key);
    if (!w) {
      // an int8 or uint8 weight (a matmul_int8's B, a matmul_q4's B and zero points) is held as its bytes, four to a word
      const words = half ? halfWords(initializer.data as Float32Array)
        : byteTyped(initializer) ? bytesAsWords(initializer.data as Int8Array | Uint8Array) : floatsOf(initializer.data);
      w = new ModelWeight(this.arena, words);
      this.weights.set(key, w);
      if (half) (this.graph.initializers as Map<string, HostTensor>).set(name, w.halfTensor(initializer));
      else if (heldOnce(initializer)) (this.graph.initializers as Map<string, HostTensor>).set(name, w.tensor(initializer));
    }
    if (heldOnce(initializer) && !(meta.value instanceof LazyTensor)) (values as Map<string, ValueMeta>).set(name, { ...meta, value: this.graph.initializers.get(name) });
    return w;
  }
}

/** A constant of bytes (int8 or uint8): a quantized product's weights, held as they are. */
const byteTyped = (t: HostTensor): boolean => t.dtype === "int8" || t.dtype === "uint8";

/** Whether the graph reads a weight through its one copy (float32, and the byte weights of quantized products). */
const heldOnce = (t: HostTensor): boolean => t.dtype === "float32" || byteTyped(t);

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

