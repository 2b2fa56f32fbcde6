// Worker threads that run split kernels (ABI v2) beside the caller over one shared WebAssembly.Memory.
// The caller computes the first share of every dispatch itself and joins the helpers with Atomics,
// so a dispatch costs two atomic writes, a notify and a wait: no message, no allocation.
import { KernelError } from "../errors.js";
import { platform } from "../platform.js";
import { startThread } from "../thread-start.js";
import {
  ACKS, ARGC, ARGS, CMD, CONTROL_INTS, FAILED, KERNEL, MAX_ARGS, PARK, PENDING, RUN, SEQ, STOP, UNITS, WORKERS, YIELD,
  callRange, readError, shareStart, type FromHelper, type ToHelper,
} from "./control.js";

/** One helper thread as the pool sees it, whatever the host (browser Worker, Node worker_threads). */
export interface ThreadHandle {
  post(message: ToHelper): void;
  listen(handler: (message: FromHelper) => void, onError: (error: Error) => void): void;
  terminate(): void;
}

/** Spins of a join before it blocks: helpers usually finish within microseconds of the caller. */
const JOIN_SPINS = 4096;

/** How many threads kernels may use here, and why not more. */
export interface ThreadProbe {
  /** Threads a pool may start with, the caller included (1: no pool). */
  readonly threads: number;
  /** Logical cores the host reports. */
  readonly cores: number;
  /** Why kernels run on one thread, when they do for a reason other than the app's cap. */
  readonly reason?: string;
}

/**
 * Threads kernels may use: shared memory needs `SharedArrayBuffer` and, in a browser, a
 * cross-origin-isolated page (COOP `same-origin` and COEP `require-corp` headers); the count is the
 * host's logical cores, capped by `cap` (the app's choice).
 */
export function probeThreads(cap = Infinity): ThreadProbe {
  const cores = Math.max(1, platform().logicalCores?.() ?? globalThis.navigator?.hardwareConcurrency ?? 1);
  const one = (reason: string): ThreadProbe => ({ threads: 1, cores, reason });
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated; // undefined outside a browser
  if (typeof SharedArrayBuffer === "undefined") {
    return one("no SharedArrayBuffer here" + (isolated === false
      ? " (the page is not cross-origin isolated: serve it with Cross-Origin-Opener-Policy: same-origin "
        + "and Cross-Origin-Embedder-Policy: require-corp)"
      : isolated ? " though the page is cross-origin isolated: this engine shares no memory with workers" : ""));
  }
  if (isolated === false) {
    return one("the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and "
      + "Cross-Origin-Embedder-Policy: require-corp)");
  }
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch {
    return one("this engine has no shared WebAssembly memory");
  }
  if (!callerMayBlock()) return one(MAIN_THREAD);
  const threads = Math.max(1, Math.min(cores, Math.floor(cap)));
  return { threads, cores };
}

const MAIN_THREAD = "kernel threads need the model off the page's main thread (in its worker, the default), where a thread may "
  + "wait for the others";

/** Where the caller may block in Atomics.wait: everywhere but a browser page's own thread. */
function callerMayBlock(): boolean {
  return typeof (globalThis as { document?: unknown }).document === "undefined";
}

/** A kernel every thread of a pool has instantiated. */
export interface PoolKernel {
  readonly id: number;
  /** The caller's own instance: `entry(offsets..., first, end)`. */
  readonly entry: Function;
  /** Units of one call (metadata `split.units`). */
  readonly units: number;
  /** The caller's instance (its other exports: `pack_b`). */
  readonly instance: WebAssembly.Instance;
}

export interface PoolOptions {
  /** Threads, the caller included (at least 2; a probe's `threads`). */
  threads: number;
  /**
   * Spins before a helper blocks in Atomics.wait (default 200000, a few hundred µs: a model's next
   * op comes sooner, and waking a blocked thread costs about 100 µs on a loaded machine).
   */
  spin?: number;
  /** How long a join may wait for a helper before the pool gives up on it (default 10 s). */
  joinTimeoutMs?: number;
  /**
   * How long a helper may take to start (its script loaded, in its loop) before another is started
   * in its place, once; then the pool gives up (default 10 s).
   */
  startTimeoutMs?: number;
  /** Starts a helper thread (default: the host's, a module Worker or Node's worker_threads). */
  thread?: () => ThreadHandle;
  /** Receives a line when a helper is started again. */
  log?: (line: string) => void;
}

/** Starts of one helper before the pool gives up: a worker that never answers is rare, and another starts. */
const START_ATTEMPTS = 2;

/**
 * A pool of helper threads for split kernels on shared memories. `load` instantiates a kernel on a
 * memory in every thread; `run` computes all its units, shared out among `workers` threads (the
 * caller takes share 0 and joins the rest). Both synchronous, so a pool lives where the caller may
 * block: a worker, or Node.
 */
export class WorkerPool {
  readonly threads: number;
  private readonly control: Int32Array;
  private readonly helpers: ThreadHandle[] = [];
  private readonly mayBlock = callerMayBlock();
  private readonly joinTimeoutMs: number;
  private nextKernel = 1;
  private dropped: number[] = [];
  private failure: string | undefined;
  private closed = false;

  private constructor(threads: number, joinTimeoutMs: number) {
    this.threads = threads;
    this.joinTimeoutMs = joinTimeoutMs;
    this.control = new Int32Array(new SharedArrayBuffer(CONTROL_INTS * 4));
  }

  /** Starts `threads - 1` helpers and waits until each is in its loop. */
  static async start(options: PoolOptions): Promise<WorkerPool> {
    const threads = Math.floor(options.threads);
    if (!(threads >= 2)) throw new KernelError(`a worker pool needs at least 2 threads, got ${options.threads}`);
    if (!callerMayBlock()) throw new KernelError(MAIN_THREAD);
    const pool = new WorkerPool(threads, options.joinTimeoutMs ?? 10_000);
    try {
      await Promise.all(Array.from({ length: threads - 1 }, (_, i) => pool.startHelper(i + 1, options)));
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  /**
   * Starts helper `index` and resolves once it is in its loop. One that does not answer in time
   * (its script never came, or its host lost it) is stopped and another started, once.
   */
  private async startHelper(index: number, options: PoolOptions): Promise<void> {
    const timeoutMs = options.startTimeoutMs ?? 10_000;
    for (let attempt = 1; ; attempt++) {
      const helper = (options.thread ?? platform().thread ?? startThread)();
      this.helpers.push(helper);
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await new Promise<void>((resolve, reject) => {
          timer = setTimeout(() => reject(new KernelError(`kernel thread ${index} did not start within ${timeoutMs} ms`)), timeoutMs);
          helper.listen(() => resolve(), (error) => {
            this.failure ??= `helper ${index} stopped: ${error.message}`;
            reject(new KernelError(`a kernel thread failed to start: ${error.message}`));
          });
          helper.post({ type: "init", index, control: this.control.buffer as SharedArrayBuffer, spin: options.spin ?? 200_000 });
        });
        return;
      } catch (e) {
        if (this.failure || attempt === START_ATTEMPTS) throw e;
        this.helpers.splice(this.helpers.indexOf(helper), 1);
        helper.terminate();
        options.log?.(`${(e as Error).message}; starting another`);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /**
   * Instantiates a split kernel on `memory` (shared) in every thread, and returns once each can
   * run it: the helpers take it between dispatches, while the caller blocks (a fraction of a
   * millisecond; a pool only exists where the caller may block).
   */
  load(module: WebAssembly.Module, entryName: string, units: number, memory: WebAssembly.Memory): PoolKernel {
    this.ensureOpen();
    if (!(memory.buffer instanceof SharedArrayBuffer)) throw new KernelError("a split kernel runs on a shared WebAssembly.Memory");
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const entry = instance.exports[entryName];
    if (typeof entry !== "function") throw new KernelError(`the kernel exports no function ${entryName}`);
    const ctl = this.control;
    const id = this.nextKernel++;
    const drop = this.dropped;
    this.dropped = [];
    this.join();
    Atomics.store(ctl, ACKS, 0);
    Atomics.store(ctl, FAILED, 0);
    for (const helper of this.helpers) helper.post({ type: "load", kernel: { id, module, entry: entryName, memory }, drop });
    this.awaitAcks();
    const failed = Atomics.exchange(ctl, FAILED, 0);
    if (failed !== 0) {
      this.dropped.push(id); // the helpers that did instantiate it let it go
      throw new KernelError(`kernel thread ${failed} could not instantiate the kernel: ${readError(ctl)}`);
    }
    return { id, entry, units, instance };
  }

  /** Forgets a kernel (the helpers let it go when they next take messages). */
  release(kernel: PoolKernel): void {
    this.dropped.push(kernel.id);
  }

  /**
   * Computes every unit of `kernel` on the operands at `offsets`, on `workers` threads (default:
   * all; never more than its units). Returns when all are done; throws when a thread failed.
   */
  run(kernel: PoolKernel, offsets: Int32Array, argc: number, workers = this.threads): void {
    const units = kernel.units;
    const n = Math.max(1, Math.min(workers, this.threads, units));
    if (n === 1) {
      callRange(kernel.entry, offsets, argc, 0, units);
      return;
    }
    this.ensureOpen();
    if (this.failure) throw new KernelError(`the worker pool lost a thread: ${this.failure}`);
    if (argc > MAX_ARGS) throw new KernelError(`a kernel with ${argc} operands is more than a pool dispatches`);
    const ctl = this.control;
    this.join(); // every helper has read the last command: its fields may be written again
    for (let i = 0; i < argc; i++) ctl[ARGS + i] = offsets[i];
    ctl[ARGC] = argc;
    ctl[KERNEL] = kernel.id;
    ctl[UNITS] = units;
    ctl[WORKERS] = n;
    this.command(RUN);
    const end = shareStart(units, n, 1);
    let thrown: unknown;
    try {
      callRange(kernel.entry, offsets, argc, 0, end);
    } catch (e) {
      thrown = e;
    }
    this.join();
    // read (and clear) a helper's failure before anything else, so that it never outlives its run
    const failed = Atomics.exchange(ctl, FAILED, 0);
    if (thrown !== undefined) throw thrown;
    if (failed !== 0) throw new KernelError(`a kernel thread failed: helper ${failed}: ${readError(ctl)}`);
  }

  /** Sends YIELD after a load message and waits until every helper has taken it. */
  private awaitAcks(): void {
    const ctl = this.control;
    this.command(YIELD);
    const deadline = performance.now() + this.joinTimeoutMs;
    let acks: number;
    while ((acks = Atomics.load(ctl, ACKS)) < this.helpers.length) {
      Atomics.wait(ctl, ACKS, acks, 5);
      if (this.failure || performance.now() > deadline) this.giveUp(`the kernel threads did not take a kernel`);
    }
  }

  /** Waits until every helper has acknowledged the last RUN or PARK. */
  private join(): void {
    const ctl = this.control;
    let left = Atomics.load(ctl, PENDING);
    if (left === 0) return;
    for (let spins = 0; spins < JOIN_SPINS && left !== 0; spins++) left = Atomics.load(ctl, PENDING);
    const deadline = performance.now() + this.joinTimeoutMs;
    while ((left = Atomics.load(ctl, PENDING)) !== 0) {
      if (this.mayBlock) Atomics.wait(ctl, PENDING, left, 1);
      if (this.failure || performance.now() > deadline) this.giveUp(`${left} kernel thread(s) did not finish within ${this.joinTimeoutMs} ms`);
    }
  }

  /** Closes the pool (its threads stopped) and throws why. */
  private giveUp(why: string): never {
    const failure = this.failure;
    this.close();
    throw new KernelError(`${why}${failure ? ` (${failure})` : ""}; the pool is closed`);
  }

  /**
   * Tells the helpers that no dispatch follows soon (an inference is over): they block at once
   * instead of spinning, leaving their cores to the page and to other work.
   */
  park(): void {
    if (this.closed || !this.helpers.length) return;
    this.join();
    if (this.dropped.length) {
      // the kernels released since the last load: the helpers let them (and their memories) go now
      const drop = this.dropped;
      this.dropped = [];
      Atomics.store(this.control, ACKS, 0);
      for (const helper of this.helpers) helper.post({ type: "load", drop });
      this.awaitAcks();
    }
    this.command(PARK); // acknowledged like a run; the next command waits for that, not this call
  }

  /**
   * Issues a command. Every helper acknowledges RUN and PARK by decrementing PENDING (YIELD by its
   * ACK once it took the kernel), and the caller writes no field of a later command before
   * PENDING is back to 0: so a helper never reads a command half written, nor one twice.
   */
  private command(command: number): void {
    if (command === RUN || command === PARK) Atomics.store(this.control, PENDING, this.helpers.length);
    Atomics.store(this.control, CMD, command);
    Atomics.add(this.control, SEQ, 1);
    Atomics.notify(this.control, SEQ);
  }

  private ensureOpen(): void {
    if (this.closed) throw new KernelError("the worker pool is closed");
  }

  /** Stops every helper. */
  close(): void {
    if (this.helpers.length && !this.closed) this.command(STOP); // helpers read no field of it: no join first
    this.closed = true;
    for (const helper of this.helpers) helper.terminate();
  }
}
