// The pool's control block: one Int32Array over a SharedArrayBuffer that the caller and every
// helper thread read and write with Atomics. A dispatch writes the kernel, its arguments, the units
// and the number of participants, sets PENDING to the number of helpers, then bumps SEQ and
// notifies; each helper computes its share (if it has one) and decrements PENDING; the caller, which
// computes share 0, waits for PENDING to reach 0 before it writes the next command.

/** Bumped by the caller for every command; helpers wait for it to change. */
export const SEQ = 0;
/** The command of the last SEQ. */
export const CMD = 1;
export const KERNEL = 2;
export const UNITS = 3;
/** Participants of a RUN, the caller included (helpers 1..WORKERS-1 take part). */
export const WORKERS = 4;
/** Helpers yet to acknowledge the last RUN or PARK (every helper acknowledges both). */
export const PENDING = 5;
export const ARGC = 6;
/** The index of a helper whose kernel call threw (0: none); the caller reports it after the join. */
export const FAILED = 7;
/** Helpers that have taken the last load (instantiated its kernels, or failed to). */
export const ACKS = 8;
/** Offsets of the kernel's operands, ARGC of them. */
export const ARGS = 9;
export const MAX_ARGS = 16;
/** The failed call's message, one UTF-16 code unit per int, ERROR_CHARS at most (read by the caller at the join). */
export const ERROR = ARGS + MAX_ARGS;
export const ERROR_CHARS = 200;
export const CONTROL_INTS = ERROR + 1 + ERROR_CHARS;

/** Writes a message into the control block's error slot (its length first). */
export function writeError(ctl: Int32Array, message: string): void {
  const length = Math.min(message.length, ERROR_CHARS);
  for (let i = 0; i < length; i++) ctl[ERROR + 1 + i] = message.charCodeAt(i);
  ctl[ERROR] = length;
}

export function readError(ctl: Int32Array): string {
  let message = "";
  for (let i = 0; i < ctl[ERROR]; i++) message += String.fromCharCode(ctl[ERROR + 1 + i]);
  return message;
}

/** Compute units [first, end) of the current kernel. */
export const RUN = 1;
/** Return to the event loop to take the messages posted before this (new kernels); a helper comes back once it has. */
export const YIELD = 2;
/** Leave the loop for good. */
export const STOP = 3;
/** Wait for the next command without spinning first (the caller is done for a while). */
export const PARK = 4;

/** The first unit of participant `index` of `workers` (index = workers: units): shares are contiguous, as even as can be. */
export function shareStart(units: number, workers: number, index: number): number {
  return Math.floor((units * index) / workers);
}

/** Units [first, end) of participant `index` of `workers`, covering [0, units) together. */
export function shareOf(units: number, workers: number, index: number): [number, number] {
  return [shareStart(units, workers, index), shareStart(units, workers, index + 1)];
}

/** Calls `entry(args..., first, end)` without allocating: kernels have at most 5 operands today. */
export function callRange(entry: Function, args: Int32Array, argc: number, first: number, end: number): void {
  switch (argc) {
    case 2: entry(args[0], args[1], first, end); return;
    case 3: entry(args[0], args[1], args[2], first, end); return;
    case 4: entry(args[0], args[1], args[2], args[3], first, end); return;
    case 5: entry(args[0], args[1], args[2], args[3], args[4], first, end); return;
    case 6: entry(args[0], args[1], args[2], args[3], args[4], args[5], first, end); return;
    default: entry(...Array.from(args.subarray(0, argc)), first, end);
  }
}

/** Messages from the caller to a helper. */
export type ToHelper =
  | { type: "init"; index: number; control: SharedArrayBuffer; spin: number }
  /** Kernel ids to forget and a kernel to instantiate on `memory`, then an ACK and back to the loop (sent with a YIELD). */
  | { type: "load"; kernel?: { id: number; module: WebAssembly.Module; entry: string; memory: WebAssembly.Memory }; drop: number[] };

/** Messages from a helper to the caller. */
export type FromHelper =
  | { type: "ready"; index: number };
