import type { KernelArtifact } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import type { MatMulDims } from "./reference.js";

/** The ABI v1 metadata of a kernel (docs/kernel-abi.md). */
export interface KernelMetadata {
  abi: number;
  op: string;
  shape: number[];
  entry: string;
  operands: string[];
  operandShapes: Record<string, number[]>;
}

const PAGE = 65536;
const align16 = (n: number) => (n + 15) & ~15;

/** Reads and checks an artifact's metadata, cross-checked with its `jitzoo.abi` custom section. */
export function readMetadata(artifact: KernelArtifact, module?: WebAssembly.Module): KernelMetadata {
  const meta = JSON.parse(artifact.metadataJson) as KernelMetadata;
  if (meta.abi !== 1) throw new Error(`kernel ABI ${meta.abi} is not supported`);
  if (module) {
    const sections = WebAssembly.Module.customSections(module, "jitzoo.abi");
    if (sections.length !== 1 || new TextDecoder().decode(sections[0]) !== artifact.metadataJson) {
      throw new Error("the jitzoo.abi section disagrees with the artifact's metadata");
    }
  }
  return meta;
}

/**
 * One op's operands in one Wasm memory, shared by every kernel of that op: inputs are written
 * once, each kernel is instantiated against the same memory, and C is read back after a run.
 */
export class OperandMemory {
  readonly memory: WebAssembly.Memory;
  readonly offsets: Record<string, number>;
  private readonly cFloats: number;

  constructor(readonly dims: MatMulDims, a: Float32Array, b: Float32Array) {
    const { batch, m, k, n } = dims;
    this.cFloats = batch * m * n;
    const offA = 64;
    const offB = align16(offA + a.byteLength);
    const offC = align16(offB + b.byteLength);
    const end = offC + this.cFloats * 4;
    this.memory = new WebAssembly.Memory({ initial: Math.ceil(end / PAGE) + 1 });
    this.offsets = { A: offA, B: offB, C: offC };
    new Float32Array(this.memory.buffer, offA, a.length).set(a);
    new Float32Array(this.memory.buffer, offB, b.length).set(b);
    if (a.length !== batch * m * k || b.length !== batch * k * n) throw new Error("operand sizes do not match the op");
  }

  /** Fills C with NaN, so that an element a kernel forgets to write shows up as an error. */
  poisonOutput(): void {
    new Float32Array(this.memory.buffer, this.offsets.C, this.cFloats).fill(NaN);
  }

  readOutput(): Float32Array {
    return new Float32Array(this.memory.buffer, this.offsets.C, this.cFloats).slice();
  }
}

/** A kernel ready to call: `run()` executes it once over the shared operands. */
export interface LoadedKernel {
  readonly kernelId: string;
  readonly metadata: KernelMetadata;
  run(): void;
}

/** Compiles and instantiates a Wasm artifact against an op's operand memory. */
export async function loadKernel(artifact: KernelArtifact, operands: OperandMemory): Promise<LoadedKernel> {
  if (artifact.code.case !== "wasm") throw new Error("not a Wasm artifact");
  const module = await WebAssembly.compile(artifact.code.value as Uint8Array<ArrayBuffer>);
  const metadata = readMetadata(artifact, module);
  const instance = await WebAssembly.instantiate(module, { env: { memory: operands.memory } });
  const entry = instance.exports[metadata.entry];
  if (typeof entry !== "function") throw new Error(`kernel exports no function ${metadata.entry}`);
  const args = metadata.operands.map((name) => {
    const offset = operands.offsets[name];
    if (offset === undefined) throw new Error(`unknown operand ${name}`);
    return offset;
  });
  const fn = entry as (...offsets: number[]) => void;
  return { kernelId: artifact.ref?.kernelId ?? "", metadata, run: () => fn(...args) };
}
