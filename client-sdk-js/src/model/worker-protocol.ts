import type { JitzooErrorCode } from "../errors.js";
import type { ModelEvent, ModelEvents } from "./events.js";
import type { LoadOptions, ModelStats, OutputTensor } from "./model.js";
import type { GenerateOptions, GenerateResult } from "./generate.js";
import type { GraphInput } from "../graph/onnx.js";

// The messages between a page's WorkerModel and the SDK's worker entry (worker.ts).

/** The load options that cross into the worker: data only (no functions, no custom store or socket). */
export type WorkerLoadOptions = Omit<LoadOptions, "log" | "signal" | "store" | "worker" | "client"> & {
  client?: { connectTimeoutMs?: number; apiKey?: string };
  /** false: keep nothing (the page's `store: null`). */
  keep: boolean;
  /** Whether the page listens to progress lines. */
  log: boolean;
};

/** A feed as posted: its data copied (an onnxruntime-web Tensor's getters do not survive cloning). */
export interface PostedTensor {
  data: ArrayLike<unknown>;
  dims: number[];
}

export type ToWorker =
  | { type: "load"; source: Uint8Array | string; options: WorkerLoadOptions }
  | { type: "run"; id: number; feeds: Record<string, PostedTensor> }
  | { type: "close"; id: number }
  | { type: "generate"; id: number; prompt: number[]; options: PostedGenerateOptions }
  /** Aborts generation `id` between its steps. */
  | { type: "abort"; id: number; reason: PostedError }
  | { type: "pagehide" }
  /** The kernel thread the page started for `thread` failed (its script did not load). */
  | { type: "thread-failed"; id: number; message: string };

/** Generation options as they cross: data only (the callback and the signal stay on the page). */
export type PostedGenerateOptions = Omit<GenerateOptions, "onToken" | "signal">;

/** An error as it crosses: revived on the page as the SDK's error class of its code. */
export interface PostedError {
  name: string;
  message: string;
  code?: JitzooErrorCode;
}

export type FromWorker =
  | { type: "loaded"; inputs: GraphInput[]; outputNames: string[]; stats: ModelStats }
  | { type: "result"; id: number; outputs: Record<string, OutputTensor>; stats: ModelStats }
  | { type: "closed"; id: number; stats: ModelStats }
  /** A new token of generation `id`, as it is picked. */
  | { type: "token"; id: number; token: number; index: number }
  | { type: "generated"; id: number; result: GenerateResult; stats: ModelStats }
  /** After a run's tuning: the stats as of it. */
  | { type: "stats"; stats: ModelStats }
  | { type: "failed"; id: number; error: PostedError }
  | { type: "event"; event: ModelEvent; payload: ModelEvents[ModelEvent] }
  | { type: "log"; line: string }
  /**
   * Asks the page to start a kernel thread (thread.ts) and hand it `port`, the worker's line to it:
   * a worker starting a Worker of its own waits for the page's main thread, and in Firefox that
   * wait now and then never ends.
   */
  | { type: "thread"; id: number; port: MessagePort }
  /** The kernel thread `id` is no longer needed: the page stops it. */
  | { type: "thread-stop"; id: number };

/** The id of the load request (runs and closes count from 1). */
export const LOAD = 0;

/** Every model event, forwarded from the worker as it happens (the compiler checks none is missing). */
export const MODEL_EVENTS = Object.keys({
  connection: 0, "kernel-timed": 0, "new-best": 0, "kernel-refused": 0, "op-settled": 0, "report-acked": 0, "report-failed": 0,
} satisfies Record<ModelEvent, 0>) as ModelEvent[];

export function postedError(e: unknown): PostedError {
  const error = e instanceof Error ? e : new Error(String(e));
  return { name: error.name, message: error.message, code: (error as { code?: JitzooErrorCode }).code };
}
