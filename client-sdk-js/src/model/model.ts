import type { ClockInfo } from "../clock.js";
import type { ClientOptions } from "../client.js";
import type { OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import type { OutputTensor, TensorLike } from "../graph/feeds.js";
import type { GraphInput, OnnxGraph } from "../graph/onnx.js";
import { ModelEmitter, type ModelEvent, type ModelListener } from "./events.js";
import type { KernelStore } from "./kernel-store.js";
import type { ReconnectOptions } from "./session.js";
import type { TuningOptions } from "./tuning.js";
import { decoderLayout, generateTokens, type DecoderLayout, type GenerateOptions, type GenerateResult } from "./generate.js";

// The model an app holds, the same on every backend: its options, what it reports, and the base
// of the backends' models (wasm/, webgpu/). `loadModel` (load.ts) picks the backend.

export type { OutputTensor, TensorLike };

/** Options of {@link loadModel}. */
export interface LoadOptions {
  /**
   * The gateway's WebSocket address (`ws://HOST:PORT/v1/session`). With it, every op starts from
   * the zoo's best kernel for this device kind (for a new kind, the lite space's first) and tunes while the app
   * infers; without it, the products run the SDK's generic kernels (shapes given at call time, untuned)
   * and the other ops its reference kernels: correct, not fast. Either way the first inference
   * never waits for the gateway: until an op's Welcome kernel is checked it runs the one kept on
   * this device, else its generic one.
   */
  gateway?: string;
  /** How tuning shares the app's time (see {@link TuningOptions}). */
  tuning?: TuningOptions;
  /** Overrides the probed device fingerprint (the zoo's device kind). */
  fingerprint?: string;
  /** Passed to the gateway client. */
  client?: ClientOptions;
  /** How a session whose connection drops reconnects and resumes (see {@link ReconnectOptions}). */
  reconnect?: ReconnectOptions;
  /** Receives progress lines. */
  log?: (line: string) => void;
  /**
   * Most rows (batch × sequence length) a MatMul whose rows change between runs computes as
   * uKernel calls (default 512). With a gateway, a MatMul seen again with other rows runs the
   * space service's plan of uKernels (MatMuls of a few fixed row counts, each tuned and kept in
   * the zoo once) over row slices, instead of a new kernel, tuning and zoo key per length. 0 turns
   * that off: a kernel per length.
   */
  dynamicRows?: number;
  /** Cancels loading (the model's download included) when aborted; `loadModel` rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * The files holding a model's external tensor data (`model.onnx_data`, as hubs ship models over
   * 2 GB and exporters write big ones), by the name the model gives them. A model loaded from a URL
   * fetches the files not given here from beside it.
   */
  externalData?: Readonly<Record<string, Uint8Array | ArrayBuffer>>;
  /**
   * Where each op's best kernel is kept for the next load, per device kind: by default IndexedDB
   * where the host has it (browsers), nothing elsewhere; `null` keeps nothing. A kept kernel is
   * checked, then in use, without waiting for the gateway (the runs before on the generic kernels).
   */
  store?: KernelStore | null;
  /**
   * Where the model runs and tunes. In a page (a browser's main thread) by default in a dedicated
   * Worker: kernel timing, checking and the reference run there, and the page only posts tensors
   * and receives outputs, so tuning never blocks it. `false` runs it all on the calling thread
   * (the default in Node and inside a worker); `{ url }` starts the worker from that script (the
   * package's `dist/worker.js`, or `dist/browser/worker.js` beside the single-file build) where a
   * bundler did not place it. A custom `store` or `client.WebSocket` cannot cross into a worker.
   */
  worker?: boolean | { url: string | URL };
  /**
   * Where kernels run: `wasm` (every browser), `webgpu` (WGSL kernels on the GPU; needs a gateway
   * and a WebGPU adapter), or `auto` (the default): WebGPU where a gateway is given and the adapter
   * is a hardware GPU, else Wasm. `stats().backend` says which one runs, `stats().notes` why.
   */
  backend?: "wasm" | "webgpu" | "auto";
  /**
   * WebGPU only: `batched` (the default) records every op of an inference in one command encoder
   * and submits once; `per-op` submits each op on its own, as naive executors do (for comparison).
   */
  gpuDispatch?: "batched" | "per-op";
  /**
   * Wasm only: the most threads kernels may run on, the calling thread included (default 4). Each
   * kernel is then split for that many threads (ABI v2) and run by a worker pool over one shared
   * memory. Threads need `SharedArrayBuffer` (in a browser, a cross-origin-isolated page) and a
   * thread that may wait (the model's worker, or Node); where they are missing, or the device has
   * one core, kernels run on one thread and `stats().notes` says why. `1`: one thread.
   */
  threads?: number;
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
  source: "reference" | "generic" | "wasm" | "wgsl";
  /** Whether the op started from the zoo's elected kernel for this device kind. */
  fromZoo: boolean;
  /** Whether the op started from the kernel kept on this device by an earlier load. */
  restored: boolean;
  /** Bench latency of the kernel in use, milliseconds (NaN before it was timed). */
  ms: number;
  /** Every incumbent: when it took over (ms since the first run) and its bench latency. */
  history: { atMs: number; kernelId: string; ms: number }[];
  /** Kernels refused (wrong, or not loadable), with the reason. */
  refused: number;
  /** No more candidates: the op's report was sent. */
  settled: boolean;
}

/**
 * One `run()`: when it started (ms since the first run), inference time, the part of it spent in
 * host steps (the ops run in JavaScript; NaN on WebGPU, not measured there), and tuning time after it.
 */
export interface RunRecord {
  atMs: number;
  inferMs: number;
  hostMs: number;
  tuneMs: number;
}

/** What a model running on WebGPU did on the GPU. */
export interface GpuStats {
  adapter: { vendor: string; architecture: string; software: boolean };
  dispatch: "batched" | "per-op";
  /** How kernels were timed: timestamp queries, or host clock from submit to completion. */
  timer: "timestamp-query" | "submit";
  /** The timestamps' measured quantum, ns (0 before any timing; 1 when not quantized). */
  timestampQuantumNs: number;
  /** Pipelines built so far, and how many of those a run waited for (started while it inferred: the critical path). */
  pipelinesBuilt: number;
  pipelinesBuiltInRuns: number;
  /** Median host time of an inference's encoding and submitting, ms (what batching saves). */
  hostMs: number;
  /** Devices lost and replaced. */
  deviceLosses: number;
  /** WebGPU errors no check caught (each logged); 0 when every dispatch was valid. */
  errors: number;
  submitsPerRun: number;
  dispatchesPerRun: number;
}

/** What a model has done so far. */
export interface ModelStats {
  /** Where its kernels run. */
  backend: "wasm" | "webgpu";
  /** Threads its Wasm kernels run on, the calling thread included (1 on WebGPU). */
  threads: number;
  /** WebGPU's side, when the model runs there. */
  gpu?: GpuStats;
  runs: number;
  /** Median latency of `run()` over the runs so far, milliseconds (NaN before the first). */
  medianRunMs: number;
  lastRunMs: number;
  /** Plans compiled, one per set of input shapes seen. */
  plans: number;
  /** Bytes of the model's Wasm memory (weights kernels read unpacked, packed copies, activations): its high-water mark, as a Wasm memory never shrinks. */
  memoryBytes: number;
  /**
   * Bytes of the weights kernels read, by where each is held once (Wasm backend): in JavaScript
   * (no kernel has read it yet, or the graph reads it too), unpacked in the Wasm memory, or as its
   * first kernel's packed copy alone (other packed copies are in `memoryBytes`).
   */
  weightBytes?: Record<"javascript" | "arena" | "packed", number>;
  /** Bytes of the benches of the ops still tuning (their copies of the op's tensors), freed as each op settles. */
  tuningMemoryBytes: number;
  /** Bytes the KV cache of the generate() call under way holds, 0 when none is (a call that ends, however, frees it). */
  kvCacheBytes: number;
  /** Every distinct jitzoo op, in first-use order. */
  ops: OpStats[];
  /** Steps run in JavaScript per run (data movement and the like), in the plan of the latest run. */
  hostSteps: number;
  /** MatMul and layer_norm steps of the latest run's plan run as uKernel calls over row slices (their rows changed between runs). */
  dynamicSteps: number;
  /**
   * MatMul and layer_norm steps of the latest run's plan whose rows changed, run on the generic
   * (or reference) kernels while their uKernel plan is still asked for: the first run of a new
   * length never waits for the gateway.
   */
  interimSteps: number;
  /** Why the model runs as it does (e.g. no gateway: the generic and reference kernels). */
  notes: string[];
  /** Every run so far. */
  timeline: RunRecord[];
  /** Whether a run has happened and every op it tunes is settled (true without a gateway: nothing is tuned). */
  settled: boolean;
  /** The clock kernels were timed with, and its measured resolution (coarse in a page without cross-origin isolation). */
  clock: ClockInfo;
}

/** A model ready to run. Create it with {@link loadModel}. */
export interface Model {
  /** The inputs a run must feed: name, element type, declared dimensions (strings for symbolic ones). */
  readonly inputs: readonly GraphInput[];
  /** Names of the inputs a run must feed. */
  readonly inputNames: string[];
  /** Names of the outputs a run returns. */
  readonly outputNames: string[];
  /**
   * Runs the model. Feeds are keyed by input name; int64 inputs take a BigInt64Array, an
   * Int32Array or numbers. Resolves to every graph output.
   */
  run(feeds: Readonly<Record<string, TensorLike>>): Promise<Record<string, OutputTensor>>;
  /**
   * Listens to what tuning does (typed: `kernel-timed`, `new-best`, `kernel-refused`, `op-settled`,
   * `report-acked`, `report-failed`, `connection`); returns the function that stops listening.
   */
  on<E extends ModelEvent>(event: E, listener: ModelListener<E>): () => void;
  /**
   * Generates token ids after `prompt` (a decoder's: `input_ids`, `attention_mask`, and a KV
   * cache's `past_key_values.N.*` fed from its `present.N.*` outputs, or the whole sequence each
   * step for a plain decoder), greedy or sampled; see {@link GenerateOptions}. Every step is a
   * run, tuned as runs are.
   */
  generate(prompt: readonly number[], options?: GenerateOptions): Promise<GenerateResult>;
  /** Latency, memory and the kernel of every op so far (in worker mode, as of the latest run). */
  stats(): ModelStats;
  /** Waits for every report sent so far to be acknowledged (or refused), then closes the sessions; the model still runs. */
  close(): Promise<void>;
}

/** What every model over an ONNX graph on this thread shares: its inputs and outputs, `run` and its events. */
export abstract class GraphModel implements Model {
  protected readonly events = new ModelEmitter();
  /** Bytes the KV cache of the generate() call under way holds (0 when none). */
  protected cacheBytes = 0;
  /** A generate() call's step after its first is under way: its new shapes must not wait for the gateway. */
  protected decoding = false;
  /** A generate() call is under way: its steps follow each other at once. */
  protected generating = false;
  private layout?: DecoderLayout;

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

  generate(prompt: readonly number[], options: GenerateOptions = {}): Promise<GenerateResult> {
    let layout: DecoderLayout;
    try {
      layout = this.layout ??= decoderLayout(this.graph);
    } catch (e) {
      return Promise.reject(e);
    }
    let steps = 0;
    this.generating = true;
    const step = async (feeds: Record<string, TensorLike>) => {
      if (steps === 0 && layout.cache.length) await this.planAhead(firstDecodeFeeds(layout, feeds));
      this.decoding = steps++ > 0;
      try {
        return await this.run(feeds);
      } finally {
        this.decoding = false;
      }
    };
    return generateTokens(layout, step, prompt, options, {
      bytes: (bytes) => { this.cacheBytes = bytes; },
      hold: (rows) => this.holdCache(layout, rows),
      release: () => this.releaseCache(),
    }).finally(() => {
      this.generating = false;
      this.generated();
    });
  }

  /**
   * A generation's prompt is about to run: the backend may prepare the first decode step (its
   * shapes are `feeds`', their values placeholders) so that its kernels are asked for while the
   * prompt's are.
   */
  protected async planAhead(_feeds: Readonly<Record<string, TensorLike>>): Promise<void> {}

  /**
   * A generation is about to start: the backend may hold its KV cache, `rows` positions of every
   * `past_key_values.N.*`, in its own memory (true when it does: its runs then take the pasts'
   * shapes alone and read their values there, and leave the presents there for the next step).
   */
  protected holdCache(_layout: DecoderLayout, _rows: number): boolean {
    return false;
  }

  /** The generation whose cache {@link holdCache} took has ended: the cache is freed. */
  protected releaseCache(): void {}

  /** A generate() call ended (however): what its decode steps put off may start. */
  protected generated(): void {}

  abstract stats(): ModelStats;
  abstract close(): Promise<void>;
}

/** Placeholder feeds shaped as the decode step after `prompt`'s feeds (a KV-cache layout's): one token, the prompt's rows as the past. */
function firstDecodeFeeds(layout: DecoderLayout, prompt: Readonly<Record<string, TensorLike>>): Record<string, TensorLike> {
  const total = prompt[layout.ids].dims.at(-1)! + prompt[layout.cache[0].past].dims[2];
  const feeds: Record<string, TensorLike> = { [layout.ids]: { data: new BigInt64Array(1), dims: [1, 1] } };
  if (layout.mask) feeds[layout.mask] = { data: new BigInt64Array(total + 1), dims: [1, total + 1] };
  for (const c of layout.cache) feeds[c.past] = { data: new Float32Array(c.heads * total * c.headDim), dims: [1, c.heads, total, c.headDim] };
  return feeds;
}
