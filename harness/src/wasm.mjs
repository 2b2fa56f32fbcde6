// Runs a Wasm kernel artifact in V8 exactly as docs/kernel-abi.md says a host must.

import v8 from 'node:v8';
import { instantiateKernel } from '../../client-sdk-js/dist/wasm-executor.js';
import { size } from './data.mjs';

// Relaxed SIMD ships behind a flag in Node 20's V8; set it before any module is compiled.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** Where the first operand goes: past anything a conventional toolchain's module puts low in memory (its stack). */
export const BASE = 1 << 20;
const ALIGN = 16;
const PAGE = 65536;

const align = (x) => Math.ceil(x / ALIGN) * ALIGN;

/**
 * One kernel instantiated with its operands placed in its memory: inputs written once, B packed
 * once when the metadata asks for it, C pre-filled with NaN so an element never written shows.
 */
export class WasmKernel {
  constructor(bytes, meta) {
    if (!WebAssembly.validate(bytes)) throw new Error('the module does not validate in this V8');
    this.meta = meta;
    this.offsets = {};
    let end = BASE;
    for (const name of meta.operands) {
      this.offsets[name] = end;
      end = align(end + 4 * size(meta.operandShapes[name]));
    }
    if (meta.pack) {
      this.offsets.packed = end;
      end = align(end + 4 * meta.pack.floats);
    }
    this.end = end;
    this.memory = new WebAssembly.Memory({ initial: Math.ceil(end / PAGE) });
    // the SDK's host, the one every caller uses: the import, the entry and the pack function, checked
    const { call, pack } = instantiateKernel(new WebAssembly.Module(bytes), meta, this.memory);
    this.entry = call;
    this.pack = pack;
    this.args = meta.operands.map((name) => (name === 'B' && meta.pack ? this.offsets.packed : this.offsets[name]));
  }

  view(name, length = size(this.meta.operandShapes[name])) {
    return new Float32Array(this.memory.buffer, this.offsets[name], length);
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
      else this.write(name, inputs[name]);
    }
  }

  run() {
    this.entry(...this.args);
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
  const kernel = new WasmKernel(bytes, meta);
  const bytesOf = () => new Uint8Array(kernel.memory.buffer);
  bytesOf().fill(0xa5);
  for (const name of meta.operands) if (name !== 'C' && name !== 'B') kernel.view(name).set(inputs[name]);
  kernel.view('C').fill(NaN);
  if (meta.operands.includes('B')) {
    kernel.view('B').set(inputs.B);
    if (kernel.pack) {
      const before = bytesOf().slice();
      kernel.pack(kernel.offsets.B, kernel.offsets.packed);
      const stray = strayWrite(before, bytesOf(), kernel.offsets.packed, 4 * meta.pack.floats);
      if (stray >= 0) throw new Error(`${meta.pack.entry} wrote outside the packed copy, at byte ${stray}`);
    }
  }
  const before = bytesOf().slice();
  kernel.run();
  const stray = strayWrite(before, bytesOf(), kernel.offsets.C, 4 * size(meta.operandShapes.C));
  if (stray >= 0) throw new Error(`${meta.entry} wrote outside C, at byte ${stray}`);
  return kernel.result();
}

function strayWrite(before, after, start, length) {
  for (let i = 0; i < before.length; i++) {
    if (i === start) i += length;
    if (i < before.length && before[i] !== after[i]) return i;
  }
  return -1;
}
