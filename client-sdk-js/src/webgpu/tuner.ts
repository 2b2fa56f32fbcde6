import type { InitialKernel, KernelOffer } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { flopsOf, operandShapes, operandView, referenceOp, scratchOperands, seededWords } from "../ops.js";
import { median } from "../timing.js";
import { judgeOutput, pairVerdict, sampleRows, TunerBase, type Task, type TunerContext } from "../model/tuning.js";
import type { ModelSession } from "../model/session.js";
import type { GpuContext } from "./context.js";
import { wgslKernelOf, type GpuProgram } from "./kernels.js";
import type { Dispatch, GpuTimer } from "./timer.js";

/** The kernel in use for one distinct op on the GPU, and every place (plan step) that dispatches it. */
export class GpuSlot {
  /** The kernel in use; undefined until the gateway's Welcome (or a kept kernel) gives one. */
  program?: GpuProgram;
  private readonly uses: { buffers: Readonly<Record<string, GPUBuffer>>; dispatch?: Dispatch }[] = [];

  constructor(readonly key: string, readonly op: OpSpec, private readonly context: GpuContext) {}

  /** A plan step's dispatch, which follows the slot's kernel when it is replaced. */
  use(buffers: Readonly<Record<string, GPUBuffer>>): () => Dispatch {
    const use: (typeof this.uses)[number] = { buffers };
    this.uses.push(use);
    return () => {
      if (use.dispatch) return use.dispatch;
      const program = this.program!;
      const pipeline = this.context.pipelines.get(program.id)!;
      use.dispatch = { pipeline, bindGroup: bindGroupOf(this.context.device, pipeline, program, buffers), grid: program.dispatch };
      return use.dispatch;
    };
  }

  get instances(): number {
    return this.uses.length;
  }

  get kernelId(): string {
    return this.program?.id ?? "";
  }

  /** Swaps in another kernel (its pipeline built) for every use; bind groups are made again at the next dispatch. */
  replace(program: GpuProgram): void {
    this.program = program;
    for (const use of this.uses) use.dispatch = undefined;
  }

  /** Forgets every use (the plans are compiled again on a new device). */
  clearUses(): void {
    this.uses.length = 0;
  }
}

/** An op's operands as a WGSL kernel binds them: all but a Wasm kernel's scratch. */
export const gpuOperands = (op: OpSpec): [string, number[]][] => operandShapes(op).filter(([name]) => !scratchOperands(op).includes(name));

/** A bind group of a program's operands, in its binding order. */
export function bindGroupOf(device: GPUDevice, pipeline: GPUComputePipeline, program: GpuProgram, buffers: Readonly<Record<string, GPUBuffer>>): GPUBindGroup {
  return device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: program.operands.map((name, binding) => {
      const buffer = buffers[name];
      if (!buffer) throw new Error(`kernel ${program.id} binds operand ${name}, which the op does not have`);
      return { binding, resource: { buffer } };
    }),
  });
}

/** An op's bench on the GPU: seeded inputs, C, and what checks compare C with. */
interface Bench {
  readonly buffers: Record<string, GPUBuffer>;
  readonly readback: GPUBuffer;
  readonly floats: number;
  readonly poison: Float32Array<ArrayBuffer>;
  readonly device: GPUDevice;
}

interface Candidate {
  readonly kernelId: string;
  readonly artifact: KernelArtifact;
  program?: GpuProgram;
  ready?: boolean;
  failed?: string;
  output?: Float32Array;
  maxRelError?: number;
  readonly samples: number[];
  readonly incumbentSamples: number[];
}

/**
 * Tunes one op of a model running on WebGPU, as the Wasm tuner does (the same checks, the same
 * pairwise timing rules, the same report), with GPU work awaited between runs: each kernel's
 * pipeline is built in the background and a candidate waits in its queue until it is; a kernel
 * is checked on seeded inputs (C poisoned with NaN first) against the reference rows and the
 * incumbent's C, and timed beside the incumbent by the {@link GpuTimer}. A device loss keeps the
 * tuning state: the bench is made again on the new device and the task that failed runs again.
 */
export class GpuOpTuner extends TunerBase<GpuSlot> {
  private bench?: Bench;
  private readonly rows: number[];
  /** The seeded inputs as the words their buffers hold (a float16-weight matmul's B: its halves, two to a word). */
  private readonly inputs: Record<string, Float32Array<ArrayBuffer>>;
  private readonly expected: Float32Array;
  private incumbentOutput?: Float32Array;
  private candidate?: Candidate;

  constructor(slot: GpuSlot, private readonly context: GpuContext, private readonly timer: GpuTimer, session: ModelSession, tuner: TunerContext) {
    super(slot, session, tuner);
    this.inputs = seededWords(slot.op, gpuOperands(slot.op));
    this.rows = sampleRows(slot.op);
    this.expected = referenceOp(slot.op, Object.fromEntries(Object.entries(this.inputs).map(([name, words]) => [name, operandView(slot.op, name, words)])),
      this.rows);
  }

  /** The Welcome's kernel: pipeline built, checked on the bench, then in use from the first run. */
  async offerInitial(initial: InitialKernel): Promise<void> {
    const id = initial.artifact?.ref?.kernelId ?? "";
    this.fromZoo = initial.fromZoo;
    this.welcomeKernel = { id, fromZoo: initial.fromZoo };
    try {
      const program = wgslKernelOf(initial.artifact!, this.op);
      await this.context.pipelines.prepare(program.id, program.source, program.entry);
      const verdict = await this.verify(program);
      if (!verdict.ok) throw new Error(verdict.why);
      this.adopt(program, initial.artifact!, verdict.output, verdict.maxRelError);
      this.log(`  ${this.slot.key}: ${initial.fromZoo ? "the zoo's" : "the initial"} WGSL kernel ${id} checked and in use`);
    } catch (e) {
      this.refuse(id, (e as Error).message);
    }
  }

  async adoptKept(artifact: KernelArtifact): Promise<boolean> {
    const id = artifact.ref?.kernelId ?? "";
    try {
      const program = wgslKernelOf(artifact, this.op);
      await this.context.pipelines.prepare(program.id, program.source, program.entry);
      const verdict = await this.verify(program);
      if (!verdict.ok) throw new Error(verdict.why);
      this.adopt(program, artifact, verdict.output, verdict.maxRelError);
      this.restored = true;
      this.localOnly.add(id);
      this.log(`  ${this.slot.key}: WGSL kernel ${id}, kept on this device, in use`);
      return true;
    } catch (e) {
      this.log(`  ${this.slot.key}: the kernel kept on this device is unusable (${(e as Error).message}); ignored`);
      return false;
    }
  }

  private adopt(program: GpuProgram, artifact: KernelArtifact, output: Float32Array, error: number): void {
    this.slot.replace(program);
    this.incumbentOutput = output;
    this.took(program.id, artifact, error);
  }

  /** The next piece of work, if any can be done now. */
  next(): Task | undefined {
    if (this.settled || !this.slot.program) return undefined;
    const c = this.candidate;
    if (!c) {
      // no more offers, and the incumbent never timed (none came, or none passed): time it once, for the report
      if (this.session.exhausted(this.slot.key) && !this.incumbentSamples.length) {
        return { costMs: 2 * this.incumbentMs() + 1, run: () => this.timeIncumbent() };
      }
      this.takeNext();
      return undefined;
    }
    if (c.failed) return { costMs: 0, run: async () => this.drop(c, c.failed!) };
    if (!c.ready) return undefined; // its pipeline is still being built
    const incumbentMs = this.incumbentMs();
    if (!c.output) return { costMs: incumbentMs + 1, run: () => this.guarded(c, () => this.check(c)) };
    return { costMs: 2 * incumbentMs + 1, run: () => this.guarded(c, () => this.pair(c)) };
  }

  /** The incumbent's bench latency (before it was timed, an estimate from the op's flops). */
  incumbentMs(): number {
    return this.incumbentSamples.length ? median(this.incumbentSamples) : flopsOf(this.op) / 1e9;
  }

  protected start(offer: KernelOffer): void {
    const c: Candidate = { kernelId: offer.artifact?.ref?.kernelId ?? "", artifact: offer.artifact!, samples: [], incumbentSamples: [] };
    // the kernel in use (a kept one the space offers again), or one already timed or refused: nothing to learn
    if (c.kernelId === this.slot.kernelId || this.measured.has(c.kernelId) || this.refused.has(c.kernelId)) return;
    this.candidate = c;
    try {
      c.program = wgslKernelOf(offer.artifact!, this.op);
    } catch (e) {
      c.failed = (e as Error).message;
      return;
    }
    this.context.pipelines.prepare(c.program.id, c.program.source, c.program.entry).then(() => { c.ready = true; }, (e: Error) => { c.failed = e.message; });
  }

  /** Runs a task; a failure from a lost device leaves the candidate as it was (the task runs again on the new device). */
  private async guarded(c: Candidate, task: () => Promise<void>): Promise<void> {
    const device = this.context.device;
    try {
      await task();
    } catch (e) {
      if (await this.context.recovered(device)) return;
      this.drop(c, (e as Error).message);
    }
  }

  private async check(c: Candidate): Promise<void> {
    const verdict = await this.verify(c.program!);
    if (this.candidate !== c) return; // settled meanwhile (the page went away)
    if (!verdict.ok) return this.drop(c, verdict.why);
    c.output = verdict.output;
    c.maxRelError = verdict.maxRelError;
  }

  private async pair(c: Candidate): Promise<void> {
    const [cand, inc] = await this.timer.pair(this.dispatchOf(c.program!), this.dispatchOf(this.slot.program!), this.incumbentMs());
    if (this.candidate !== c) return; // settled meanwhile (the page went away)
    c.samples.push(cand);
    c.incumbentSamples.push(inc);
    this.incumbentSamples = [...c.incumbentSamples];
    const verdict = pairVerdict(c.samples, c.incumbentSamples, this.options);
    const candMs = median(c.samples), incMs = median(c.incumbentSamples);
    if (!verdict) return;
    this.measured.set(c.kernelId, { medianMs: candMs, samples: c.samples.length, maxRelError: c.maxRelError! });
    this.recordIncumbent(incMs);
    const replaced = this.slot.program!.id;
    this.emit("kernel-timed", { op: this.slot.key, kernelId: c.kernelId, ms: candMs, incumbentId: replaced, incumbentMs: incMs, faster: verdict === "win" });
    this.candidate = undefined;
    if (verdict === "lose") {
      this.context.pipelines.forget(c.kernelId); // never the one in use: start() takes no offer of it
      return;
    }
    this.slot.replace(c.program!);
    this.incumbentArtifact = c.artifact;
    this.incumbentOutput = c.output;
    this.incumbentSamples = [...c.samples];
    this.history.push({ atMs: this.clock(), kernelId: c.kernelId, ms: candMs });
    this.log(`  ${this.slot.key}: ${c.kernelId} ${candMs.toFixed(3)} ms replaces ${incMs.toFixed(3)} ms`);
    this.emit("new-best", { op: this.slot.key, kernelId: c.kernelId, ms: candMs, replaced, replacedMs: incMs });
  }

  private drop(c: Candidate, why: string): void {
    this.refuse(c.kernelId, why);
    this.context.pipelines.forget(c.kernelId);
    this.candidate = undefined;
  }

  /** The incumbent timed once against itself, when no candidate was: its latency for the report. */
  private async timeIncumbent(): Promise<void> {
    const device = this.context.device;
    try {
      const d = this.dispatchOf(this.slot.program!);
      const [ms] = await this.timer.pair(d, d, this.incumbentMs());
      this.incumbentSamples = [ms];
      this.recordIncumbent(ms);
    } catch (e) {
      if (await this.context.recovered(device)) return; // timed again on the new device
      this.log(`  ${this.slot.key}: the incumbent could not be timed (${(e as Error).message})`);
      this.incumbentSamples = [NaN];
    }
  }

  /**
   * Runs a program once on the bench (C poisoned first) and judges its C. A dispatch WebGPU
   * rejects (a bind group that does not fit the kernel, a grid over the limits) is a refusal, not
   * a stale C read back.
   */
  private async verify(program: GpuProgram) {
    const bench = this.benchOnDevice();
    const device = bench.device;
    const pipeline = await this.context.pipelines.prepare(program.id, program.source, program.entry);
    device.queue.writeBuffer(bench.buffers.C, 0, bench.poison);
    device.pushErrorScope("validation");
    let rejected: GPUError | null;
    try {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroupOf(device, pipeline, program, bench.buffers));
      pass.dispatchWorkgroups(...program.dispatch);
      pass.end();
      encoder.copyBufferToBuffer(bench.buffers.C, 0, bench.readback, 0, bench.floats * 4);
      device.queue.submit([encoder.finish()]);
    } finally {
      rejected = await device.popErrorScope();
    }
    if (rejected) return { ok: false as const, why: `WebGPU rejected its dispatch: ${rejected.message}` };
    await bench.readback.mapAsync(GPUMapMode.READ);
    const output = new Float32Array(bench.readback.getMappedRange().slice(0));
    bench.readback.unmap();
    return judgeOutput(this.op, output, this.rows, this.expected, this.incumbentOutput, this.options.tolerance);
  }

  private dispatchOf(program: GpuProgram): Dispatch {
    const bench = this.benchOnDevice();
    const pipeline = this.context.pipelines.get(program.id);
    if (!pipeline) throw new Error(`the pipeline of ${program.id} is not built on this device`);
    return { pipeline, bindGroup: bindGroupOf(bench.device, pipeline, program, bench.buffers), grid: program.dispatch };
  }

  /** The bench on the current device: made at first use and again after a device loss. */
  private benchOnDevice(): Bench {
    const device = this.context.device;
    if (this.bench?.device === device) return this.bench;
    const buffers: Record<string, GPUBuffer> = {};
    let floats = 0;
    for (const [name, shape] of gpuOperands(this.op)) {
      const n = name === "C" ? shape.reduce((a, b) => a * b, 1) : this.inputs[name].length;
      buffers[name] = device.createBuffer({ size: Math.max(16, n * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
      if (name === "C") floats = n;
      else device.queue.writeBuffer(buffers[name], 0, this.inputs[name]);
    }
    const readback = device.createBuffer({ size: Math.max(16, floats * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.bench = { buffers, readback, floats, poison: new Float32Array(floats).fill(NaN), device };
    return this.bench;
  }

  /** Bytes of this op's bench on the GPU (0 once settled). */
  get benchBytes(): number {
    return this.bench ? Object.values(this.bench.buffers).reduce((sum, b) => sum + b.size, this.bench.readback.size) : 0;
  }

  /** Ends tuning now (the page is going away): what was timed is reported. */
  settleNow(): void {
    if (this.settled || !this.slot.program) return;
    this.candidate = undefined;
    this.settle();
  }

  protected settle(): void {
    if (this.bench) {
      Object.values(this.bench.buffers).forEach((b) => b.destroy());
      this.bench.readback.destroy();
      this.bench = undefined;
    }
    this.keepAndReport();
  }
}
