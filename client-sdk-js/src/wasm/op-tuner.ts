import type { InitialKernel, KernelOffer } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { batchSize, timeBatch } from "../clock.js";
import { flopsOf, inputNames, operandView, opTolerance, referenceOp } from "../ops.js";
import { maxRelativeError } from "../reference.js";
import { median } from "../timing.js";
import type { ModelSession } from "../model/session.js";
import { judgeOutput, pairVerdict, pickRows, sampleRows, TunerBase, type Judged, type Task, type TunerContext } from "../model/tuning.js";
import type { WorkerPool } from "../threads/pool.js";
import { Arena, ArenaWeight } from "./arena.js";
import { compileKernel, type Bindings, type Bound, type KernelCode, type OpKernel, type Operand } from "./kernels.js";
import { baseKernel } from "./generic.js";

// How an op of a Wasm model tunes: its slot (the kernel every step of the op calls), and its
// tuner, which times candidates on a bench of the op's real tensors between runs.

/** A sample lasts at least this long (short ops are repeated). */
const SAMPLE_MS = 0.5;
/** In-app call latencies a slot keeps. */
const IN_APP_CALLS = 9;

/** The kernel in use for one distinct op, and every place (step) that calls it. */
export class KernelSlot {
  kernel: OpKernel;
  /** Latencies of the latest calls in the app's inferences, milliseconds (a few, newest last). */
  readonly callMs: number[] = [];
  /** callMs' median, found once after they change (a tuner asks at every run: spendCredit). */
  private callMedian?: number;
  /** Called with a step's operands before its first call (the tuner captures that op's real tensors there). */
  onFirstCall?: (bindings: Bindings) => void;
  private readonly uses: { bindings: Bindings; bound: Bound; call: () => void }[] = [];

  constructor(readonly key: string, readonly op: OpSpec, kernel: OpKernel) {
    this.kernel = kernel;
  }

  /** A step's call, which follows the slot's kernel when it is replaced. */
  use(bindings: Bindings): () => void {
    const use = { bindings, bound: this.kernel.bind(bindings), call: () => {} };
    this.uses.push(use);
    return use.call = () => {
      if (this.onFirstCall) {
        const hook = this.onFirstCall;
        this.onFirstCall = undefined;
        hook(bindings);
      }
      const t0 = performance.now();
      use.bound.call();
      this.callMs.push(performance.now() - t0);
      if (this.callMs.length > IN_APP_CALLS) this.callMs.shift();
      this.callMedian = undefined;
    };
  }

  /** Ends a step's use of the slot (its plan is dropped): `call` is what {@link use} returned. */
  release(call: () => void): void {
    const i = this.uses.findIndex((u) => u.call === call);
    if (i < 0) return;
    this.uses[i].bound.release();
    this.uses.splice(i, 1);
  }

  /** The median latency of the latest calls in the app's inferences; NaN before any. */
  medianCallMs(): number {
    return (this.callMedian ??= this.callMs.length ? median(this.callMs) : NaN);
  }

  get instances(): number {
    return this.uses.length;
  }

  get kernelId(): string {
    return this.kernel.id;
  }

  /**
   * Swaps in another kernel for every use. Each use's old binding is released before the new one
   * is made, so a packed copy's block can be reused at once and the arena does not grow by a
   * whole op's weights.
   */
  replace(kernel: OpKernel): void {
    this.kernel = kernel;
    this.callMs.length = 0;
    this.callMedian = undefined;
    for (const use of this.uses) {
      use.bound.release();
      use.bound = kernel.bind(use.bindings);
    }
  }
}

/**
 * One op's real tensors, copied from the app's inference into a memory of their own, for
 * checking and timing kernels between runs; dropped (and garbage-collected) once the op settles,
 * so tuning leaves the model's arena as it would be without it.
 */
interface Bench {
  readonly arena: Arena;
  readonly bindings: Bindings;
  readonly output: Operand;
  /** Rows of C compared with the reference, and their values (computed between runs, not in the first one). */
  readonly rows: number[];
  expected?: Float32Array;
  /** The incumbent's C on this bench: every candidate must match it too. */
  incumbentOutput?: Float32Array;
  /** The incumbent bound on the bench. */
  incumbent?: Bound;
}

interface Candidate {
  readonly kernelId: string;
  readonly fromZoo: boolean;
  readonly artifact?: KernelArtifact;
  code?: KernelCode;
  failed?: string;
  /** Bound on the bench, once checked. */
  bound?: Bound;
  /** Called enough for the engine's optimizing tier (its first pair is not timed). */
  warm?: boolean;
  /** Calls per timed batch, sized by its warm-up. */
  batch?: { calls: number };
  output?: Float32Array;
  maxRelError?: number;
  readonly samples: number[];
  /** The incumbent's samples, each taken right after one of the candidate's. */
  readonly incumbentSamples: number[];
}

/**
 * Tunes one op of a running model: puts the Welcome's kernel in use before the first run once it
 * is right on seeded inputs, copies the op's real tensors at its first call, checks the incumbent
 * on them between runs, then checks each offer against the reference and the incumbent and times
 * it beside the incumbent, pair by pair; a faster one by the margin replaces it everywhere, a
 * loser is released with its memory. Once the session has no more offers for the op, reports the
 * top kernels and frees the bench.
 */
export class OpTuner extends TunerBase<KernelSlot> {
  private bench?: Bench;
  private candidate?: Candidate;
  /** Calls per timed batch of the incumbent on the bench. */
  private incumbentBatch?: { calls: number };
  /** The Welcome's kernel while it is the incumbent, to bind on the bench. */
  private initial?: { id: string; code: KernelCode };

  constructor(slot: KernelSlot, private readonly arena: Arena, session: ModelSession, context: TunerContext) {
    super(slot, session, context);
    slot.onFirstCall = (bindings) => this.capture(bindings);
  }

  /**
   * The Welcome's kernel, before the first run: compiled, tried out on seeded inputs (which also
   * warms it up) and checked against the reference there, then in use from the first call; after
   * the first run it is checked again on the op's real tensors.
   */
  async offerInitial(initial: InitialKernel): Promise<void> {
    const id = initial.artifact?.ref?.kernelId ?? "";
    try {
      const { code, error } = await triedOut(initial.artifact!, this.op, this.options.tolerance, this.arena.pool);
      this.slot.replace(code.instantiate(this.arena));
      this.initial = { id, code };
      this.fromZoo = initial.fromZoo;
      this.welcomeKernel = { id, fromZoo: initial.fromZoo };
      this.took(id, initial.artifact!, error);
      this.log(`  ${this.slot.key}: ${initial.fromZoo ? "the zoo's" : "the initial"} kernel ${id} checked and in use`);
    } catch (e) {
      this.refuse(id, (e as Error).message);
    }
    this.greeted = true;
  }

  override unreachable(): void {
    super.unreachable();
    this.bench?.incumbent?.release();
    this.bench = undefined;
  }

  async adoptKept(artifact: KernelArtifact): Promise<boolean> {
    const id = artifact.ref?.kernelId ?? "";
    let tried: { code: KernelCode; error: number };
    try {
      tried = await triedOut(artifact, this.op, this.options.tolerance, this.arena.pool);
    } catch (e) {
      this.log(`  ${this.slot.key}: the kernel kept on this device is unusable (${(e as Error).message}); ignored`);
      return false;
    }
    this.slot.replace(tried.code.instantiate(this.arena));
    this.initial = { id, code: tried.code };
    this.restored = true;
    this.localOnly.add(id);
    this.took(id, artifact, tried.error);
    this.log(`  ${this.slot.key}: kernel ${id}, kept on this device, in use`);
    return true;
  }

  /** The next piece of work, if any can be done now. */
  next(): Task | undefined {
    const bench = this.bench;
    if (!bench || this.settled || !this.greeted) return undefined;
    const incumbentMs = this.incumbentMs();
    if (!bench.incumbentOutput) return { costMs: incumbentMs, run: () => this.baseline(bench) };
    const c = this.candidate;
    if (!c) {
      this.takeNext();
      return undefined;
    }
    if (c.failed) return { costMs: 0, run: () => this.drop(c, c.failed!) };
    if (!c.code) return undefined; // still compiling
    if (!c.bound) return { costMs: incumbentMs, run: () => this.check(bench, c) };
    return { costMs: 2 * incumbentMs, run: () => this.pair(bench, c) };
  }

  /** Bytes of this op's bench memory while it tunes (0 once settled). */
  get benchBytes(): number {
    return this.bench?.arena.bytes ?? 0;
  }

  /** The incumbent's bench latency (before it was timed there, its latency in the app's inference). */
  incumbentMs(): number {
    if (this.incumbentSamples.length) return median(this.incumbentSamples);
    return this.slot.callMs.length ? this.slot.medianCallMs() : flopsOf(this.op) / 2e7;
  }

  /** Copies the op's activations into a bench of its own: a copy, nothing more, in the app's run. */
  private capture(bindings: Bindings): void {
    const arena = this.arena.sibling();
    const operands: Record<string, Operand> = {};
    const inputs = inputNames(this.op);
    for (const [name, from] of Object.entries(bindings.operands)) {
      const to = { offset: arena.alloc(from.floats * 4), floats: from.floats };
      if (inputs.includes(name)) arena.f32(to.offset, to.floats).set(this.arena.f32(from.offset, from.floats)); // not C, not scratch
      operands[name] = to;
    }
    // weights are copied to the bench only when a kernel bound there reads them unpacked
    const weights = Object.fromEntries(Object.entries(bindings.weights).map(([name, w]) => [name, new ArenaWeight(arena, () => w.values)]));
    this.bench = { arena, bindings: { operands, weights }, output: operands.C, rows: sampleRows(this.op) };
  }

  /**
   * Between the first runs: the reference rows of the op's real tensors, and the incumbent's C
   * there, what candidates must match. A Welcome kernel wrong on them gives way to the reference.
   */
  private baseline(bench: Bench): void {
    const { operands, weights } = bench.bindings;
    const inputs = Object.fromEntries(inputNames(this.op)
      .map((n) => [n, operandView(this.op, n, weights[n]?.values ?? bench.arena.f32(operands[n].offset, operands[n].floats))]));
    bench.expected = referenceOp(this.op, inputs, bench.rows);
    const initial = this.initial;
    let verdict = this.verify(bench, () => (initial ? initial.code.instantiate(bench.arena) : baseKernel(this.op, bench.arena)));
    if (!verdict.ok && initial) {
      this.initial = undefined;
      this.measured.delete(initial.id);
      this.refuse(initial.id, `${verdict.why} (on the op's tensors)`);
      this.slot.replace(baseKernel(this.op, this.arena));
      this.history.push({ atMs: this.clock(), kernelId: this.slot.kernelId, ms: NaN });
      verdict = this.verify(bench, () => baseKernel(this.op, bench.arena));
    }
    if (!verdict.ok) throw new Error(`the ${this.slot.kernelId} kernel of ${this.slot.key} fails its check against the reference: ${verdict.why}`);
    bench.incumbentOutput = verdict.output;
    bench.incumbent = verdict.bound;
  }

  protected start(offer: KernelOffer): void {
    const id = offer.artifact?.ref?.kernelId ?? "";
    const c: Candidate = { kernelId: id, fromZoo: offer.fromZoo, artifact: offer.artifact, samples: [], incumbentSamples: [] };
    this.candidate = c;

    compileKernel(offer.artifact!, this.op, this.arena.pool).then((code) => { c.code = code; }, (e: Error) => { c.failed = e.message; });
  }

  private check(bench: Bench, c: Candidate): void {
    const verdict = this.verify(bench, () => c.code!.instantiate(bench.arena));
    if (!verdict.ok) return this.drop(c, verdict.why);
    c.bound = verdict.bound;
    c.output = verdict.output;
    c.maxRelError = verdict.maxRelError;
  }

  /**
   * One timed pair, candidate then incumbent, side by side on the bench (the candidate's first
   * calls only warm it up), then {@link pairVerdict}.
   */
  private pair(bench: Bench, c: Candidate): void {
    const calls = batchSize(this.incumbentMs(), SAMPLE_MS);
    c.batch ??= { calls };
    this.incumbentBatch ??= { calls };
    if (!c.warm) {
      // a kernel's first calls run on the engine's baseline tier: timing them would refuse good kernels
      timeBatch(c.bound!.call, c.batch);
      c.warm = true;
      return;
    }
    c.samples.push(timeBatch(c.bound!.call, c.batch));
    c.incumbentSamples.push(timeBatch(bench.incumbent!.call, this.incumbentBatch));
    const cand = median(c.samples), inc = median(c.incumbentSamples);
    this.incumbentSamples = [...c.incumbentSamples];
    const verdict = pairVerdict(c.samples, c.incumbentSamples, this.options);
    if (verdict === "win") this.win(bench, c, cand, inc);
    else if (verdict === "lose") this.lose(c, cand, inc);
  }

  private win(bench: Bench, c: Candidate, cand: number, inc: number): void {
    const replaced = this.slot.kernel.id;
    this.measured.set(c.kernelId, { medianMs: cand, samples: c.samples.length, maxRelError: c.maxRelError! });
    this.recordIncumbent(inc);
    this.slot.replace(c.code!.instantiate(this.arena));
    this.incumbentArtifact = c.artifact;
    bench.incumbent!.release();
    bench.incumbent = c.bound;
    bench.incumbentOutput = c.output;
    this.incumbentBatch = c.batch;
    this.incumbentSamples = [...c.samples];
    this.history.push({ atMs: this.clock(), kernelId: c.kernelId, ms: cand });
    this.log(`  ${this.slot.key}: ${c.kernelId} ${cand.toFixed(3)} ms replaces ${inc.toFixed(3)} ms`);
    this.emit("kernel-timed", { op: this.slot.key, kernelId: c.kernelId, ms: cand, incumbentId: replaced, incumbentMs: inc, faster: true });
    this.emit("new-best", { op: this.slot.key, kernelId: c.kernelId, ms: cand, replaced, replacedMs: inc });
    this.candidate = undefined;
  }

  private lose(c: Candidate, cand: number, inc: number): void {
    this.measured.set(c.kernelId, { medianMs: cand, samples: c.samples.length, maxRelError: c.maxRelError! });
    this.recordIncumbent(inc);
    this.emit("kernel-timed", { op: this.slot.key, kernelId: c.kernelId, ms: cand, incumbentId: this.slot.kernel.id, incumbentMs: inc, faster: false });
    c.bound!.release();
    this.candidate = undefined;
  }

  private drop(c: Candidate, why: string): void {
    this.refuse(c.kernelId, why);
    c.bound?.release();
    this.candidate = undefined;
  }

  /** Runs a kernel on the bench (C poisoned first) and checks C against the reference rows and the incumbent's C. */
  private verify(bench: Bench, kernel: () => OpKernel): { ok: true; bound: Bound; output: Float32Array; maxRelError: number } | { ok: false; why: string } {
    let bound: Bound | undefined;
    try {
      bound = kernel().bind(bench.bindings);
      bench.arena.f32(bench.output.offset, bench.output.floats).fill(NaN);
      bound.call();
    } catch (e) {
      bound?.release();
      return { ok: false, why: (e as Error).message };
    }
    const verdict = this.judge(bench, bench.arena.f32(bench.output.offset, bench.output.floats).slice());
    if (!verdict.ok) bound.release();
    return verdict.ok ? { ...verdict, bound } : verdict;
  }

  /** C against the reference rows and the incumbent's C. */
  private judge(bench: Bench, output: Float32Array): Judged {
    return judgeOutput(this.op, output, bench.rows, bench.expected!, bench.incumbentOutput, this.options.tolerance);
  }

  /** Ends tuning now (the page is going away): the candidate under way is dropped, and what was timed is reported. */
  settleNow(): void {
    if (this.settled || !this.bench) return;
    this.candidate?.bound?.release();
    this.candidate = undefined;
    this.settle();
  }

  /** No more offers: report the top kernels and free the bench. */
  protected settle(): void {
    const own = this.measured.get(this.slot.kernel.id);
    if (own && !Number.isFinite(own.medianMs) && this.slot.callMs.length) {
      this.measured.set(this.slot.kernel.id, { ...own, medianMs: this.slot.medianCallMs(), samples: this.slot.callMs.length });
    }
    this.bench!.incumbent?.release();
    this.bench = undefined;
    this.keepAndReport();
  }
}

/** A kernel compiled and run once on seeded inputs (warming it up), its rows checked against the reference. */
export async function triedOut(artifact: KernelArtifact, op: OpSpec, tolerance: number,
  pool?: WorkerPool): Promise<{ code: KernelCode; error: number }> {
  const code = await compileKernel(artifact, op, pool);
  const trial = code.tryOut();
  const rows = sampleRows(op);
  const error = maxRelativeError(pickRows(op, trial.output, rows), referenceOp(op, trial.inputs, rows));
  tolerance = opTolerance(op, tolerance);
  if (!(error <= tolerance)) throw new Error(`max relative error ${error.toExponential(2)} against the reference on seeded inputs > ${tolerance}`);
  return { code, error };
}
