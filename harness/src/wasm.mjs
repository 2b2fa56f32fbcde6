// Runs a Wasm kernel artifact in V8 exactly as docs/kernel-abi.md says a host must.

import v8 from 'node:v8';
import { instantiateKernel, shareOf } from '@jitzoo/client/internal';
import { bytesOf, scratchOf, size, viewOf } from './data.mjs';

// Relaxed SIMD ships behind a flag in Node 20's V8; set it before any module is compiled.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** Where the first operand goes: past anything a conventional toolchain's module puts low in memory (its stack). */
export const BASE = 1 << 20;
const ALIGN = 16;
const PAGE = 65536;

const align = (x) => Math.ceil(x / ALIGN) * ALIGN;

/** Pages a split kernel's shared memory may grow to (a shared memory reserves its maximum up front). */
export const SHARED_MAX_PAGES = 8192;

/** A shared memory for split kernels (ABI v2), of `bytes` at first. */
export function sharedMemory(bytes) {
  return new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE), maximum: SHARED_MAX_PAGES, shared: true });
}

/**
 * One kernel instantiated with its operands placed in its memory: inputs written once, B packed
 * once when the metadata asks for it, C pre-filled with NaN so an element never written shows.
 * A split kernel (ABI v2) gets a shared memory, `memory` when given (a worker pool's, grown to fit;
 * operands from `base`, so that kernels can sit side by side in one memory).
 */
export class WasmKernel {
  constructor(bytes, meta, memory, base = BASE) {
    if (!WebAssembly.validate(bytes)) throw new Error('the module does not validate in this V8');
    this.meta = meta;
    this.bytes = bytes;
    this.offsets = {};
    let end = align(base);
    for (const name of meta.operands) {
      this.offsets[name] = end;
      end = align(end + bytesOf(meta, name));
    }
    if (meta.pack) {
      this.offsets.packed = end;
      end = align(end + 4 * meta.pack.floats);
    }
    this.end = end;
    if (memory) {
      const missing = Math.ceil(end / PAGE) - memory.buffer.byteLength / PAGE;
      if (missing > 0) memory.grow(missing);
    }
    this.memory = memory ?? (meta.split ? sharedMemory(end) : new WebAssembly.Memory({ initial: Math.ceil(end / PAGE) }));
    this.module = new WebAssembly.Module(bytes);
    // the SDK's host, the one every caller uses: the import, the entry and the pack function, checked
    const { call, pack } = instantiateKernel(this.module, meta, this.memory);
    this.entry = call;
    this.pack = pack;
    this.args = meta.operands.map((name) => (name === 'B' && meta.pack ? this.offsets.packed : this.offsets[name]));
    this.units = meta.split?.units ?? 1;
  }

  /**
   * Byte spans [start, length] of C that units [first, end) of a split kernel write: a unit is grain
   * rows of C in one batch (a conv's: grain output rows of one image, in every output channel's plane),
   * or grain columns of a one-row matmul's C.
   */
  unitSpans(first, end) {
    const { grain, axis } = this.meta.split;
    const shape = this.meta.operandShapes.C;
    if (axis === 'columns') {
      const at = (u) => Math.min(shape[shape.length - 1], u * grain);
      return [[this.offsets.C + 4 * at(first), 4 * (at(end) - at(first))]];
    }
    if (this.meta.op === 'conv') {
      const [, channels, rows, cols] = shape, bands = Math.ceil(rows / grain), spans = [];
      for (let u = first; u < end; u++) {
        const image = Math.floor(u / bands), top = (u % bands) * grain, bottom = Math.min(rows, top + grain);
        for (let m = 0; m < channels; m++) spans.push([this.offsets.C + 4 * ((image * channels + m) * rows + top) * cols, 4 * (bottom - top) * cols]);
      }
      return spans;
    }
    const rowFloats = shape.length === 1 ? 1 : shape[shape.length - 1];
    const rows = this.meta.op === 'batch_matmul' ? shape[1] : shape[0];
    const bands = Math.ceil(rows / grain);
    const rowOf = (u) => Math.floor(u / bands) * rows + Math.min(rows, (u % bands) * grain);
    const start = (u) => (u === this.units ? size(shape) : rowOf(u) * rowFloats);
    return [[this.offsets.C + 4 * start(first), 4 * (start(end) - start(first))]];
  }

  /** Units [first, end) of a split kernel. */
  runRange(first, end) {
    this.entry(...this.args, first, end);
  }

  view(name, length = size(this.meta.operandShapes[name])) {
    return viewOf(this.meta, name, this.memory.buffer, this.offsets[name], length);
  }

  /** Writes one input; B is packed again when the kernel reads a packed copy. */
  write(name, data) {
    this.view(name).set(data);
    if (name === 'B' && this.pack) this.pack(this.offsets.B, this.offsets.packed);
  }

  /** Writes every input and NaN into C. */
  load(inputs) {
    for (const name of this.meta.operands) {
      if (name === 'C') this.view('C').fill(NaN);
      else if (!scratchOf(this.meta).includes(name)) this.write(name, inputs[name]);
    }
  }

  /** Byte spans the kernel may write besides C: its scratch operands. */
  scratchSpans() {
    return scratchOf(this.meta).map((name) => [this.offsets[name], bytesOf(this.meta, name)]);
  }

  /** Every unit, on this thread. */
  run() {
    if (this.meta.split) this.entry(...this.args, 0, this.units);
    else this.entry(...this.args);
  }

  result() {
    return this.view('C').slice();
  }
}

/**
 * Runs a kernel once on the given inputs and returns C, after checking that the kernel (and its
 * pack function) wrote nothing outside C (and the packed copy): every other byte of memory is
 * compared with a snapshot.
 */
export function runChecked(bytes, meta, inputs) {
  return runKernelChecked(new WasmKernel(bytes, meta), inputs);
}

/** Worker counts every split kernel is checked with, one more than this machine's 2 cores and beyond. */
export const WORKER_COUNTS = [1, 2, 3, 4];

function runKernelChecked(kernel, inputs) {
  const { meta } = kernel;
  const bytesOf = () => new Uint8Array(kernel.memory.buffer);
  bytesOf().fill(0xa5);
  for (const name of meta.operands) if (name !== 'C' && name !== 'B' && !scratchOf(meta).includes(name)) kernel.view(name).set(inputs[name]);
  kernel.view('C').fill(NaN);
  if (meta.operands.includes('B')) {
    kernel.view('B').set(inputs.B);
    if (kernel.pack) {
      const before = bytesOf().slice();
      kernel.pack(kernel.offsets.B, kernel.offsets.packed);
      const stray = strayWrite(before, bytesOf(), [[kernel.offsets.packed, 4 * meta.pack.floats]]);
      if (stray >= 0) throw new Error(`${meta.pack.entry} wrote outside the packed copy, at byte ${stray}`);
    }
  }
  if (meta.split) return runShares(kernel, bytesOf);
  const before = bytesOf().slice();
  kernel.run();
  const stray = strayWrite(before, bytesOf(), [[kernel.offsets.C, 4 * size(meta.operandShapes.C)], ...kernel.scratchSpans()]);
  if (stray >= 0) throw new Error(`${meta.entry} wrote outside C${meta.scratch ? ' and its scratch' : ''}, at byte ${stray}`);
  return kernel.result();
}

/**
 * A split kernel run as every worker count of WORKER_COUNTS would share it out (SDK's shareOf),
 * one share after another: each share must write only its own units' rows of C, and every count
 * must give C bit for bit as one worker does (a split changes which thread computes a row, never
 * how). Returns C.
 */
function runShares(kernel, bytesOf) {
  let first;
  for (const workers of WORKER_COUNTS) {
    kernel.view('C').fill(NaN);
    for (let w = 0; w < workers; w++) {
      const [from, to] = shareOf(kernel.units, workers, w);
      const before = bytesOf().slice();
      kernel.runRange(from, to);
      const stray = strayWrite(before, bytesOf(), [...kernel.unitSpans(from, to), ...kernel.scratchSpans()]);
      if (stray >= 0) {
        throw new Error(`${kernel.meta.entry} units [${from}, ${to}) of ${kernel.units} (worker ${w + 1} of ${workers}) `
          + `wrote outside their rows of C, at byte ${stray}`);
      }
    }
    const result = kernel.result();
    first ??= result;
    const differs = result.findIndex((x, i) => !Object.is(x, first[i]));
    if (differs >= 0) throw new Error(`with ${workers} workers C[${differs}] is ${result[differs]}, not ${first[differs]} as with 1`);
  }
  return first;
}

/** The first byte that changed outside the allowed [start, length] spans, or -1. */
function strayWrite(before, after, spans) {
  const allowed = [...spans].sort((a, b) => a[0] - b[0]);
  let next = 0;
  for (let i = 0; i < before.length; i++) {
    while (next < allowed.length && i >= allowed[next][0] + allowed[next][1]) next++;
    if (next < allowed.length && i >= allowed[next][0]) {
      i = allowed[next][0] + allowed[next][1] - 1;
      continue;
    }
    if (before[i] !== after[i]) return i;
  }
  return -1;
}

/**
 * A split kernel run by real threads: `threads.pool` (the SDK's WorkerPool) on `threads.memory`,
 * with every count of WORKER_COUNTS; each C must equal `want` bit for bit (runChecked's result).
 */
export async function runPooledChecked({ pool, memory }, bytes, meta, inputs, want) {
  const kernel = new WasmKernel(bytes, meta, memory);
  kernel.load(inputs);
  const loaded = pool.load(kernel.module, meta.entry, kernel.units, memory);
  try {
    const args = Int32Array.from(kernel.args);
    for (const workers of WORKER_COUNTS) {
      kernel.view('C').fill(NaN);
      pool.run(loaded, args, args.length, workers);
      const got = kernel.result();
      const differs = got.findIndex((x, i) => !Object.is(x, want[i]));
      if (differs >= 0) {
        throw new Error(`on ${Math.min(workers, pool.threads)} threads C[${differs}] is ${got[differs]}, not ${want[differs]}`);
      }
    }
  } finally {
    pool.release(loaded);
  }
}

/**
 * The SDK's worker pool of `threads` threads (the caller included, worker_threads here) and a
 * shared memory for the kernels it runs: { pool, memory, threads, close }.
 */
export async function startPool(threads) {
  await import('@jitzoo/client/node'); // worker_threads for the SDK's pool
  const { WorkerPool } = await import('@jitzoo/client/internal');
  const pool = await WorkerPool.start({ threads });
  return { pool, memory: sharedMemory(BASE), threads: pool.threads, close: () => pool.close() };
}
