import type { WorkerPool } from "../threads/pool.js";
import type { Weight } from "./kernels.js";
import { halfToFloat, LazyTensor, type HostTensor } from "../graph/tensor.js";
import { q4Layout } from "../ops.js";

const PAGE_BYTES = 65536;
/**
 * The most a shared arena may grow to, in pages (1 GiB): a shared memory is reserved at its
 * maximum when made and can never grow past it.
 */
export const SHARED_MAX_PAGES = 16384;
/** Offsets are 16-byte aligned: what vectorized kernels are tuned for. */
const align16 = (n: number) => (n + 15) & ~15;
/** Nothing lives at address 0, so a zero offset is always a bug. */
const FIRST_OFFSET = 64;

/**
 * The model's one Wasm memory: every kernel imports it, weights are written to it once, each
 * plan's activations share one region laid out by lifetime, and packed weight copies come and
 * go as kernels are installed and released. Blocks are 16-byte aligned; released blocks are
 * reused first-fit (a Wasm memory never shrinks, so reuse is what keeps it small). With a worker
 * pool the memory is shared, and the kernels are split ones (ABI v2) that the pool runs.
 */
/**
 * A memory for an engine without WebAssembly (disabled by policy, or a lockdown mode): an
 * ArrayBuffer that grows by moving to a bigger one, as a Wasm memory's buffer does; only the
 * reference kernels run on it, through {@link Arena.f32} views.
 */
function plainMemory(): WebAssembly.Memory {
  let buffer = new ArrayBuffer(PAGE_BYTES);
  const memory = {
    get buffer() {
      return buffer;
    },
    grow(pages: number): number {
      const old = buffer;
      buffer = new ArrayBuffer(old.byteLength + pages * PAGE_BYTES);
      new Uint8Array(buffer).set(new Uint8Array(old));
      return old.byteLength / PAGE_BYTES;
    },
  };
  return memory as unknown as WebAssembly.Memory; // the part of a Memory an arena uses
}

export class Arena {
  readonly memory: WebAssembly.Memory;
  private top = FIRST_OFFSET;
  private readonly free: { offset: number; bytes: number }[] = [];
  private live = 0;
  private peak = 0;
  /** Packed copies of weights, by weight and layout. */
  private readonly packed = new Map<Weight, Map<string, PackedCopy>>();

  constructor(readonly pool?: WorkerPool) {
    this.memory = pool ? new WebAssembly.Memory({ initial: 1, maximum: SHARED_MAX_PAGES, shared: true })
      : typeof WebAssembly === "object" ? new WebAssembly.Memory({ initial: 1 }) : plainMemory();
  }

  /** Another arena of the same kind (shared, for the same pool, or not), for a bench or a trial. */
  sibling(): Arena {
    return new Arena(this.pool);
  }

  /** A block of `bytes`, 16-byte aligned; the memory grows as needed. */
  alloc(bytes: number): number {
    const size = align16(Math.max(bytes, 16));
    this.live += size;
    this.peak = Math.max(this.peak, this.live);
    const i = this.free.findIndex((f) => f.bytes >= size);
    if (i >= 0) {
      const block = this.free[i];
      if (block.bytes === size) this.free.splice(i, 1);
      else this.free[i] = { offset: block.offset + size, bytes: block.bytes - size };
      return block.offset;
    }
    const offset = this.top;
    const missing = Math.ceil((offset + size) / PAGE_BYTES) - this.memory.buffer.byteLength / PAGE_BYTES;
    if (missing > 0) {
      try {
        this.memory.grow(missing);
      } catch (e) {
        this.live -= size;
        throw new Error(this.pool ? `the model needs more than the ${SHARED_MAX_PAGES / 16} MiB a shared memory may grow to `
          + `here; load it with threads: 1` : `the model's memory could not grow to ${offset + size} bytes: ${(e as Error).message}`);
      }
    }
    this.top = offset + size;
    return offset;
  }

  /**
   * The block of `bytes` at `offset` if every byte of it is free (a block given back and not
   * taken since); false when not. What holds offsets across a release keeps them this way.
   */
  claim(offset: number, bytes: number): boolean {
    const size = align16(Math.max(bytes, 16));
    const i = this.free.findIndex((f) => f.offset <= offset && offset + size <= f.offset + f.bytes);
    if (i < 0) return false;
    const f = this.free[i];
    const pieces = [{ offset: f.offset, bytes: offset - f.offset }, { offset: offset + size, bytes: f.offset + f.bytes - offset - size }];
    this.free.splice(i, 1, ...pieces.filter((p) => p.bytes > 0));
    this.live += size;
    this.peak = Math.max(this.peak, this.live);
    return true;
  }

  /** Gives a block back (its offset and the size it was allocated with). */
  release(offset: number, bytes: number): void {
    const size = align16(Math.max(bytes, 16));
    this.live -= size;
    this.free.push({ offset, bytes: size });
    this.free.sort((a, b) => a.offset - b.offset);
    for (let i = this.free.length - 1; i > 0; i--) {
      const a = this.free[i - 1], b = this.free[i];
      if (a.offset + a.bytes === b.offset) this.free.splice(i - 1, 2, { offset: a.offset, bytes: a.bytes + b.bytes });
    }
  }

  /** A view of `count` floats at `offset` (fresh: growing the memory detaches older views). */
  f32(offset: number, count: number): Float32Array {
    return new Float32Array(this.memory.buffer, offset, count);
  }

  /**
   * A weight's packed copy in one layout (what a packing kernel reads instead of B), shared by
   * every kernel that reads that layout: the uKernels of a MatMul's row counts, the incumbent and
   * a candidate with the same panels. `pack` makes it at the first hold; the last unhold frees it.
   */
  holdPacked(weight: Weight, layout: string, floats: number, pack: () => Float32Array, panels?: Panels): number {
    const byLayout = this.packed.get(weight) ?? new Map<string, PackedCopy>();
    this.packed.set(weight, byLayout);
    let copy = byLayout.get(layout);
    if (!copy) {
      copy = { offset: this.alloc(floats * 4), floats, holds: 0 };
      this.f32(copy.offset, floats).set(pack());
      byLayout.set(layout, copy);
      if (panels) weight.packedInto?.(copy.offset, panels);
    }
    copy.holds++;
    return copy.offset;
  }

  unholdPacked(weight: Weight, layout: string): void {
    const byLayout = this.packed.get(weight), copy = byLayout?.get(layout);
    if (!copy || --copy.holds > 0) return;
    weight.packedCopyGoes?.(copy.offset);
    this.release(copy.offset, copy.floats * 4);
    byLayout!.delete(layout);
    if (!byLayout!.size) this.packed.delete(weight);
  }

  /** Bytes the memory holds now (it never shrinks). */
  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Bytes in live blocks now, and the most there ever were. */
  get usage(): { liveBytes: number; peakLiveBytes: number } {
    return { liveBytes: this.live, peakLiveBytes: this.peak };
  }
}

/** A weight's packed copy in one layout, and how many binds hold it. */
interface PackedCopy {
  readonly offset: number;
  readonly floats: number;
  holds: number;
}

/** A value's size and the steps it lives over (first written to last read, inclusive). */
export interface Lifetime {
  readonly name: string;
  readonly bytes: number;
  readonly first: number;
  readonly last: number;
}

/**
 * Offsets within one region for values whose lifetimes overlap only where their bytes do not:
 * largest first, each at the lowest aligned offset clear of every overlapping value placed.
 */
export function layOut(values: readonly Lifetime[]): { offsets: Map<string, number>; bytes: number } {
  const placed: { offset: number; end: number; first: number; last: number }[] = [];
  const offsets = new Map<string, number>();
  let total = 0;
  for (const v of [...values].sort((a, b) => b.bytes - a.bytes || a.first - b.first)) {
    const size = align16(Math.max(v.bytes, 16));
    const clashes = placed.filter((p) => p.first <= v.last && v.first <= p.last).sort((a, b) => a.offset - b.offset);
    let offset = 0;
    for (const c of clashes) {
      if (offset + size <= c.offset) break;
      offset = Math.max(offset, c.end);
    }
    placed.push({ offset, end: offset + size, first: v.first, last: v.last });
    offsets.set(v.name, offset);
    total = Math.max(total, offset + size);
  }
  return { offsets, bytes: total };
}

/**
 * A weight copied into an arena while it is held (see {@link Weight}): a folded constant, or a
 * model weight on a tuning bench. `source` gives its values when they are read (a model weight's
 * live in the model's arena, where a memory that grew has moved them to a new buffer).
 */
export class ArenaWeight implements Weight {
  private holds = 0;
  private block?: { offset: number; floats: number };

  constructor(private readonly arena: Arena, private readonly source: () => Float32Array) {}

  get values(): Float32Array {
    return this.source();
  }

  hold(): { offset: number; floats: number } {
    if (!this.block) {
      const values = this.values;
      this.block = { offset: this.arena.alloc(values.length * 4), floats: values.length };
      this.arena.f32(this.block.offset, this.block.floats).set(values);
    }
    this.holds++;
    return this.block;
  }

  unhold(): void {
    if (--this.holds > 0 || !this.block) return;
    this.arena.release(this.block.offset, this.block.floats * 4);
    this.block = undefined;
  }
}

/**
 * How a packing kernel lays a `[K, N]` B out (docs/kernel-abi.md, `pack_b`): panels of `x0`
 * columns (the last one N mod x0 wide), each K rows of its width; B is stored `[N, K]` when
 * `transposed`.
 */
export interface Panels {
  readonly x0: number;
  readonly k: number;
  readonly n: number;
  readonly transposed: boolean;
  /** An int8 B (`matmul_int8`): panels of k pairs, 8 bytes per pair of 4 columns, zero-padded; words hold its bytes. */
  readonly int8?: boolean;
  /**
   * A 4-bit B (`matmul_q4`), stored `[N, blocks, 16]` bytes as MatMulNBits has it: packed block by
   * block in place of size (x0 plays no part), byte 4L + j holding k = 8j + L and 8j + 4 + L.
   */
  readonly q4?: boolean;
}

/** Bytes of a 4-bit B: 16 per block of 32 k per column. */
const q4Bytes = (k: number, n: number): number => n * q4Layout(k).blocks * 16;

/** Words of the packed copy (floats, or an int8 or 4-bit B's bytes four to a word). */
export const packedWords = ({ x0, k, n, int8, q4 }: Panels): number =>
  (q4 ? q4Bytes(k, n) / 4 : int8 ? Math.ceil(n / x0) * Math.ceil(k / 2) * 2 * x0 / 4 : k * n);

/** Words of B as stored. */
const storedWords = ({ k, n, int8, q4 }: Panels): number => (q4 ? q4Bytes(k, n) / 4 : int8 ? Math.ceil(k * n / 4) : k * n);

/** B as stored (`[K, N]`, or `[N, K]` when transposed) from its panels. */
export function unpackPanels(packed: Float32Array, panels: Panels): Float32Array {
  const { x0, k, n, transposed } = panels;
  if (panels.q4) {
    const from = new Uint8Array(packed.buffer, packed.byteOffset, packed.length * 4);
    const to = new Uint8Array(storedWords(panels) * 4);
    const nibble = (at: number, p: number) => (from[at + 4 * (p & 3) + (p >> 3)] >> (((p >> 2) & 1) * 4)) & 15; // k = 4t + L: byte 4L + t/2
    for (let block = 0; block < to.length; block += 16) {
      for (let i = 0; i < 16; i++) to[block + i] = nibble(block, 2 * i) | (nibble(block, 2 * i + 1) << 4);
    }
    return new Float32Array(to.buffer);
  }
  if (panels.int8) {
    const from = new Int8Array(packed.buffer, packed.byteOffset, packed.length * 4);
    const to = new Int8Array(storedWords(panels) * 4);
    const panelBytes = Math.ceil(k / 2) * 2 * x0;
    for (let r = 0; r < k; r++) {
      for (let c = 0; c < n; c++) to[r * n + c] = from[Math.floor(c / x0) * panelBytes + (r >> 1) * 2 * x0 + ((c % x0) >> 2) * 8 + (c & 3) * 2 + (r & 1)];
    }
    return new Float32Array(to.buffer);
  }
  const b = new Float32Array(k * n);
  let o = 0;
  for (let c0 = 0; c0 < n; c0 += x0) {
    const width = Math.min(x0, n - c0);
    for (let r = 0; r < k; r++) {
      for (let j = 0; j < width; j++) b[transposed ? (c0 + j) * k + r : r * n + c0 + j] = packed[o++];
    }
  }
  return b;
}

/**
 * A model weight held once. It starts as the file's values in JavaScript. The first packed copy a
 * kernel makes of it (what a packing kernel reads instead of B) becomes its one copy, and the
 * JavaScript one is dropped: its values are unpacked from there when asked for (a candidate
 * packing it another way, the reference kernel, a tuning bench); should that copy go, they move
 * back to JavaScript first. The first kernel that reads it as it is moves it into the arena
 * unpacked, for good. The graph holds {@link ModelWeight.tensor} instead of the file's tensor: a
 * weight read through the graph too (a host step's Gather of a tied embedding, a folded Transpose)
 * keeps its values where they can be read at once, in JavaScript or unpacked in the arena.
 */
export class ModelWeight implements Weight {
  private own?: Float32Array;
  private block?: { offset: number; floats: number };
  private view?: Float32Array;
  private master?: { offset: number; panels: Panels };
  private pinned = false;
  readonly bytes: number;

  constructor(private readonly arena: Arena, values: Float32Array) {
    this.own = values;
    this.bytes = values.length * 4;
  }

  /**
   * Its values: the file's array, a view of its block (made again once the memory has grown:
   * growing detaches an unshared memory's views), or a fresh array unpacked from its packed copy.
   */
  get values(): Float32Array {
    if (this.own) return this.own;
    if (this.block) {
      if (this.view!.buffer !== this.arena.memory.buffer) this.view = this.arena.f32(this.block.offset, this.block.floats);
      return this.view!;
    }
    const { offset, panels } = this.master!;
    return unpackPanels(this.arena.f32(offset, packedWords(panels)), panels);
  }

  /** Where its one copy is now. */
  get held(): "javascript" | "arena" | "packed" {
    return this.block ? "arena" : this.own ? "javascript" : "packed";
  }

  /** The weight as a graph value: the same dtype and shape, its data read from wherever it is (see {@link pin}). */
  tensor(of: HostTensor): HostTensor {
    if (of.dtype === "int8" || of.dtype === "uint8") {
      const elements = of.data.length, int8 = of.dtype === "int8";
      return new LazyTensor(of.dtype, of.shape, () => {
        this.pin();
        const words = this.values;
        return int8 ? new Int8Array(words.buffer, words.byteOffset, elements) : new Uint8Array(words.buffer, words.byteOffset, elements);
      });
    }
    return new LazyTensor(of.dtype, of.shape, () => { this.pin(); return this.values; }, of.half);
  }

  /**
   * A float16 weight held as its bits (a matmul_f16's B) as a graph value: float32 values, widened
   * from the bits each time the graph reads them (a weight is seldom read there), so no float32
   * copy stays in memory.
   */
  halfTensor(of: HostTensor): HostTensor {
    const elements = of.data.length;
    return new LazyTensor(of.dtype, of.shape, () => {
      const words = this.values;
      return Float32Array.from(new Uint16Array(words.buffer, words.byteOffset, elements), halfToFloat);
    }, of.half);
  }

  /** Read through the graph (maybe at every run): it is never packed-only again. */
  private pin(): void {
    if (this.pinned) return;
    this.pinned = true;
    if (!this.own && !this.block) this.own = this.values;
    this.master = undefined;
  }

  hold(): { offset: number; floats: number } {
    if (!this.block) {
      const values = this.values;
      this.block = { offset: this.arena.alloc(values.length * 4), floats: values.length };
      this.view = this.arena.f32(this.block.offset, this.block.floats);
      this.view.set(values);
      if (!this.pinned) this.own = undefined;
      this.master = undefined;
    }
    return this.block;
  }

  unhold(): void {}

  /** A packed copy was made at `offset`: the first, while the values are in JavaScript only, becomes the one copy. */
  packedInto(offset: number, panels: Panels): void {
    if (this.block || this.master || this.pinned || storedWords(panels) !== this.own?.length) return;
    this.master = { offset, panels };
    this.own = undefined;
  }

  /** The packed copy at `offset` is about to go: if it is the one copy, the values move back to JavaScript. */
  packedCopyGoes(offset: number): void {
    if (this.master?.offset !== offset) return;
    this.own = this.values;
    this.master = undefined;
  }
}
