import { KernelError } from "../errors.js";
import type { KernelArtifact } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import type { MatMulDims } from "../ops.js";

/** The ABI metadata of a Wasm kernel (docs/kernel-abi.md); unknown keys are ignored. */
export interface KernelMetadata {
  /** ABI version: 1, or 2 for a split kernel (a range of units per call, on a shared memory). */
  abi: number;
  /** `matmul` or `batch_matmul`. */
  op: string;
  /** `[M, K, N]` or `[batch, M, K, N]`. */
  shape: number[];
  /** Name of the exported entry function. */
  entry: string;
  /** Operand names in the order of the entry's parameters, e.g. `["A","B","C"]`. */
  operands: string[];
  /** Present when the kernel reads B packed: call `entry(B, dst)` once, then pass `dst` for B. */
  pack?: { operand: string; entry: string; floats: number };
  /** ABI v2: the entry takes `(offsets..., first, end)` and computes units [first, end) of `units`. */
  split?: { axis: string; grain: number; units: number };
  /** The schedule compiled (`x0`: the width of a packed B's panels, among others). */
  schedule?: { x0?: number };
  transposeB?: boolean;
  broadcastB?: boolean;
}

/** The ABI versions this host runs. */
export const ABI_VERSIONS = [1, 2];

/** The name of the custom section that repeats the metadata inside the module. */
export const ABI_SECTION = "jitzoo.abi";

const PAGE_BYTES = 65536;
/** Offsets are 16-byte aligned: what vectorized kernels are tuned for. */
const align16 = (n: number) => (n + 15) & ~15;
/** Operands start past a small unused head, so no operand sits at address 0. */
const FIRST_OFFSET = 64;

/**
 * Parses and checks an artifact's metadata. When `module` is given and carries a `jitzoo.abi`
 * custom section, that section must equal the metadata byte for byte.
 */
export function readMetadata(artifact: KernelArtifact, module?: WebAssembly.Module): KernelMetadata {
  let meta: KernelMetadata;
  try {
    meta = JSON.parse(artifact.metadataJson) as KernelMetadata;
  } catch {
    throw new KernelError("the kernel's metadata_json is not JSON");
  }
  if (!ABI_VERSIONS.includes(meta?.abi)) throw new KernelError(`kernel ABI ${meta?.abi} is not supported`);
  if ((meta.abi === 2) !== (meta.split !== undefined)) {
    throw new KernelError(meta.abi === 2 ? "an ABI v2 kernel's metadata has no split" : "an ABI v1 kernel cannot be split");
  }
  if (meta.split !== undefined) {
    const { axis, grain, units } = meta.split;
    if ((axis !== "rows" && axis !== "columns") || !(Number.isInteger(grain) && grain >= 1) || !(Number.isInteger(units) && units >= 1)) {
      throw new KernelError(`the kernel's split ${JSON.stringify(meta.split)} is not rows or columns in positive grains and units`);
    }
  }
  if (typeof meta.entry !== "string" || !meta.entry) throw new KernelError("the kernel's metadata names no entry");
  if (!Array.isArray(meta.operands) || !Array.isArray(meta.shape)) throw new KernelError("the kernel's metadata lacks operands or shape");
  if (module) {
    const sections = WebAssembly.Module.customSections(module, ABI_SECTION);
    if (sections.length > 1) throw new KernelError(`the kernel has ${sections.length} ${ABI_SECTION} sections`);
    if (sections.length === 1 && new TextDecoder().decode(sections[0]) !== artifact.metadataJson) {
      throw new KernelError(`the ${ABI_SECTION} section disagrees with the artifact's metadata`);
    }
  }
  return meta;
}

/** A kernel instantiated on a memory: its entry, and its pack function when it reads a packed copy. */
export interface KernelExports {
  /**
   * `entry(offset of each operand, in the metadata's order)`; B's offset is the packed copy's when
   * packing. A split kernel's entry takes two more: the first unit and the end of the range.
   */
  readonly call: (...offsets: number[]) => void;
  /** `pack(from, to)`: writes the packed copy of the operand `meta.pack.operand` (B) at `to`. */
  readonly pack?: (from: number, to: number) => void;
}

/**
 * Instantiates a kernel module as the ABI says a host must (docs/kernel-abi.md): its one import,
 * `env.memory`, and the exports its metadata names, checked. The one host every caller uses: the
 * SDK's executors and the harness. Kernels are a few KB, so instantiating synchronously is
 * allowed on a browser's main thread.
 */
export function instantiateKernel(module: WebAssembly.Module, meta: KernelMetadata, memory: WebAssembly.Memory): KernelExports {
  if (meta.split !== undefined && !(memory.buffer instanceof SharedArrayBuffer)) {
    throw new KernelError("a split kernel (ABI v2) imports a shared memory: make it with { shared: true, maximum }");
  }
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const entry = instance.exports[meta.entry];
  if (typeof entry !== "function") throw new KernelError(`kernel exports no function ${meta.entry}`);
  if (meta.pack === undefined) return { call: entry as KernelExports["call"] };
  const { operand, entry: packEntry, floats } = meta.pack;
  const pack = instance.exports[packEntry];
  if (operand !== "B" || !meta.operands.includes(operand)) throw new KernelError(`the kernel packs ${operand}, which it cannot pack`);
  if (!Number.isInteger(floats) || floats < 1) throw new KernelError(`the kernel's pack size ${floats} is not a positive integer`);
  if (typeof pack !== "function") throw new KernelError(`kernel exports no pack function ${packEntry}`);
  return { call: entry as KernelExports["call"], pack: pack as KernelExports["pack"] };
}

/**
 * One op's operands in one Wasm memory, shared by every kernel of that op: A and B are written
 * once, each kernel is instantiated against the same memory, C is read back after a run.
 * Operands lie one after another, each at a 16-byte aligned offset.
 */
export class OperandMemory {
  /** The memory every kernel of this op imports as `env.memory`. */
  readonly memory: WebAssembly.Memory;
  /** Byte offset of each operand (`A`, `B`, `C`). */
  readonly offsets: Readonly<Record<string, number>>;
  private readonly outputFloats: number;
  private end: number;

  /** Lays out A ([batch,M,K]) and B ([batch,K,N]) and room for C ([batch,M,N]). */
  constructor(readonly dims: MatMulDims, a: Float32Array, b: Float32Array) {
    const { batch, m, k, n } = dims;
    if (a.length !== batch * m * k || b.length !== batch * k * n) throw new KernelError("operand sizes do not match the op");
    this.outputFloats = batch * m * n;
    const offA = FIRST_OFFSET;
    const offB = align16(offA + a.byteLength);
    const offC = align16(offB + b.byteLength);
    this.end = offC + this.outputFloats * 4;
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.growTo(this.end);
    this.offsets = { A: offA, B: offB, C: offC };
    new Float32Array(this.memory.buffer, offA, a.length).set(a);
    new Float32Array(this.memory.buffer, offB, b.length).set(b);
  }

  /**
   * Room for `floats` more floats past everything laid out so far, 16-byte aligned, for a kernel's
   * packed copy of an operand; the memory grows as needed (it never shrinks).
   */
  reserve(floats: number): number {
    const offset = align16(this.end);
    this.end = offset + floats * 4;
    this.growTo(this.end);
    return offset;
  }

  private growTo(bytes: number): void {
    const missing = Math.ceil(bytes / PAGE_BYTES) - this.memory.buffer.byteLength / PAGE_BYTES;
    if (missing > 0) this.memory.grow(missing);
  }

  /** Fills C with NaN, so that any element a kernel leaves unwritten shows up as an error. */
  poisonOutput(): void {
    this.output().fill(NaN);
  }

  /** A copy of C. */
  readOutput(): Float32Array {
    return this.output().slice();
  }

  // A fresh view each time: growing a memory detaches its old buffer.
  private output(): Float32Array {
    return new Float32Array(this.memory.buffer, this.offsets.C, this.outputFloats);
  }
}

/** A kernel ready to call. */
export interface LoadedKernel {
  /** The server-issued id (empty when the artifact carries none). */
  readonly kernelId: string;
  /** The artifact's parsed metadata. */
  readonly metadata: KernelMetadata;
  /** Executes the kernel once over the shared operands (writes C). */
  run(): void;
}

/**
 * Compiles and instantiates a Wasm artifact against an op's operand memory. Throws when the
 * artifact is not Wasm, does not compile, its metadata does not fit `operands`, or its entry
 * function is missing.
 */
export async function loadKernel(artifact: KernelArtifact, operands: OperandMemory): Promise<LoadedKernel> {
  if (artifact.code.case !== "wasm") throw new KernelError("not a Wasm artifact");
  const module = await WebAssembly.compile(artifact.code.value as Uint8Array<ArrayBuffer>);
  const metadata = readMetadata(artifact, module);
  const { batch, m, k, n } = operands.dims;
  const expectedShape = metadata.shape.length === 4 ? [batch, m, k, n] : [m, k, n];
  if ((metadata.shape.length === 3 && batch !== 1) || metadata.shape.join(",") !== expectedShape.join(",")) {
    throw new KernelError(`kernel shape [${metadata.shape}] does not match the operands [${expectedShape}]`);
  }
  const offsets: Record<string, number> = { ...operands.offsets };
  const args = metadata.operands.map((name) => {
    const offset = offsets[name];
    if (offset === undefined) throw new KernelError(`unknown operand ${name}`);
    return offset;
  });
  const { call, pack } = instantiateKernel(module, metadata, operands.memory);
  if (metadata.pack !== undefined && pack !== undefined) {
    const { operand, floats } = metadata.pack;
    const packed = operands.reserve(floats);
    pack(offsets[operand], packed);
    args[metadata.operands.indexOf(operand)] = packed;
  }
  return { kernelId: artifact.ref?.kernelId ?? "", metadata, run: () => call(...args) };
}
