import { OpKind, type KernelArtifact, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { flopsOf, inputNames, opName, operandShapes, operandTypes, type OperandValues, operandView, referenceOp, seededWords, wordsOf } from "../ops.js";
import type { PoolKernel, WorkerPool } from "../threads/pool.js";
import { instantiateKernel, readMetadata, type KernelExports, type KernelMetadata } from "./executor.js";
import { Arena, SHARED_MAX_PAGES, type Panels } from "./arena.js";

/** Where an operand lies in the arena. */
export interface Operand {
  readonly offset: number;
  readonly floats: number;
}

/**
 * A constant operand (a weight): its values, and its place in an arena while a kernel that reads
 * it there is bound. A packing kernel reads a packed copy instead, shared by the kernels that read
 * the same layout ({@link Arena.holdPacked}); a model's weight may keep that copy as its only one
 * (`ModelWeight`).
 */
export interface Weight {
  /** Its values (read them when needed: a view of an arena moves when the memory grows). */
  readonly values: Float32Array;
  /** Its place in the arena, written there on the first hold. */
  hold(): Operand;
  /** Ends a hold; the last one frees the arena block (a model weight's stays). */
  unhold(): void;
  /** A packed copy of it was made at `offset`, laid out as `panels`. */
  packedInto?(offset: number, panels: Panels): void;
  /** The packed copy at `offset` is about to be freed. */
  packedCopyGoes?(offset: number): void;
}

/** An op's operands by ABI name (A, B, C, Bias, ...): activations in the arena, and weights. */
export interface Bindings {
  readonly operands: Readonly<Record<string, Operand>>;
  readonly weights: Readonly<Record<string, Weight>>;
}

/** A kernel prepared for one set of operands. */
export interface Bound {
  readonly call: () => void;
  /** Frees what binding took (packed copies, holds on weights); `call` must not run after. */
  release(): void;
}

/** One implementation of one op over one arena, callable over any operands in it. */
export interface OpKernel {
  /** The server-issued kernel id, or `reference`. */
  readonly id: string;
  readonly source: "reference" | "generic" | "wasm";
  /** Prepares calls over these operands (a packing kernel packs a constant B here, once). */
  bind(bindings: Bindings): Bound;
}

/** A compiled server kernel, to instantiate over any arena (the model's, a tuning bench's). */
export interface KernelCode {
  readonly id: string;
  instantiate(arena: Arena): OpKernel;
  /**
   * Runs the kernel a few times on seeded inputs in a scratch memory and returns them with its
   * C. Engines run a Wasm function's first calls on baseline code and swap in optimized code once
   * it is hot (for every instance of the module): tried out, a kernel serves its first real call
   * at full speed.
   */
  tryOut(): { inputs: Record<string, OperandValues>; output: Float32Array };
}

/** The SDK's float64 reference as a kernel: always right, slow; what runs when no kernel has been served. */
export function referenceKernel(op: OpSpec, arena: Arena): OpKernel {
  const names = inputNames(op);
  return {
    id: "reference",
    source: "reference",
    bind({ operands, weights }) {
      return {
        call: () => {
          const inputs = Object.fromEntries(names.map((n) => [n, operandView(op, n, weights[n]?.values ?? arena.f32(operands[n].offset, operands[n].floats))]));
          arena.f32(operands.C.offset, operands.C.floats).set(referenceOp(op, inputs));
        },
        release: () => undefined,
      };
    },
  };
}

/**
 * What a packing kernel's copy of B looks like: panels x0 columns wide (docs/kernel-abi.md), of B
 * read transposed or not, one per batch or shared. Kernels whose copies look alike share one; a
 * kernel whose metadata does not say (no schedule) keeps its own.
 */
function packLayout({ op, schedule, transposeB, broadcastB, pack }: KernelMetadata, id: string): string {
  if (op === "matmul_q4") return `q4;floats=${pack!.floats}`; // packed in place, whatever the tile
  return Number.isInteger(schedule?.x0) ? `x0=${schedule!.x0};transposeB=${!!transposeB};broadcastB=${!!broadcastB};floats=${pack!.floats}` : `kernel=${id}`;
}

/** A packing matmul's panels of a two-dimensional B (one for every batch), from its metadata; none otherwise. */
function panelsOf({ schedule, transposeB, broadcastB }: KernelMetadata, op: OpSpec): Panels | undefined {
  const x0 = schedule?.x0;
  if (!Number.isInteger(x0) || x0! < 1) return undefined;
  if (op.kind === OpKind.MATMUL) return { x0: x0!, k: op.shape[1], n: op.shape[2], transposed: !!transposeB };
  if (op.kind === OpKind.MATMUL_INT8) return { x0: x0!, k: op.shape[1], n: op.shape[2], transposed: false, int8: true };
  if (op.kind === OpKind.MATMUL_Q4) return { x0: x0!, k: op.shape[1], n: op.shape[2], transposed: false, q4: true };
  return op.kind === OpKind.BATCH_MATMUL && broadcastB ? { x0: x0!, k: op.shape[2], n: op.shape[3], transposed: !!transposeB } : undefined;
}

/** Calls that make a kernel hot enough for V8 to compile it with its optimizing tier. */
const WARM_UP_CALLS = 2;

/** A Wasm page: where a scratch memory puts the raw B before packing it. */
const SCRATCH_OFFSET = 65536;

/** A Wasm memory a kernel of this metadata links to: shared for a split kernel (ABI v2). */
const memoryFor = (meta: KernelMetadata, pages: number) => (meta.split
  ? new WebAssembly.Memory({ initial: pages, maximum: Math.max(pages, SHARED_MAX_PAGES), shared: true })
  : new WebAssembly.Memory({ initial: pages }));

/** Throws unless the kernel runs where the model runs kernels: split ones on threads (a pool), unsplit ones on one. */
function refuseMismatch(meta: KernelMetadata, pool: WorkerPool | undefined): void {
  if (!meta.split !== !pool) {
    throw new Error(meta.split ? "a split kernel (ABI v2) offered to a model that runs its kernels on one thread"
      : "an unsplit kernel (ABI v1) offered to a model that runs its kernels on threads");
  }
}

/**
 * A kernel instantiated on an arena: `caller(offsets)` makes the call over those operands, while
 * the kernel is held (`hold()` for each bind, `release()` when the bind is released).
 */
interface Instantiated {
  caller(offsets: number[]): () => void;
  pack?: KernelExports["pack"];
  hold(): void;
  release(): void;
}

/**
 * Flops below which a split kernel runs on the calling thread alone: waking the helpers and joining
 * them costs microseconds, what one thread computes of this in that time (a decode step's attention
 * over one head's row, its softmax, a one-row layer_norm).
 */
const SMALL_SPLIT_FLOPS = 2 ** 18;

/**
 * A kernel's exports on an arena's memory. A split kernel is loaded into the arena's worker pool
 * while a bind holds it (its threads let it go when the last bind is released), and its calls run
 * every unit there (their offsets set once, so a call allocates nothing), on the caller alone below
 * SMALL_SPLIT_FLOPS.
 */
function kernelOn(module: WebAssembly.Module, meta: KernelMetadata, arena: Arena, flops: number): Instantiated {
  refuseMismatch(meta, arena.pool);
  if (!meta.split) {
    const { call, pack } = instantiateKernel(module, meta, arena.memory);
    return { caller: (offsets) => () => call(...offsets), pack, hold: () => undefined, release: () => undefined };
  }
  const pool = arena.pool!;
  const units = meta.split.units;
  let kernel: PoolKernel | undefined;
  let holds = 0;
  const loaded = (): PoolKernel => {
    if (!kernel) throw new Error("a split kernel called after its last bind was released");
    return kernel;
  };
  return {
    caller: (offsets) => {
      const argv = Int32Array.from(offsets);
      const workers = flops < SMALL_SPLIT_FLOPS ? 1 : undefined;
      return () => pool.run(loaded(), argv, argv.length, workers);
    },
    pack: meta.pack ? (from, to) => (loaded().instance.exports[meta.pack!.entry] as (a: number, b: number) => void)(from, to) : undefined,
    hold: () => {
      if (holds++ === 0) kernel = pool.load(module, meta.entry, units, arena.memory);
    },
    release: () => {
      if (--holds > 0 || !kernel) return;
      pool.release(kernel);
      kernel = undefined;
    },
  };
}

/**
 * Compiles a server-generated Wasm kernel (ABI v1, or v2 split for `pool`'s threads). Throws when
 * the artifact is not Wasm, does not compile, or was made for another op.
 */
export async function compileKernel(artifact: KernelArtifact, op: OpSpec, pool?: WorkerPool): Promise<KernelCode> {
  if (artifact.code.case !== "wasm") throw new Error("not a Wasm artifact");
  const module = await WebAssembly.compile(artifact.code.value as Uint8Array<ArrayBuffer>);
  const meta = readMetadata(artifact, module);
  if (meta.op !== opName(op.kind) || meta.shape.join(",") !== op.shape.join(",")) {
    throw new Error(`kernel for ${meta.op} [${meta.shape}] offered for ${opName(op.kind)} [${op.shape}]`);
  }
  refuseMismatch(meta, pool);
  const id = artifact.ref?.kernelId ?? "";
  const exports = (memory: WebAssembly.Memory) => instantiateKernel(module, meta, memory);
  exports(memoryFor(meta, 1)); // refuse a malformed kernel now, not at its first bind

  /**
   * A constant B packed in a scratch memory of its own, so the arena never holds B twice. The
   * binds of one swap (every use of an op) share the scratch; it is dropped once they are done.
   */
  let scratch: { memory: WebAssembly.Memory; pack: (from: number, to: number) => void } | undefined;
  const packed = (values: Float32Array): Float32Array => {
    const floats = meta.pack!.floats;
    const pages = Math.ceil((SCRATCH_OFFSET + 4 * (values.length + floats)) / 65536);
    if (!scratch) {
      const memory = memoryFor(meta, pages);
      scratch = { memory, pack: exports(memory).pack! };
      queueMicrotask(() => { scratch = undefined; });
    }
    const missing = pages - scratch.memory.buffer.byteLength / 65536;
    if (missing > 0) scratch.memory.grow(missing);
    new Float32Array(scratch.memory.buffer, SCRATCH_OFFSET, values.length).set(values);
    const to = SCRATCH_OFFSET + 4 * values.length;
    scratch.pack(SCRATCH_OFFSET, to);
    return new Float32Array(scratch.memory.buffer, to, floats);
  };

  const code: KernelCode = {
    id,
    tryOut() {
      const scratch = new Arena(pool);
      const types = operandTypes(op);
      const words = seededWords(op, operandShapes(op));
      const operands = Object.fromEntries(operandShapes(op).map(([name, shape]) => {
        const floats = wordsOf(types[name] ?? "float32", shape.reduce((a, b) => a * b, 1));
        return [name, { offset: scratch.alloc(floats * 4), floats }];
      }));
      for (const [name, values] of Object.entries(words)) scratch.f32(operands[name].offset, values.length).set(values);
      const bound = code.instantiate(scratch).bind({ operands, weights: {} });
      try {
        for (let i = 0; i < WARM_UP_CALLS; i++) bound.call();
        const inputs = Object.fromEntries(Object.entries(words).map(([name, values]) => [name, operandView(op, name, values)]));
        return { inputs, output: scratch.f32(operands.C.offset, operands.C.floats).slice() };
      } finally {
        bound.release(); // a split kernel's threads let it go
      }
    },
    instantiate(arena) {
      const kernel = kernelOn(module, meta, arena, flopsOf(op));
      const { caller, pack } = kernel;
      // a split kernel is loaded in the pool's threads while a bind of it is live
      const bound = (b: Bound): Bound => {
        let released = false;
        return {
          call: b.call,
          release: () => {
            if (released) return;
            released = true;
            b.release();
            kernel.release();
          },
        };
      };
      // binds that read a constant B in the same layout (a MatMul's row slices, other kernels with the same panels) share one packed copy
      const layout = meta.pack ? packLayout(meta, id) : "";
      const panels = meta.pack ? panelsOf(meta, op) : undefined;
      const holdPacked = (weight: Weight, floats: number): number => arena.holdPacked(weight, layout, floats, () => packed(weight.values), panels);
      const unholdPacked = (weight: Weight): void => arena.unholdPacked(weight, layout);
      return {
        id,
        source: "wasm",
        bind({ operands, weights }) {
          kernel.hold();
          const held: Weight[] = [];
          const taken: Operand[] = [];
          const offsetOf = (name: string): number => {
            if (operands[name]) return operands[name].offset;
            const weight = weights[name];
            if (!weight) throw new Error(`kernel reads operand ${name}, which the op does not have`);
            held.push(weight);
            return weight.hold().offset;
          };
          const release = () => {
            held.splice(0).forEach((w) => w.unhold());
            taken.splice(0).forEach((t) => arena.release(t.offset, t.floats * 4));
          };
          if (!meta.pack) {
            return bound({ call: caller(meta.operands.map(offsetOf)), release });
          }
          const constantB = weights.B;
          if (constantB) {
            const at = holdPacked(constantB, meta.pack.floats);
            const call = caller(meta.operands.map((name) => (name === "B" ? at : offsetOf(name))));
            let held = true;
            return bound({ call, release: () => { release(); if (held) unholdPacked(constantB); held = false; } });
          }
          const to = { offset: arena.alloc(meta.pack.floats * 4), floats: meta.pack.floats };
          taken.push(to);
          const call = caller(meta.operands.map((name) => (name === "B" ? to.offset : offsetOf(name))));
          const from = offsetOf("B");
          return bound({ call: () => { pack!(from, to.offset); call(); }, release });
        },
      };
    },
  };
  return code;
}
