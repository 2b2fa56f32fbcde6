import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { KernelOfferSchema, SessionLimit, type InitialKernel, type KernelOffer, type RankedKernelSchema } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, KernelArtifactSchema, type DeviceProfile, type KernelArtifact, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { flopsOf, opTolerance, outputRows } from "../ops.js";
import { maxRelativeError, TOLERANCE } from "../reference.js";
import { median } from "../timing.js";
import type { ModelEmitter, Emit } from "./events.js";
import { indexedDbKernelStore, type KernelStore, type StoredKernel } from "./kernel-store.js";
import type { LoadOptions, OpStats } from "./model.js";
import { ModelSession, sessionGroups } from "./session.js";

// How a model tunes while it infers, on either backend: the rules a candidate is judged by
// (checks, timed pairs, reports), the base every op tuner extends, and ModelTuning, which opens an
// op's gateway session, starts it on a kernel kept on the device or the Welcome's, shares the
// tuning budget between runs, and keeps each op's settled kernel for the next load.

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
/** A candidate this much faster than the incumbent after one sample wins at once. */
const DECISIVE_WIN = 1.5;
/** A candidate this much slower after one sample loses at once; after three, one slower by {@link CLEARLY_SLOWER} (medians) does. */
const DECISIVE_LOSS = 1.25;
const CLEARLY_SLOWER = 1.1;

/** Keeps the kernel an op settled on, with its bench latency. */
export type Keep = (kernelId: string, artifact: KernelArtifact, ms: number) => void;

/** What a model gives each of its op tuners: its tuning options, clock, log, events, and where a settled kernel is kept. */
export interface TunerContext {
  readonly options: Required<TuningOptions>;
  readonly clock: () => number;
  readonly log: (line: string) => void;
  readonly emit: Emit;
  readonly keep: Keep;
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
  /**
   * Whether the Welcome's kernel for the op was taken (in use, or refused) or reconciled with a
   * kept one: a model that does not wait for the Welcome tunes nothing before, so that no offer
   * is timed against a kernel the Welcome's then replaces.
   */
  protected greeted = false;
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

  protected readonly options: Required<TuningOptions>;
  /** Milliseconds since the model's first run. */
  protected readonly clock: () => number;
  protected readonly log: (line: string) => void;
  protected readonly emit: Emit;
  /** Keeps the kernel an op settles on (on the device, for the next load). */
  protected readonly keep: Keep;

  constructor(protected readonly slot: S, protected readonly session: ModelSession, context: TunerContext) {
    ({ options: this.options, clock: this.clock, log: this.log, emit: this.emit, keep: this.keep } = context);
  }

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

  /** The op's session never started (the gateway did not answer): it tunes no more and keeps the kernel it has. */
  unreachable(): void {
    this.greeted = true;
    this.settled = true;
  }

  /** The Welcome's kernel for an op that started on a kept one: the same (now issued), or a first candidate. */
  reconcile(initial: InitialKernel): void {
    this.greeted = true;
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

  /** The Welcome's kernel for an op with none kept: checked, then in use from the next run. */
  abstract offerInitial(initial: InitialKernel): Promise<void>;

  /**
   * A kernel kept on the device by an earlier load: tried out, then in use before the gateway
   * answers (the Welcome's kernel, if another, is then timed against it); false, and a line
   * logged, when it is unusable.
   */
  abstract adoptKept(artifact: KernelArtifact): Promise<boolean>;

  /** The next piece of tuning work, if any can be done now. */
  abstract next(): Task | undefined;

  /** Ends tuning now (the page is going away): what was timed is reported. */
  abstract settleNow(): void;

  /** Bytes of this op's bench while it tunes (0 once settled). */
  abstract get benchBytes(): number;

  /** The incumbent's bench latency (before it was timed there, an estimate). */
  abstract incumbentMs(): number;

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
  tolerance = opTolerance(op, tolerance);
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
 * A model's tuning, the same on every backend: its ops' tuners and their gateway sessions (one
 * Hello per group of {@link sessionGroups}), the kernels kept on the device, the budget shared
 * between runs, the reports flushed when the page goes away, and each op's row of the stats.
 * A backend gives it `make`, which makes the tuner of one op's slot in a session.
 */
export class ModelTuning<S extends TunedSlot & { readonly instances: number }, T extends TunerBase<S>> {
  readonly tuners = new Map<string, T>();
  readonly options: Required<TuningOptions>;
  readonly store?: KernelStore;
  private credit = 0;
  private pageHide?: () => void;

  constructor(
    private readonly load: LoadOptions,
    /** The kernels' backend: what the sessions ask for and the kept kernels hold. */
    private readonly backend: Backend.WASM | Backend.WGSL,
    private readonly events: ModelEmitter,
    /** The model's notes, where a session that fails says why. */
    private readonly notes: string[],
    private readonly clock: () => number,
    private readonly make: (slot: S, session: ModelSession, context: TunerContext) => T,
  ) {
    this.options = { ...DEFAULT_TUNING, ...load.tuning };
    this.store = load.store === null ? undefined : (load.store ?? indexedDbKernelStore());
  }

  /**
   * Opens gateway sessions for new ops and waits for their Welcomes, so the first run already uses
   * the zoo's (or the space's first) kernels, each checked. An op with a kernel kept on this
   * device starts on it; a group whose every op does need not wait for the gateway at all. A
   * gateway that cannot be reached leaves a group's ops on the kernels they have, and a note says
   * why. After each group, `check` may end the connecting (the model cannot go on as it is):
   * returns its reason, or the first group's failure. `wait` false: no group is waited for (its
   * ops run the kernels they have until their Welcome's are checked).
   */
  async connect(slots: readonly S[], device: DeviceProfile, check: (group: readonly S[]) => string | undefined = () => undefined,
    { wait = true }: { wait?: boolean } = {}): Promise<string | undefined> {
    this.flushOnPageHide();
    let failure: string | undefined;
    for (const group of sessionGroups(slots)) {
      const session = new ModelSession(this.load.gateway!, device, group.map((s) => s.op), {
        client: this.load.client, reconnect: this.load.reconnect, log: this.load.log, backend: this.backend,
        onConnection: (state, detail) => this.events.emit("connection", { state, ops: group.length, detail }),
      });
      const tunerOf = (slot: S): T => {
        let tuner = this.tuners.get(slot.key);
        if (!tuner) {
          tuner = this.make(slot, session, {
            options: this.options, clock: this.clock, log: this.load.log ?? (() => undefined), emit: this.events.emit,
            keep: this.keeper(device.fingerprint, slot.key),
          });
          this.tuners.set(slot.key, tuner);
        }
        return tuner;
      };
      const adopted = new Set<string>();
      await Promise.all(group.map(async (slot) => {
        const entry = await this.store?.get(device.fingerprint, slot.key);
        const artifact = entry && keptArtifact(entry, slot.op, this.backend);
        if (artifact && await tunerOf(slot).adoptKept(artifact)) adopted.add(slot.key);
      }));
      const welcomed = session.welcome.then((welcome) => {
        this.events.emit("connection", { state: "open", ops: group.length, detail: "" });
        return welcome;
      }, (e: Error) => {
        this.events.emit("connection", { state: "failed", ops: group.length, detail: e.message });
        session.close();
        return e;
      });
      const greet = async (welcome: Map<string, InitialKernel>): Promise<void> => {
        await Promise.all(group.map((slot) => (adopted.has(slot.key)
          ? tunerOf(slot).reconcile(welcome.get(slot.key)!) : tunerOf(slot).offerInitial(welcome.get(slot.key)!))));
      };
      // a session not waited for is its ops' tuners' from the start, so that close() closes it
      if (!wait) group.forEach((slot) => tunerOf(slot));
      if (adopted.size === group.length || !wait) {
        // every op has a kept kernel (or runs its first one meanwhile): the run need not wait for the gateway
        void welcomed.then((welcome) => {
          if (!(welcome instanceof Error)) return greet(welcome);
          group.forEach((slot) => this.tuners.get(slot.key)?.unreachable());
          this.notes.push(`the gateway did not answer (${welcome.message}): ${group.length} ops keep the kernels they run`
            + (adopted.size ? ` (${adopted.size} kept on this device)` : ""));
        });
        continue;
      }
      const welcome = await welcomed;
      if (welcome instanceof Error) {
        group.forEach((slot) => this.tuners.get(slot.key)?.unreachable());
        this.notes.push(`the gateway did not answer (${welcome.message}): ${group.length - adopted.size} ops run their first kernels`
          + (adopted.size ? `, ${adopted.size} the kernels kept on this device` : ""));
        failure ??= `the gateway did not answer (${welcome.message})`;
        continue;
      }
      await greet(welcome);
      const stop = check(group);
      if (stop) return stop;
    }
    return failure;
  }

  /** This run's share of tuning ({@link spendCredit}); returns the milliseconds it took. */
  async spend(inferMs: number): Promise<number> {
    const start = performance.now();
    this.credit = await spendCredit([...this.tuners.values()], this.credit, this.options.budget, inferMs);
    return performance.now() - start;
  }

  /** Whether every op tunes no more. */
  get settled(): boolean {
    return [...this.tuners.values()].every((t) => t.settled);
  }

  /** Bytes of the benches of the ops still tuning. */
  get benchBytes(): number {
    return [...this.tuners.values()].reduce((sum, t) => sum + t.benchBytes, 0);
  }

  /** The tuners' notes (sessions that ended early). */
  tunerNotes(): string[] {
    return [...this.tuners.values()].flatMap((t) => t.notes());
  }

  /** An op's row of the model's stats. */
  opStats(slot: S, source: OpStats["source"]): OpStats {
    const t = this.tuners.get(slot.key);
    return {
      key: slot.key, op: slot.op, instances: slot.instances, kernelId: slot.kernelId, source, fromZoo: t?.fromZoo ?? false,
      restored: t?.restored ?? false,
      ms: t ? t.incumbentMs() : NaN, history: t ? [...t.history] : [], refused: t?.refused.size ?? 0, settled: t?.settled ?? false,
    };
  }

  /** Waits for every report sent so far to be acknowledged (or refused), then closes the sessions. */
  async close(): Promise<void> {
    this.pageHide?.();
    await Promise.all([...this.tuners.values()].map((t) => t.report));
    for (const t of this.tuners.values()) t.close();
  }

  /** Stops every op's tuning at once, reporting nothing more (the model goes on elsewhere). */
  abandon(): void {
    this.pageHide?.();
    for (const t of this.tuners.values()) t.close();
    this.tuners.clear();
  }

  /** Keeps a kernel or shader in the store for the next load on this device kind; a store that fails is logged. */
  keepEntry(entry: Omit<StoredKernel, "format" | "savedAt">): void {
    this.store?.put({ format: 1, savedAt: Date.now(), ...entry })
      .catch((e: Error) => this.load.log?.(`  ${entry.op}: kernel not kept on this device (${e.message})`));
  }

  /** What keeps an op's settled kernel in the store. */
  private keeper(fingerprint: string, op: string): Keep {
    return (kernelId, artifact, ms) => {
      const code = artifact.code;
      if (code.case === "wasm") this.keepEntry({ fingerprint, op, kernelId, wasm: code.value, metadataJson: artifact.metadataJson, ms });
      else if (code.case === "wgsl") this.keepEntry({ fingerprint, op, kernelId, wgsl: code.value, metadataJson: artifact.metadataJson, ms });
    };
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
      if (open.length) this.load.log?.(`page hidden: ${open.length} ops report what they timed`);
      open.forEach((t) => t.settleNow());
    };
    page.addEventListener("pagehide", flush);
    this.pageHide = () => page.removeEventListener?.("pagehide", flush);
  }
}

/** A kept kernel as the artifact it came in, if it holds the backend's code. */
function keptArtifact(entry: StoredKernel, op: OpSpec, backend: Backend.WASM | Backend.WGSL): KernelArtifact | undefined {
  const code = backend === Backend.WASM
    ? entry.wasm && { case: "wasm" as const, value: entry.wasm }
    : entry.wgsl && { case: "wgsl" as const, value: entry.wgsl };
  if (!code) return undefined;
  return create(KernelArtifactSchema, { ref: { kernelId: entry.kernelId, op, backend }, code, metadataJson: entry.metadataJson });
}
