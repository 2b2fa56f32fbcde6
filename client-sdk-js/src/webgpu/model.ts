import { clockInfo } from "../clock.js";
import { Backend, type DeviceProfile } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { fromHost, inputShapes, toHost } from "../graph/feeds.js";
import { fold, type FoldedGraph, type InputShapes } from "../graph/fold.js";
import { fuse, type FusedGraph, type HostStep, type KernelStep } from "../graph/fuse.js";
import { runNode, type ValueMeta } from "../graph/host/index.js";
import type { OnnxGraph } from "../graph/onnx.js";
import { halfWords, sizeOf, type HostTensor } from "../graph/tensor.js";
import { bytesAsWords, operandTypes } from "../ops.js";
import type { ModelEvent, ModelListener } from "../model/events.js";
import { GraphModel, type GpuStats, type LoadOptions, type ModelStats, type OutputTensor, type RunRecord, type TensorLike } from "../model/model.js";
import { ModelTuning, nextTurn } from "../model/tuning.js";
import { median } from "../timing.js";
import { WasmModel } from "../wasm/model.js";
import type { GpuContext } from "./context.js";
import { hostProgram, type GpuProgram } from "./kernels.js";
import { GpuTimer, type Dispatch } from "./timer.js";
import { bindGroupOf, GpuOpTuner, GpuSlot, gpuOperands } from "./tuner.js";

/** Store entries of the SDK's own shaders are filed under this prefix (their op key is the shader's id). */
const SHADER_ENTRY = "shader:";
/** Per-inference host overheads a model keeps. */
const HOST_SAMPLES = 64;

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

/** A GPU value copied out after a segment's dispatches: to a later segment's CPU steps, or as a graph output. */
interface Readback {
  readonly name: string;
  readonly buffer: GPUBuffer;
  readonly readback: GPUBuffer;
  readonly bytes: number;
  readonly shape: number[];
}

/**
 * One submit of an inference: the CPU steps that can run by then (the first segment's on the
 * feeds; a later one's on what the previous segments read back), the uploads of their values the
 * GPU reads, the dispatches, and the copies out of what later CPU steps read.
 */
interface GpuSegment {
  /** Runs the segment's CPU steps and uploads what its dispatches (and later ones) read of them. */
  readonly before: () => void;
  readonly dispatches: readonly (() => Dispatch)[];
  /** GPU values later CPU steps read. */
  readonly downloads: readonly Readback[];
}

/** A compiled program for one set of input shapes, on one device. */
interface GpuPlan {
  readonly device: GPUDevice;
  /** Takes the feeds as host values (the first segment's CPU steps read them). */
  readonly write: (feeds: Readonly<Record<string, TensorLike>>) => void;
  /** The submits of an inference, in order: one, unless a node that only the CPU runs reads a GPU value. */
  readonly segments: readonly GpuSegment[];
  /** Takes what a segment read back as host values. */
  readonly receive: (downloads: readonly Readback[]) => void;
  /** Graph outputs computed on the GPU: copied out after the last segment. */
  readonly readbacks: readonly Readback[];
  /** Graph outputs computed on the CPU. */
  readonly cpuOutputs: () => Record<string, OutputTensor>;
  readonly dispatchCount: number;
  readonly bytes: number;
  readonly hostSteps: number;
}

/**
 * A model run on WebGPU with jitzoo's WGSL kernels: every op of an inference is recorded in one
 * command encoder, in one compute pass, and submitted once (the outputs' copies with it); the
 * activations live in GPU buffers shared by values whose lifetimes do not overlap, the weights
 * are uploaded once, bind groups are made once per step and kernel. The nodes no kernel covers
 * run in JavaScript before the submit when they read only the feeds and constants (ids, masks,
 * the embeddings' gather), and as the SDK's own shaders when they read a GPU value (attention's
 * transposes, the mask added to the scores); any other node reading a GPU value (a rotary
 * embedding's Slice, a NaN guard) runs on the CPU after that value is read back, which ends a
 * submit: the inference is then a few segments, each CPU steps, uploads, one pass of dispatches
 * and the copies out a later segment reads (`stats().gpu.submitsPerRun`). Ops tune as on Wasm, through a WGSL
 * session; pipelines are built off the critical path and kept, with every kernel's source, in the
 * kernel store, so a reloaded page builds them while it loads. A lost device is replaced, the
 * pipelines built again from their sources and the plans compiled again; tuning goes on where it
 * was and the run that met the loss runs again.
 */
export class GpuModel extends GraphModel {
  private readonly plans = new Map<string, GpuPlan>();
  private readonly slots = new Map<string, GpuSlot>();
  /** Initializers on the current device. */
  private readonly weights = new Map<string, GPUBuffer>();
  private readonly timeline: RunRecord[] = [];
  private readonly hostMs: number[] = [];
  private readonly notes: string[] = [];
  private readonly tuning: ModelTuning<GpuSlot, GpuOpTuner>;
  private readonly timer: GpuTimer;
  /** Pipelines of the kernels and shaders kept on this device kind by earlier loads, started at load. */
  private readonly prebuilt: Promise<void>;
  /** The run under way, with its tuning: the next one starts after it. */
  private turns: Promise<void> = Promise.resolve();
  /** The device the initializers' buffers are on. */
  private weightsDevice?: GPUDevice;
  /** Every listener the app added, for a model that goes on on Wasm. */
  private readonly listening: [ModelEvent, ModelListener<never>][] = [];
  private started?: number;
  private latest?: GpuPlan;
  private fallback?: WasmFallback;

  /** @internal use {@link loadModel} with `backend: "webgpu"` */
  constructor(graph: OnnxGraph, private readonly options: LoadOptions, readonly gpu: GpuContext,
    private readonly device: DeviceProfile) {
    super(graph);
    this.timer = new GpuTimer(gpu);
    this.tuning = new ModelTuning(options, Backend.WGSL, this.events, this.notes, () => performance.now() - (this.started ?? performance.now()),
      (slot, session, context) => new GpuOpTuner(slot, this.gpu, this.timer, session, context));
    gpu.onRestore(() => {
      // buffers and bind groups died with the device: plans compile again at the next run
      this.plans.clear();
      this.weights.clear();
      for (const slot of this.slots.values()) slot.clearUses();
    });
    this.prebuilt = this.prebuild();
  }

  /**
   * As {@link WasmModel.runThenTune}, one call at a time: GPU work is awaited, so a run asked for
   * while the last one's tuning is under way (a worker posts the outputs first) waits for it
   * rather than share the benches, readbacks and plans with it.
   * @internal
   */
  runThenTune(feeds: Readonly<Record<string, TensorLike>>, deliver: (outputs: Record<string, OutputTensor>) => void): Promise<void> {
    const turn = this.turns.then(() => this.runAndTune(feeds, deliver));
    this.turns = turn.catch(() => undefined);
    return turn;
  }

  private async runAndTune(feeds: Readonly<Record<string, TensorLike>>, deliver: (outputs: Record<string, OutputTensor>) => void): Promise<void> {
    if (this.gpu.failed && !this.fallback) this.runOnWasm(`the WebGPU device was lost and not replaced (${this.gpu.failed})`);
    if (this.fallback) return this.fallback.runThenTune(feeds, deliver);
    await this.prebuilt; // the load's own builds (the kept kernels') are started before the run's
    this.gpu.pipelines.onCriticalPath = true;
    let outputs: Record<string, OutputTensor>;
    let start: number;
    try {
      for (let attempt = 0; ; attempt++) {
        const plan = await this.planFor(feeds);
        if (this.fallback) return (this.fallback as WasmFallback).runThenTune(feeds, deliver);
        start = performance.now();
        try {
          outputs = await this.execute(plan, feeds);
          if (this.gpu.device === plan.device) break;
        } catch (e) {
          const recovered = await this.gpu.recovered(plan.device);
          if (this.gpu.failed) {
            this.runOnWasm(`the WebGPU device was lost and not replaced (${this.gpu.failed})`);
            return this.fallback!.runThenTune(feeds, deliver);
          }
          if (attempt >= 2 || !recovered) throw e;
        }
        await this.gpu.ready(); // the device was lost under this run: once replaced, run again
      }
    } finally {
      this.gpu.pipelines.onCriticalPath = false;
    }
    this.started ??= start;
    const inferMs = performance.now() - start;
    const record: RunRecord = { atMs: start - this.started, inferMs, hostMs: NaN, tuneMs: 0 };
    this.timeline.push(record);
    deliver(outputs);
    record.tuneMs = await this.tuning.spend(inferMs);
    if (!this.tuning.settled) await nextTurn();
  }

  /**
   * One inference: per segment, its CPU steps and uploads, every dispatch in one pass (or, with
   * `gpuDispatch: "per-op"`, a submit each, for comparison) and the copies out in the same submit;
   * a segment's copies are read before the next one's CPU steps, the outputs after the last.
   */
  private async execute(plan: GpuPlan, feeds: Readonly<Record<string, TensorLike>>): Promise<Record<string, OutputTensor>> {
    const device = plan.device;
    plan.write(feeds);
    let hostMs = 0;
    for (const [index, segment] of plan.segments.entries()) {
      const t0 = performance.now();
      segment.before();
      const encoder = device.createCommandEncoder();
      if (this.options.gpuDispatch === "per-op") {
        for (const dispatch of segment.dispatches) {
          const own = device.createCommandEncoder();
          const pass = own.beginComputePass();
          encode(pass, dispatch());
          pass.end();
          device.queue.submit([own.finish()]);
        }
      } else if (segment.dispatches.length) {
        const pass = encoder.beginComputePass();
        let pipeline: GPUComputePipeline | undefined;
        for (const dispatch of segment.dispatches) {
          const d = dispatch();
          if (d.pipeline !== pipeline) pass.setPipeline((pipeline = d.pipeline));
          pass.setBindGroup(0, d.bindGroup);
          pass.dispatchWorkgroups(d.grid[0], d.grid[1], d.grid[2]);
        }
        pass.end();
      }
      const last = index === plan.segments.length - 1;
      const copies = last ? plan.readbacks : segment.downloads;
      for (const r of copies) encoder.copyBufferToBuffer(r.buffer, 0, r.readback, 0, r.bytes);
      device.queue.submit([encoder.finish()]);
      hostMs += performance.now() - t0;
      try {
        await Promise.all(copies.map((r) => r.readback.mapAsync(GPUMapMode.READ, 0, r.bytes)));
        if (!last) {
          plan.receive(copies);
          continue;
        }
        this.hostMs.push(hostMs);
        if (this.hostMs.length > HOST_SAMPLES) this.hostMs.shift();
        const outputs = plan.cpuOutputs();
        for (const r of copies) {
          outputs[r.name] = { type: "float32", dims: [...r.shape], data: new Float32Array(r.readback.getMappedRange(0, r.bytes).slice(0)) };
        }
        return outputs;
      } finally {
        // a readback left mapped (one map failed, or reading the outputs did) would fail every later run
        for (const r of copies) if (r.readback.mapState === "mapped") r.readback.unmap();
      }
    }
    throw new Error("a WebGPU plan has no segment");
  }

  async close(): Promise<void> {
    await this.fallback?.close();
    await this.tuning.close();
  }

  override on<E extends ModelEvent>(event: E, listener: ModelListener<E>): () => void {
    const entry: [ModelEvent, ModelListener<never>] = [event, listener as ModelListener<never>];
    this.listening.push(entry);
    const off = super.on(event, listener);
    return () => {
      off();
      this.listening.splice(this.listening.indexOf(entry), 1);
      this.fallback?.off(entry);
    };
  }

  stats(): ModelStats {
    if (this.fallback) return { ...this.fallback.stats(), notes: [...this.notes, ...this.fallback.stats().notes], kvCacheBytes: this.cacheBytes };
    const runMs = this.timeline.map((r) => r.inferMs);
    const gpu: GpuStats = {
      adapter: { vendor: this.gpu.profile.vendor, architecture: this.gpu.profile.architecture, software: this.gpu.profile.software },
      dispatch: this.options.gpuDispatch ?? "batched",
      timer: this.timer.mode, timestampQuantumNs: this.timer.quantumNs,
      pipelinesBuilt: this.gpu.pipelines.built, pipelinesBuiltInRuns: this.gpu.pipelines.builtOnCriticalPath,
      hostMs: this.hostMs.length ? median(this.hostMs) : NaN,
      deviceLosses: this.gpu.losses.length,
      errors: this.gpu.uncaptured.length,
      submitsPerRun: this.options.gpuDispatch === "per-op" ? (this.latest?.dispatchCount ?? 0) + (this.latest?.segments.length ?? 1)
        : this.latest?.segments.length ?? 1,
      dispatchesPerRun: this.latest?.dispatchCount ?? 0,
    };
    return {
      backend: "webgpu",
      threads: 1,
      runs: runMs.length,
      medianRunMs: runMs.length ? median(runMs) : NaN,
      lastRunMs: runMs.at(-1) ?? NaN,
      plans: this.plans.size,
      memoryBytes: [...this.plans.values()].reduce((sum, p) => sum + p.bytes, 0) + [...this.weights.values()].reduce((sum, b) => sum + b.size, 0),
      tuningMemoryBytes: this.tuning.benchBytes,
      kvCacheBytes: this.cacheBytes,
      ops: [...this.slots.values()].map((s) => this.tuning.opStats(s, "wgsl")),
      hostSteps: this.latest?.hostSteps ?? 0,
      dynamicSteps: 0,
      interimSteps: 0,
      notes: [...this.notes, ...this.tuning.tunerNotes()],
      timeline: this.timeline.map((r) => ({ ...r })),
      settled: this.plans.size > 0 && this.tuning.settled,
      clock: clockInfo(),
      gpu,
    };
  }

  /** Builds the pipelines of every kernel and shader kept on this device kind, while the model loads. */
  private async prebuild(): Promise<void> {
    const entries = (await this.tuning.store?.list?.(this.device.fingerprint)) ?? [];
    for (const e of entries) {
      if (e.wgsl) this.gpu.pipelines.prepare(e.kernelId, e.wgsl).catch(() => undefined); // a bad one is refused at its use
    }
  }

  private async planFor(feeds: Readonly<Record<string, TensorLike>>): Promise<GpuPlan> {
    await this.gpu.ready();
    const shapes = inputShapes(this.graph, feeds);
    const key = JSON.stringify(shapes);
    let plan = this.plans.get(key);
    if (plan && plan.device !== this.gpu.device) {
      this.plans.delete(key); // compiled on a device lost since
      plan = undefined;
    }
    if (!plan) {
      const start = performance.now();
      const known = new Set(this.slots.keys());
      const folded = fold(this.graph, shapes);
      const program = fuse(folded, this.graph.outputs); // a float16 file's values not rounded: WGSL has no round_half
      const slots = program.steps.filter((s): s is KernelStep => s.kind === "kernel").map((s) => this.slotFor(s));
      const fresh = [...new Set(slots)].filter((s) => !known.has(s.key));
      if (fresh.length) await this.connect(fresh);
      if (this.fallback) return undefined as never;
      plan = await this.compile(shapes, folded, program);
      if (plan.device !== this.gpu.device) return this.planFor(feeds); // the device was lost while it compiled
      this.plans.set(key, plan);
      this.options.log?.(`compiled a WebGPU plan for ${key} in ${(performance.now() - start).toFixed(0)} ms: ${this.slots.size} distinct ops, `
        + `${plan.dispatchCount} dispatches, ${plan.segments.length === 1 ? "one submit" : `${plan.segments.length} submits`}`);
    }
    this.latest = plan;
    return plan;
  }

  private slotFor(step: KernelStep): GpuSlot {
    let slot = this.slots.get(step.key);
    if (!slot) {
      slot = new GpuSlot(step.key, step.op, this.gpu);
      this.slots.set(step.key, slot);
    }
    return slot;
  }

  /**
   * Opens WGSL sessions for new ops ({@link ModelTuning.connect}): each op starts on a kernel kept
   * on this device, or on the Welcome's with its pipeline built and checked. Where an op ends with
   * no kernel (the gateway did not answer, its kernel was refused), the model runs on Wasm, and a
   * note says why.
   */
  private async connect(slots: GpuSlot[]): Promise<void> {
    const stop = await this.tuning.connect(slots, this.device, (group) => {
      const missing = group.filter((s) => !s.program);
      return missing.length ? `no usable WGSL kernel for ${missing.map((s) => s.key).join(", ")}` : undefined;
    });
    if (stop) this.runOnWasm(stop);
  }

  /** Gives up on WebGPU for this model: it runs (and tunes) on Wasm from now on. */
  private runOnWasm(why: string): void {
    this.notes.push(`${why}: the model runs on Wasm`);
    this.options.log?.(`WebGPU: ${why}; the model runs on Wasm`);
    this.tuning.abandon();
    this.gpu.close();
    const fallback = new WasmFallback(this.graph, { ...this.options, backend: "wasm" });
    for (const [event, listener] of this.listening) fallback.listen(event, listener);
    this.fallback = fallback;
  }

  private async compile(shapes: InputShapes, folded: FoldedGraph, { steps, aliases }: FusedGraph): Promise<GpuPlan> {
    const device = this.gpu.device;
    const values = folded.values;
    const base = (v: string) => aliases.get(v) ?? v;
    const meta = (v: string): ValueMeta => values.get(v)!;
    const isConst = (v: string) => meta(v).value !== undefined;

    // which steps run where: a host step reading a GPU value runs as the SDK's shader where it has
    // one; otherwise on the CPU, in a segment of its own after what it reads is read back
    const onGpu = new Set<string>();
    const gpuSteps: { operands: Record<string, string>; kernel?: KernelStep; program?: GpuProgram; segment: number }[] = [];
    const segments: { cpuSteps: HostStep[]; firstStep: number }[] = [{ cpuSteps: [], firstStep: 0 }];
    /** Where each value is computed: on the GPU in segment s (≥ 0), or on the CPU for segment s's dispatches on. */
    const gpuSegment = new Map<string, number>(), cpuSegment = new Map<string, number>();
    const downloads = new Set<string>();
    for (const s of steps) {
      const current = segments.length - 1;
      if (s.kind === "kernel") {
        // WGSL kernels take no scratch: a Wasm kernel's Work (a conv's gathered windows) has no buffer here
        const bound = new Set(gpuOperands(s.op).map(([name]) => name));
        const operands = Object.fromEntries(Object.entries(s.operands).filter(([name]) => bound.has(name)));
        gpuSteps.push({ operands, kernel: s, segment: current });
        onGpu.add(base(s.operands.C));
        gpuSegment.set(base(s.operands.C), current);
        continue;
      }
      const ins = s.node.inputs.filter(Boolean), out = s.node.outputs[0];
      const candidate = ins.some((v) => onGpu.has(base(v))) && s.node.outputs.length === 1 && meta(out).dtype === "float32"
        ? hostProgram(s.node, ins.map((v) => meta(v).shape), meta(out).shape) : undefined;
      // the program binds the node's first inputs (each a float value) and its output as C
      const bind = (name: string, i: number) => (name === "C" ? out : ins[i]);
      const program = candidate?.operands.every((name, i) => name === "C" || meta(ins[i]).dtype === "float32") ? candidate : undefined;
      if (program) {
        gpuSteps.push({ operands: Object.fromEntries(program.operands.map((name, i) => [name, bind(name, i)])), program, segment: current });
        onGpu.add(base(s.node.outputs[0]));
        gpuSegment.set(base(s.node.outputs[0]), current);
        continue;
      }
      // on the CPU: after every GPU value it reads is read back, and every CPU value it reads is computed
      const at = Math.max(0, ...ins.map((v) => {
        const b = base(v);
        if (gpuSegment.has(b)) {
          downloads.add(b);
          return gpuSegment.get(b)! + 1;
        }
        return cpuSegment.get(b) ?? 0;
      }));
      if (at === segments.length) segments.push({ cpuSteps: [], firstStep: gpuSteps.length });
      segments[at].cpuSteps.push(s);
      s.node.outputs.forEach((o) => o && cpuSegment.set(base(o), at));
    }
    const segmentEnd = (k: number) => (k + 1 < segments.length ? segments[k + 1].firstStep : gpuSteps.length) - 1;

    // activations: one buffer per value, shared by values whose lifetimes (in GPU steps) do not overlap
    const lifetimes = new Map<string, { first: number; last: number }>();
    gpuSteps.forEach((g, i) => {
      for (const v of Object.values(g.operands)) {
        const b = base(v);
        if (isConst(b)) continue;
        // a CPU value is uploaded before the first dispatch of the segment it is computed for
        const first = onGpu.has(b) ? i : segments[cpuSegment.get(b) ?? 0].firstStep - 1;
        const l = lifetimes.get(b) ?? { first, last: i };
        lifetimes.set(b, { first: Math.min(l.first, first), last: Math.max(l.last, i) });
      }
    });
    for (const b of downloads) { // read back at the end of its segment: no later dispatch of that segment may take its buffer
      const l = lifetimes.get(b)!;
      l.last = Math.max(l.last, segmentEnd(gpuSegment.get(b)!));
    }
    for (const o of this.graph.outputs) {
      const l = lifetimes.get(base(o));
      if (l) l.last = gpuSteps.length;
    }
    const buffers = new Map<string, GPUBuffer>();
    const pool: { buffer: GPUBuffer; last: number }[] = [];
    let bytes = 0;
    for (const [name, l] of [...lifetimes].sort((a, b) => a[1].first - b[1].first)) {
      const size = Math.max(16, Math.ceil((sizeOf(meta(name).shape) * 4) / 16) * 16);
      const free = pool.filter((p) => p.last < l.first && p.buffer.size >= size && p.buffer.size <= 2 * size)
        .sort((a, b) => a.buffer.size - b.buffer.size)[0];
      const slot = free ?? { buffer: device.createBuffer({ size, usage: STORAGE(), label: name }), last: l.last };
      if (!free) {
        pool.push(slot);
        bytes += size;
      }
      slot.last = l.last;
      buffers.set(name, slot.buffer);
    }
    const folds = new Map<string, GPUBuffer>();
    const bufferOf = (v: string, half: boolean): GPUBuffer => {
      const b = base(v);
      return isConst(b) ? this.weight(b, meta(b).value!, folds, half) : buffers.get(b)!;
    };

    // dispatches: kernels through their slots (which follow tuning), shaders with their pipelines built now
    const dispatches: (() => Dispatch)[] = [];
    const shaders: GpuProgram[] = [];
    for (const g of gpuSteps) {
      const types = g.kernel ? operandTypes(g.kernel.op) : {};
      const bound = Object.fromEntries(Object.entries(g.operands).map(([name, v]) => [name, bufferOf(v, types[name] === "float16")]));
      if (g.kernel) {
        dispatches.push(this.slots.get(g.kernel.key)!.use(bound));
        continue;
      }
      const program = g.program!;
      const pipeline = await this.gpu.pipelines.prepare(program.id, program.source, program.entry);
      const dispatch: Dispatch = { pipeline, bindGroup: bindGroupOf(device, pipeline, program, bound), grid: program.dispatch };
      dispatches.push(() => dispatch);
      shaders.push(program);
    }
    for (const p of new Set(shaders)) {
      this.tuning.keepEntry({ fingerprint: this.device.fingerprint, op: SHADER_ENTRY + p.id, kernelId: p.id, wgsl: p.source, metadataJson: "{}", ms: NaN });
    }

    const host = new Map<string, HostTensor>();
    const read = (v: string): HostTensor => {
      const m = meta(v);
      if (m.value) return m.value;
      const t = host.get(base(v));
      if (!t) throw new Error(`value ${v} was not computed`);
      return { ...t, shape: m.shape };
    };
    const readbackOf = (name: string): Readback => {
      const floats = sizeOf(meta(name).shape);
      const readback = device.createBuffer({ size: Math.max(16, floats * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      bytes += readback.size;
      return { name, buffer: buffers.get(base(name))!, readback, bytes: floats * 4, shape: [...meta(name).shape] };
    };
    const readbacks = this.graph.outputs.filter((o) => onGpu.has(base(o))).map(readbackOf);
    const copiedOut = [...downloads].map(readbackOf);
    const uploads = [...lifetimes.keys()].filter((b) => !onGpu.has(b));
    const planned: GpuSegment[] = segments.map((segment, k) => {
      const mine = uploads.filter((b) => (cpuSegment.get(b) ?? 0) === k);
      return {
        dispatches: dispatches.slice(segment.firstStep, segmentEnd(k) + 1),
        downloads: copiedOut.filter((r) => gpuSegment.get(r.name) === k),
        before: () => {
          for (const { node } of segment.cpuSteps) {
            const results = runNode(node, node.inputs.map((v) => (v ? read(v) : undefined)));
            results.forEach((r, i) => node.outputs[i] && host.set(base(node.outputs[i]), r));
          }
          for (const b of mine) {
            const data = read(b).data;
            device.queue.writeBuffer(buffers.get(b)!, 0, data instanceof Float32Array ? data as Float32Array<ArrayBuffer> : Float32Array.from(data));
          }
        },
      };
    });
    return {
      device, segments: planned, readbacks, bytes, dispatchCount: dispatches.length,
      hostSteps: segments.reduce((n, seg) => n + seg.cpuSteps.length, 0) + shaders.length,
      write: (feeds) => {
        for (const input of this.graph.inputs) {
          host.set(base(input.name), { dtype: input.dtype, shape: shapes[input.name], data: toHost(input.name, input.dtype, feeds[input.name].data, this.graph.half.has(input.name)) });
        }
      },
      receive: (copies) => {
        // values on the GPU are float32 only (kernels' and shaders' operands)
        for (const r of copies) host.set(r.name, { dtype: "float32", shape: r.shape, data: new Float32Array(r.readback.getMappedRange(0, r.bytes).slice(0)) });
      },
      cpuOutputs: () => Object.fromEntries(this.graph.outputs.filter((o) => !onGpu.has(base(o))).map((o) => {
        const t = read(o);
        return [o, { type: t.dtype, dims: [...t.shape], data: fromHost(t) }];
      })),
    };
  }

  /** A constant on the current device: initializers once for the model, folded constants once per plan (`local`). */
  /**
   * A constant's buffer on this device, made once: float32; a byte tensor (a 4-bit matmul's B and
   * zero points) as its bytes, four to a word; `half` (a matmul_f16's B), its float16 bits, two to a word.
   */
  private weight(name: string, value: HostTensor, local: Map<string, GPUBuffer>, half: boolean): GPUBuffer {
    if (this.weightsDevice !== this.gpu.device) {
      this.weights.clear();
      this.weightsDevice = this.gpu.device;
    }
    const cache = this.graph.initializers.has(name) ? this.weights : local;
    const key = half ? `${name}:float16` : name;
    let buffer = cache.get(key);
    if (!buffer) {
      const data = half ? halfWords(value.data as Float32Array)
        : value.dtype === "int8" || value.dtype === "uint8" ? bytesAsWords(value.data as Uint8Array | Int8Array)
          : value.data instanceof Float32Array ? value.data : Float32Array.from(value.data as ArrayLike<number>);
      buffer = this.gpu.device.createBuffer({ size: Math.max(16, Math.ceil((data.length * 4) / 16) * 16), usage: STORAGE(), label: name });
      this.gpu.device.queue.writeBuffer(buffer, 0, data as Float32Array<ArrayBuffer>);
      cache.set(key, buffer);
    }
    return buffer;
  }
}

/** The Wasm model a WebGPU model goes on as, taking the app's listeners with it. */
class WasmFallback extends WasmModel {
  private readonly offs = new Map<unknown, () => void>();

  listen(event: ModelEvent, listener: ModelListener<never>): void {
    this.offs.set(listener, this.on(event as "connection", listener as ModelListener<"connection">));
  }

  off(entry: [ModelEvent, ModelListener<never>]): void {
    this.offs.get(entry[1])?.();
    this.offs.delete(entry[1]);
  }
}

function encode(pass: GPUComputePassEncoder, d: Dispatch): void {
  pass.setPipeline(d.pipeline);
  pass.setBindGroup(0, d.bindGroup);
  pass.dispatchWorkgroups(d.grid[0], d.grid[1], d.grid[2]);
}

