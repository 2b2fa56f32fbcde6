import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opName, operandShapes, referenceOp } from "../ops.js";
import { readMetadata } from "../wasm-executor.js";
import type { Arena } from "./arena.js";

/** Where an operand lies in the arena. */
export interface Operand {
  readonly offset: number;
  readonly floats: number;
}

/** An op's operands by ABI name (A, B, C, Bias, ...), and which of them are constants (weights). */
export interface Bindings {
  readonly operands: Readonly<Record<string, Operand>>;
  readonly constant: ReadonlySet<string>;
}

/** One implementation of one op, callable over any operands in the arena. */
export interface OpKernel {
  /** The server-issued kernel id, or `reference`. */
  readonly id: string;
  readonly source: "reference" | "wasm";
  /** Prepares calls over these operands (a packing kernel packs constant B here, once); returns the call. */
  bind(bindings: Bindings): () => void;
  /** Frees what `bind` took from the arena (packed copies). The kernel must not be called after. */
  release(): void;
}

/** The SDK's float64 reference as a kernel: always right, slow; what runs when no kernel has been served. */
export function referenceKernel(op: OpSpec, arena: Arena): OpKernel {
  const names = operandShapes(op).map(([name]) => name).filter((n) => n !== "C");
  return {
    id: "reference",
    source: "reference",
    bind({ operands }) {
      return () => {
        const inputs = Object.fromEntries(names.map((n) => [n, arena.f32(operands[n].offset, operands[n].floats)]));
        arena.f32(operands.C.offset, operands.C.floats).set(referenceOp(op, inputs));
      };
    },
    release: () => undefined,
  };
}

/**
 * A server-generated Wasm kernel (ABI v1) instantiated over the arena's memory. Throws when
 * the artifact is not Wasm, does not compile, or was made for another op.
 */
export async function wasmKernel(artifact: KernelArtifact, op: OpSpec, arena: Arena): Promise<OpKernel> {
  if (artifact.code.case !== "wasm") throw new Error("not a Wasm artifact");
  const module = await WebAssembly.compile(artifact.code.value as Uint8Array<ArrayBuffer>);
  const meta = readMetadata(artifact, module);
  if (meta.op !== opName(op.kind) || meta.shape.join(",") !== op.shape.join(",")) {
    throw new Error(`kernel for ${meta.op} [${meta.shape}] offered for ${opName(op.kind)} [${op.shape}]`);
  }
  const instance = await WebAssembly.instantiate(module, { env: { memory: arena.memory } });
  const entry = instance.exports[meta.entry];
  if (typeof entry !== "function") throw new Error(`kernel exports no function ${meta.entry}`);
  const pack = meta.pack && instance.exports[meta.pack.entry];
  if (meta.pack && (typeof pack !== "function" || !(meta.pack.floats >= 1) || meta.pack.operand !== "B")) {
    throw new Error(`kernel's pack entry ${meta.pack.entry} is missing or malformed`);
  }
  const taken: { offset: number; bytes: number }[] = [];
  const call = entry as (...offsets: number[]) => void;
  return {
    id: artifact.ref?.kernelId ?? "",
    source: "wasm",
    bind({ operands, constant }) {
      const args = meta.operands.map((name) => {
        const operand = operands[name];
        if (!operand) throw new Error(`kernel reads operand ${name}, which the op does not have`);
        return operand.offset;
      });
      if (!meta.pack) return () => call(...args);
      const bytes = meta.pack.floats * 4;
      const packed = arena.alloc(bytes);
      taken.push({ offset: packed, bytes });
      const at = meta.operands.indexOf("B"), from = args[at];
      const packB = pack as (from: number, to: number) => void;
      args[at] = packed;
      if (constant.has("B")) {
        packB(from, packed);
        return () => call(...args);
      }
      return () => {
        packB(from, packed);
        call(...args);
      };
    },
    release() {
      for (const t of taken.splice(0)) arena.release(t.offset, t.bytes);
    },
  };
}
