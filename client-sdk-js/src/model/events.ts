/**
 * What a model tells its app while it tunes, as typed events (`model.on("new-best", ...)`). Op
 * names are op keys (`matmul|128x768x768|bias`), times milliseconds on the tuning bench.
 */
/** Where a model's gateway session stands: opened, dropped and reconnecting, taken up again, or given up. */
export type ConnectionState = "open" | "reconnecting" | "resumed" | "failed";

export interface ModelEvents {
  /**
   * A gateway session for some of the model's ops opened, or could not (`failed`: its ops keep
   * their kernels and no longer tune); its connection dropped (`reconnecting`, with why) and the
   * session went on on a new one (`resumed`).
   */
  connection: { state: ConnectionState; ops: number; detail: string };
  /** A candidate was timed side by side with the incumbent. */
  "kernel-timed": { op: string; kernelId: string; ms: number; incumbentId: string; incumbentMs: number; faster: boolean };
  /** A candidate replaced the incumbent: every use of the op runs it from the next call on. */
  "new-best": { op: string; kernelId: string; ms: number; replaced: string; replacedMs: number };
  /** A kernel was refused: it failed to compile, or its results did not match the reference. */
  "kernel-refused": { op: string; kernelId: string; why: string };
  /** An op stopped tuning: it keeps its kernel. */
  "op-settled": { op: string; kernelId: string };
  /** The gateway acknowledged an op's report of its `ranked` fastest kernels: the zoo has it. */
  "report-acked": { op: string; kernelId: string; ranked: number };
  /** An op's report could not be stored. */
  "report-failed": { op: string; why: string };
}

export type ModelEvent = keyof ModelEvents;
export type ModelListener<E extends ModelEvent> = (payload: ModelEvents[E]) => void;
export type Emit = <E extends ModelEvent>(event: E, payload: ModelEvents[E]) => void;

/** Listeners by event; a listener that throws is reported on the console and never reaches tuning. */
export class ModelEmitter {
  private readonly listeners = new Map<ModelEvent, Set<ModelListener<never>>>();

  on<E extends ModelEvent>(event: E, listener: ModelListener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as ModelListener<never>);
    return () => set!.delete(listener as ModelListener<never>);
  }

  readonly emit: Emit = (event, payload) => {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as ModelListener<typeof event>)(payload);
      } catch (e) {
        console.error(`a ${event} listener threw:`, e);
      }
    }
  };
}
