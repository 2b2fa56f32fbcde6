import { JitzooError, WorkerError } from "../errors.js";
import { startModelWorker } from "../worker-start.js";
import { startThreadWorker } from "../thread-start.js";
import { ModelEmitter, type ModelEvent, type ModelListener } from "./events.js";
import type { LoadOptions, Model, ModelStats, OutputTensor, TensorLike } from "./model.js";
import type { GenerateOptions, GenerateResult } from "./generate.js";
import { ModelError, type GraphInput } from "../graph/onnx.js";
import { LOAD, postedError, type FromWorker, type PostedError, type PostedTensor, type ToWorker, type WorkerLoadOptions } from "./worker-protocol.js";

/**
 * A model that runs and tunes in a dedicated Worker (the SDK's worker.ts): the page posts each
 * run's feeds and receives its outputs, the events and the stats as of that run; the kernels,
 * their timing and checks, and the gateway session live in the worker. `pagehide` is passed on,
 * so the worker reports what its ops timed before the page goes. The worker lives as long as the
 * page (a closed model still runs there); a failed one fails every call with a WorkerError.
 */
export class WorkerModel implements Model {
  private readonly events = new ModelEmitter();
  private readonly pending = new Map<number, { resolve: (m: FromWorker) => void; reject: (e: Error) => void }>();
  /** The token callbacks of the generations under way, by id. */
  private readonly streams = new Map<number, (token: number, index: number) => void>();
  private nextId = LOAD + 1;
  private latest!: ModelStats;
  private graph!: { inputs: GraphInput[]; outputNames: string[] };
  private dead?: Error;
  /** The kernel threads this page started for the worker's pool, by the worker's id for each. */
  private readonly threads = new Map<number, Worker>();
  private readonly onPageHide = () => this.post({ type: "pagehide" });

  private constructor(private readonly worker: Worker, private readonly log?: (line: string) => void) {
    worker.onmessage = (ev: MessageEvent<FromWorker>) => this.receive(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault();
      this.die(new WorkerError(`the model's worker failed: ${ev.message || "it could not start (is worker.js served beside the SDK?)"}`));
    };
    worker.onmessageerror = () => this.die(new WorkerError("a message from the model's worker could not be read"));
    globalThis.addEventListener?.("pagehide", this.onPageHide);
  }

  /** Starts a worker, loads the model there, and resolves once it is ready to run. */
  static async start(source: Uint8Array | ArrayBuffer | string | URL, options: LoadOptions, url?: string | URL): Promise<WorkerModel> {
    if (typeof Worker === "undefined") throw new WorkerError("no Worker here: pass worker: false");
    if (options.store) throw new ModelError("a custom store cannot cross into the model's worker: pass worker: false to use it");
    if (options.client?.WebSocket) throw new ModelError("a custom WebSocket cannot cross into the model's worker: pass worker: false to use it");
    const model = new WorkerModel(startModelWorker(url), options.log);
    const { store, log, signal, worker, client, ...data } = options;
    const posted: WorkerLoadOptions = { ...data, client: { connectTimeoutMs: client?.connectTimeoutMs, apiKey: client?.apiKey }, keep: store !== null, log: log !== undefined };
    const abort = () => model.die(options.signal!.reason as Error);
    options.signal?.addEventListener("abort", abort, { once: true });
    try {
      const loaded = await model.request(LOAD, { type: "load", source: where(source), options: posted });
      if (loaded.type !== "loaded") throw new WorkerError(`the worker answered ${loaded.type} to load`);
      model.graph = { inputs: loaded.inputs, outputNames: loaded.outputNames };
      model.latest = loaded.stats;
      return model;
    } catch (e) {
      model.terminate();
      throw e;
    } finally {
      options.signal?.removeEventListener("abort", abort);
    }
  }

  get inputs(): readonly GraphInput[] {
    return this.graph.inputs;
  }

  get inputNames(): string[] {
    return this.graph.inputs.map((i) => i.name);
  }

  get outputNames(): string[] {
    return [...this.graph.outputNames];
  }

  async run(feeds: Readonly<Record<string, TensorLike>>): Promise<Record<string, OutputTensor>> {
    const posted: Record<string, PostedTensor> = {};
    for (const [name, t] of Object.entries(feeds)) posted[name] = { data: t.data, dims: [...t.dims] };
    const id = this.nextId++;
    const answer = await this.request(id, { type: "run", id, feeds: posted });
    if (answer.type !== "result") throw new WorkerError(`the worker answered ${answer.type} to run`);
    this.latest = answer.stats;
    return answer.outputs;
  }

  /** Generates in the worker (every step there), each token posted to the page as it is picked; aborting posts the abort. */
  async generate(prompt: readonly number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    const { onToken, signal, ...posted } = options;
    signal?.throwIfAborted();
    const id = this.nextId++;
    if (onToken) this.streams.set(id, onToken);
    const abort = () => this.post({ type: "abort", id, reason: postedError(signal!.reason) });
    signal?.addEventListener("abort", abort, { once: true });
    try {
      const answer = await this.request(id, { type: "generate", id, prompt: [...prompt], options: posted });
      if (answer.type !== "generated") throw new WorkerError(`the worker answered ${answer.type} to generate`);
      this.latest = answer.stats;
      return answer.result;
    } finally {
      this.streams.delete(id);
      signal?.removeEventListener("abort", abort);
    }
  }

  on<E extends ModelEvent>(event: E, listener: ModelListener<E>): () => void {
    return this.events.on(event, listener);
  }

  stats(): ModelStats {
    return this.latest;
  }

  /** Closes the model's sessions in the worker (reports acknowledged first); the model still runs, in the worker, on the kernels it has. */
  async close(): Promise<void> {
    if (this.dead) return;
    const id = this.nextId++;
    const answer = await this.request(id, { type: "close", id });
    if (answer.type === "closed") this.latest = answer.stats;
  }

  private request(id: number, message: ToWorker): Promise<FromWorker> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post(message);
    });
  }

  private post(message: ToWorker): void {
    if (!this.dead) this.worker.postMessage(message);
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case "event": return this.events.emit(message.event, message.payload as never);
      case "log": return this.log?.(message.line);
      case "token": return this.streams.get(message.id)?.(message.token, message.index);
      case "stats": {
        this.latest = message.stats;
        return;
      }
      case "failed": return this.settle(message.id, undefined, revive(message.error));
      case "loaded": return this.settle(LOAD, message);
      case "thread": return this.startThread(message.id, message.port);
      case "thread-stop": {
        this.threads.get(message.id)?.terminate();
        this.threads.delete(message.id);
        return;
      }
      default: return this.settle(message.id, message);
    }
  }

  /** Starts a kernel thread for the worker's pool and hands it the worker's port to it. */
  private startThread(id: number, port: MessagePort): void {
    try {
      const thread = startThreadWorker(port);
      thread.onerror = (ev) => {
        ev.preventDefault();
        this.post({ type: "thread-failed", id, message: ev.message || "the kernel thread's script failed to load" });
      };
      this.threads.set(id, thread);
    } catch (e) {
      this.post({ type: "thread-failed", id, message: (e as Error).message });
    }
  }

  private settle(id: number, answer?: FromWorker, error?: Error): void {
    const waiting = this.pending.get(id);
    this.pending.delete(id);
    if (error) waiting?.reject(error);
    else waiting?.resolve(answer!);
  }

  /** The worker is gone (failed, or the load was aborted): every call waiting and every later one rejects with `why`. */
  private die(why: Error): void {
    if (this.dead) return;
    this.dead = why;
    for (const { reject } of this.pending.values()) reject(why);
    this.pending.clear();
    this.terminate();
  }

  private terminate(): void {
    globalThis.removeEventListener?.("pagehide", this.onPageHide);
    this.worker.terminate();
    for (const thread of this.threads.values()) thread.terminate();
    this.threads.clear();
  }
}

/** A model's bytes (copied: the app keeps its own), or its address resolved against the page (the worker's base is its script). */
function where(source: Uint8Array | ArrayBuffer | string | URL): Uint8Array | string {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  const base = (globalThis as { location?: { href: string } }).location?.href;
  return new URL(String(source), base).href;
}

/** An error from the worker as the SDK's class of its code. */
function revive(error: PostedError): Error {
  if (error.name === "ModelError") return new ModelError(error.message);
  if (error.name === "AbortError") return new DOMException(error.message, "AbortError");
  const revived = error.code ? new JitzooError(error.code, error.message) : new Error(error.message);
  revived.name = error.name;
  return revived;
}
