import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { batchSize, timeBatch } from "../clock.js";
import { KernelOfferSchema, SessionLimit, type InitialKernel, type KernelOffer, type RankedKernelSchema } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { flopsOf, operandShapes, outputRows, referenceOp } from "../ops.js";
import { maxRelativeError, TOLERANCE } from "../reference.js";
import { median } from "../timing.js";
import { Arena, ArenaWeight } from "./arena.js";
import type { WorkerPool } from "../threads/pool.js";
import type { Emit } from "./events.js";
import { compileKernel, referenceKernel, type Bindings, type Bound, type KernelCode, type OpKernel, type Operand } from "./kernels.js";
import type { ModelSession } from "./session.js";

/** How a model tunes while it infers. */
export interface TuningOptions {
  /** Time spent tuning, as a fraction of inference time (default 0.1). */
  budget?: number;
  /** A candidate replaces the incumbent only when faster by this fraction (default 0.03). */
  margin?: number;
  /** Timed pairs (candidate, incumbent) before deciding (default 5). */
  samples?: number;
  /** Largest accepted error against the reference and the incumbent (default {@link TOLERANCE}, as {@link maxRelativeError}). */
  tolerance?: number;
}

export const DEFAULT_TUNING: Required<TuningOptions> = { budget: 0.1, margin: 0.03, samples: 5, tolerance: TOLERANCE };

/** Above this many flops, a check compares a sample of C's rows with the reference (and all of C with the incumbent). */
const FULL_REFERENCE_FLOPS = 1 << 25;
/** Rows of C checked against the reference for large ops: the first and last few (edge tiles) and some spread between. */
const SAMPLED_ROWS = { ends: 4, spread: 8 };
/** A sample lasts at least this long (short ops are repeated). */
const SAMPLE_MS = 0.5;
/** In-app call latencies a slot keeps. */
const IN_APP_CALLS = 9;
/** A candidate this much faster than the incumbent after one sample wins at once. */
const DECISIVE_WIN = 1.5;
/** A candidate this much slower after one sample loses at once; after three, one slower by {@link CLEARLY_SLOWER} (medians) does. */
const DECISIVE_LOSS = 1.25;
const CLEARLY_SLOWER = 1.1;

/** The kernel in use for one distinct op, and every place (step) that calls it. */
export class KernelSlot {
  kernel: OpKernel;
  /** Latencies of the latest calls in the app's inferences, milliseconds (a few, newest last). */
  readonly callMs: number[] = [];
  /** Called with a step's operands before its first call (the tuner captures that op's real tensors there). */
  onFirstCall?: (bindings: Bindings) => void;
  private readonly uses: { bindings: Bindings; bound: Bound }[] = [];

  constructor(readonly key: string, readonly op: OpSpec, kernel: OpKernel) {
    this.kernel = kernel;
  }

  /** A step's call, which follows the slot's kernel when it is replaced. */
  use(bindings: Bindings): () => void {
    const use = { bindings, bound: this.kernel.bind(bindings) };
    this.uses.push(use);
    return () => {
      if (this.onFirstCall) {
        const hook = this.onFirstCall;
        this.onFirstCall = undefined;
        hook(bindings);
      }
      const t0 = performance.now();
      use.bound.call();
      this.callMs.push(performance.now() - t0);
      if (this.callMs.length > IN_APP_CALLS) this.callMs.shift();
    };
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

/** A unit of tuning work and what it is expected to cost. */
export interface Task {
  readonly costMs: number;
  /** The work; GPU work returns its promise, awaited before the next task. */
  run(): void | Promise<void>;
}

/** What a tuner's base needs of its op's slot: the op, its key, and the id of the kernel in use. */
export interface TunedSlot {
  readonly key: string;
  readonly op: OpSpec;
  readonly kernelId: string;
}

/**
 * What every op tuner keeps, on Wasm and on WebGPU alike: the incumbents' history, refusals, what
 * each kernel measured, where the op started (the zoo's kernel, the Welcome's, one kept on the
 * device), the incumbent's artifact to keep; and what it does with them: refusing a kernel,
 * taking the Welcome's for an op started on a kept kernel, and the report once it settles.
 */
export abstract class TunerBase<S extends TunedSlot> {
  /** Every incumbent, with when it took over (ms since tuning began) and its bench latency. */
  readonly history: { atMs: number; kernelId: string; ms: number }[] = [];
  /** Kernels refused, with the reason. */
  readonly refused = new Map<string, string>();
  settled = false;
  /** Whether the op's first kernel was the zoo's elected one (not the lite space's first candidate for a new kind). */
  fromZoo = false;
  /** Whether the op's first kernel was one kept on the device from an earlier session. */
  restored = false;
  report?: Promise<void>;
  protected readonly measured = new Map<string, Measured>();
  protected incumbentSamples: number[] = [];
  /** The kernel the gateway's Welcome started this op with, reported with its timing. */
  protected welcomeKernel?: { id: string; fromZoo: boolean };
  /** The incumbent's artifact, to keep on the device when the op settles. */
  protected incumbentArtifact?: KernelArtifact;
  /** Kernels this session's gateway did not issue (kept on the device): never reported. */
  protected readonly localOnly = new Set<string>();

  constructor(
    protected readonly slot: S,
    protected readonly session: ModelSession,
    protected readonly options: Required<TuningOptions>,
    protected readonly clock: () => number,
    protected readonly log: (line: string) => void,
    protected readonly emit: Emit,
    /** Keeps the kernel an op settles on (on the device, for the next load). */
    protected readonly keep: (kernelId: string, artifact: KernelArtifact, ms: number) => void,
  ) {}

  get op(): OpSpec {
    return this.slot.op;
  }

  /** Lines for the model's notes: a session that failed. */
  notes(): string[] {
    return this.session.failure ? [`${this.slot.key}: the gateway session ended early (${this.session.failure})`] : [];
  }

  close(): void {
    this.session.close();
  }

  /** The Welcome's kernel for an op that started on a kept one: the same (now issued), or a first candidate. */
  reconcile(initial: InitialKernel): void {
    const id = initial.artifact?.ref?.kernelId ?? "";
    this.fromZoo = initial.fromZoo;
    this.welcomeKernel = { id, fromZoo: initial.fromZoo };
    if (this.localOnly.delete(id)) return;
    this.session.enqueueLocal(this.slot.key, create(KernelOfferSchema, { artifact: initial.artifact, rank: 0, fromZoo: initial.fromZoo }));
  }

  /** With no candidate under way: starts the session's next offer for the op, or settles once it has no more. */
  protected takeNext(): void {
    const offer = this.session.take(this.slot.key);
    if (offer) this.start(offer);
    else if (this.session.exhausted(this.slot.key)) this.settle();
  }

  /** Takes an offer as the candidate: its code compiled (or pipeline built) in the background. */
  protected abstract start(offer: KernelOffer): void;

  /** No more offers (or the page is going away): the op keeps its kernel and reports. */
  protected abstract settle(): void;

  /** A kernel now in use, checked with this error: measured, in the history, its artifact the one to keep. */
  protected took(id: string, artifact: KernelArtifact, error: number): void {
    this.incumbentArtifact = artifact;
    this.measured.set(id, { medianMs: NaN, samples: 0, maxRelError: error });
    this.history.push({ atMs: this.clock(), kernelId: id, ms: NaN });
  }

  /** The incumbent's latest bench median, for the report. */
  protected recordIncumbent(ms: number): void {
    const id = this.slot.kernelId;
    const known = this.measured.get(id);
    if (known) this.measured.set(id, { ...known, medianMs: ms, samples: this.incumbentSamples.length });
    if (this.history.length && Number.isNaN(this.history.at(-1)!.ms)) this.history.at(-1)!.ms = ms;
  }

  protected refuse(id: string, why: string): void {
    this.refused.set(id, why);
    this.log(`  ${this.slot.key}: ${id} refused (${why})`);
    this.emit("kernel-refused", { op: this.slot.key, kernelId: id, why });
  }

  /** Settled: the incumbent kept on the device, the top kernels reported. */
  protected keepAndReport(): void {
    const id = this.slot.kernelId;
    this.settled = true;
    this.emit("op-settled", { op: this.slot.key, kernelId: id });
    if (this.incumbentArtifact) this.keep(id, this.incumbentArtifact, this.measured.get(id)?.medianMs ?? NaN);
    this.report = reportSettled({
      session: this.session, op: this.op, key: this.slot.key, kernelId: id, measured: this.measured,
      localOnly: this.localOnly, welcome: this.welcomeKernel, log: this.log, emit: this.emit,
    });
  }
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

  constructor(
    slot: KernelSlot,
    private readonly arena: Arena,
    session: ModelSession,
    options: Required<TuningOptions>,
    clock: () => number,
    log: (line: string) => void,
    emit: Emit = () => undefined,
    keep: (kernelId: string, artifact: KernelArtifact, ms: number) => void = () => undefined,
  ) {
    super(slot, session, options, clock, log, emit, keep);
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
  }

  /**
   * A kernel kept on the device from an earlier session, already tried out: in use from the first
   * call, before the gateway answers. The Welcome's kernel, if another, is then timed against it.
   */
  adoptRestored(id: string, code: KernelCode, artifact: KernelArtifact, error: number): void {
    this.slot.replace(code.instantiate(this.arena));
    this.initial = { id, code };
    this.restored = true;
    this.localOnly.add(id);
    this.took(id, artifact, error);
    this.log(`  ${this.slot.key}: kernel ${id}, kept on this device, in use`);
  }

  /** The next piece of work, if any can be done now. */
  next(): Task | undefined {
    const bench = this.bench;
    if (!bench || this.settled) return undefined;
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
    return this.slot.callMs.length ? median(this.slot.callMs) : flopsOf(this.op) / 2e7;
  }

  /** Copies the op's activations into a bench of its own: a copy, nothing more, in the app's run. */
  private capture(bindings: Bindings): void {
    const arena = this.arena.sibling();
    const operands: Record<string, Operand> = {};
    for (const [name, from] of Object.entries(bindings.operands)) {
      const to = { offset: arena.alloc(from.floats * 4), floats: from.floats };
      if (name !== "C") arena.f32(to.offset, to.floats).set(this.arena.f32(from.offset, from.floats));
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
    const shapes = new Map(operandShapes(this.op));
    const { operands, weights } = bench.bindings;
    const inputs = Object.fromEntries([...shapes.keys()].filter((n) => n !== "C")
      .map((n) => [n, weights[n]?.values ?? bench.arena.f32(operands[n].offset, operands[n].floats)]));
    bench.expected = referenceOp(this.op, inputs, bench.rows);
    const initial = this.initial;
    let verdict = this.verify(bench, () => (initial ? initial.code.instantiate(bench.arena) : referenceKernel(this.op, bench.arena)));
    if (!verdict.ok && initial) {
      this.initial = undefined;
      this.measured.delete(initial.id);
      this.refuse(initial.id, `${verdict.why} (on the op's tensors)`);
      this.slot.replace(referenceKernel(this.op, this.arena));
      this.history.push({ atMs: this.clock(), kernelId: "reference", ms: NaN });
      verdict = this.verify(bench, () => referenceKernel(this.op, bench.arena));
    }
    if (!verdict.ok) throw new Error(`the reference of ${this.slot.key} fails its own check: ${verdict.why}`);
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
      this.measured.set(this.slot.kernel.id, { ...own, medianMs: median(this.slot.callMs), samples: this.slot.callMs.length });
    }
    this.bench!.incumbent?.release();
    this.bench = undefined;
    this.keepAndReport();
  }
}

/** A kernel's bench measurement, as a report ranks it. */
export interface Measured {
  medianMs: number;
  samples: number;
  maxRelError: number;
}

/**
 * Sends a settled op's report: its fastest timed kernels (the session limit's top N) the gateway issued, and the
 * Welcome's kernel as timed here (for the zoo's speedup over where sessions start); logs and emits
 * the acknowledgement or the refusal. Undefined when nothing was timed.
 */
export function reportSettled(r: {
  session: ModelSession; op: OpSpec; key: string; kernelId: string; measured: ReadonlyMap<string, Measured>; localOnly: ReadonlySet<string>;
  welcome?: { id: string; fromZoo: boolean }; log: (line: string) => void; emit: Emit;
}): Promise<void> | undefined {
  const ranked = [...r.measured].filter(([id, m]) => timed(m) && !r.localOnly.has(id)).sort((a, b) => a[1].medianMs - b[1].medianMs).slice(0, SessionLimit.REPORT_TOP_N)
    .map(([kernelId, m]): MessageInitShape<typeof RankedKernelSchema> => ({ kernelId, ...m }));
  if (ranked.length === 0) return undefined;
  const started = r.welcome && r.measured.get(r.welcome.id);
  const initial = started && timed(started) && r.welcome
    ? { kernel: { kernelId: r.welcome.id, ...started }, fromZoo: r.welcome.fromZoo } : undefined;
  return r.session.report(r.op, ranked, initial).then(
    () => {
      r.log(`  ${r.key}: settled on ${r.kernelId}; report acknowledged`);
      r.emit("report-acked", { op: r.key, kernelId: r.kernelId, ranked: ranked.length });
    },
    (e: Error) => {
      r.log(`  ${r.key}: report not stored (${e.message})`);
      r.emit("report-failed", { op: r.key, why: e.message });
    },
  );
}

/** Whether a measurement has a latency to report: finite and above 0 (the gateway refuses the report otherwise). */
function timed(m: Measured): boolean {
  return Number.isFinite(m.medianMs) && m.medianMs > 0;
}

/** A kernel's C judged: right (with its error against the reference), or why not. */
export type Judged = { ok: true; output: Float32Array; maxRelError: number } | { ok: false; why: string };

/**
 * A kernel's C (poisoned with NaN before it ran) against the reference's values of the given rows,
 * within `tolerance`, and against the incumbent's C, if any, within twice that.
 */
export function judgeOutput(op: OpSpec, output: Float32Array, rows: readonly number[], expected: Float32Array,
  incumbentOutput: Float32Array | undefined, tolerance: number): Judged {
  const vsReference = maxRelativeError(pickRows(op, output, rows), expected);
  if (!(vsReference <= tolerance)) return { ok: false, why: `max relative error ${vsReference.toExponential(2)} against the reference > ${tolerance}` };
  if (output.some(Number.isNaN)) return { ok: false, why: "it left part of C unwritten" };
  const vsIncumbent = incumbentOutput ? maxRelativeError(output, incumbentOutput) : 0;
  if (!(vsIncumbent <= 2 * tolerance)) return { ok: false, why: `max relative error ${vsIncumbent.toExponential(2)} against the incumbent > ${2 * tolerance}` };
  return { ok: true, output, maxRelError: vsReference };
}

/**
 * What a candidate's timed pairs so far decide (samples in milliseconds, the incumbent's each taken
 * right after the candidate's): it wins at once when 1.5 times faster or loses at once when 1.25
 * times slower after one pair, loses after three when its median is 1.1 times slower, else is
 * decided after `samples` pairs by the margin (medians, so noise does not flip it); undefined: time another pair.
 */
export function pairVerdict(samples: readonly number[], incumbentSamples: readonly number[],
  options: Pick<Required<TuningOptions>, "samples" | "margin">): "win" | "lose" | undefined {
  const cand = median([...samples]), inc = median([...incumbentSamples]);
  if (samples.length === 1 && cand > DECISIVE_LOSS * inc) return "lose";
  if (samples.length === 1 && cand * DECISIVE_WIN < inc) return "win";
  if (samples.length === 3 && cand > CLEARLY_SLOWER * inc) return "lose";
  if (samples.length < options.samples) return undefined;
  return cand < (1 - options.margin) * inc ? "win" : "lose";
}

/** A kernel compiled and run once on seeded inputs (warming it up), its rows checked against the reference. */
export async function triedOut(artifact: KernelArtifact, op: OpSpec, tolerance: number,
  pool?: WorkerPool): Promise<{ code: KernelCode; error: number }> {
  const code = await compileKernel(artifact, op, pool);
  const trial = code.tryOut();
  const rows = sampleRows(op);
  const error = maxRelativeError(pickRows(op, trial.output, rows), referenceOp(op, trial.inputs, rows));
  if (!(error <= tolerance)) throw new Error(`max relative error ${error.toExponential(2)} against the reference on seeded inputs > ${tolerance}`);
  return { code, error };
}

/** The given rows of an op's C. */
export function pickRows(op: OpSpec, output: Float32Array, rows: readonly number[]): Float32Array {
  const { cols } = outputRows(op);
  const picked = new Float32Array(rows.length * cols);
  rows.forEach((r, i) => picked.set(output.subarray(r * cols, (r + 1) * cols), i * cols));
  return picked;
}

/** The rows of an op's C checked against the reference: all, or for large ops the first and last few and some spread between. */
export function sampleRows(op: OpSpec): number[] {
  const { rows } = outputRows(op);
  const all = [...Array(rows).keys()];
  if (flopsOf(op) <= FULL_REFERENCE_FLOPS || rows <= 2 * SAMPLED_ROWS.ends + SAMPLED_ROWS.spread) return all;
  const picked = new Set([...all.slice(0, SAMPLED_ROWS.ends), ...all.slice(-SAMPLED_ROWS.ends)]);
  for (let i = 1; i <= SAMPLED_ROWS.spread; i++) picked.add(Math.floor((i * rows) / (SAMPLED_ROWS.spread + 1)));
  return [...picked].sort((a, b) => a - b);
}
