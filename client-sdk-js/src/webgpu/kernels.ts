import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opName } from "../ops.js";
import type { OnnxNode } from "../model/onnx.js";
import { broadcastShape, broadcastStrides, sizeOf, stridesOf } from "../model/tensor.js";

/**
 * What a GPU step runs: a server-issued WGSL kernel (docs/kernel-abi.md, "WGSL kernels") or one of
 * the SDK's own data-movement shaders, with the operands it binds, in binding order, and its grid.
 */
export interface GpuProgram {
  /** Kernel id, or `host:` and a digest of the source for the SDK's shaders. */
  readonly id: string;
  readonly source: string;
  readonly entry: string;
  /** Operand names in binding order (the kernel's `operands`; `A`, `B`, `C` for the SDK's). */
  readonly operands: readonly string[];
  readonly dispatch: readonly [number, number, number];
}

/** The metadata of a WGSL kernel, as far as a host needs it. */
interface WgslMetadata {
  op: string;
  shape: number[];
  entry?: string;
  operands: string[];
  operandShapes: Record<string, number[]>;
  dispatch: [number, number, number];
}

/**
 * A server-issued WGSL kernel for `op`, from its artifact; throws when the artifact is not WGSL,
 * its metadata is malformed, or it was made for another op.
 */
export function wgslKernelOf(artifact: KernelArtifact, op: OpSpec): GpuProgram {
  if (artifact.code.case !== "wgsl") throw new Error(`not a WGSL artifact (${artifact.code.case ?? "no code"})`);
  let meta: WgslMetadata;
  try {
    meta = JSON.parse(artifact.metadataJson) as WgslMetadata;
  } catch (e) {
    throw new Error(`the kernel's metadata is not JSON: ${(e as Error).message}`);
  }
  if (meta.op !== opName(op.kind) || String(meta.shape) !== String(op.shape)) {
    throw new Error(`kernel for ${meta.op} [${meta.shape}] offered for ${opName(op.kind)} [${op.shape}]`);
  }
  const grid = meta.dispatch;
  if (!Array.isArray(meta.operands) || !meta.operands.includes("C") || !Array.isArray(grid) || grid.length !== 3
    || !grid.every((n) => Number.isInteger(n) && n >= 1 && n <= 65535)) {
    throw new Error("the kernel's metadata has no operands with C, or no dispatch of three counts in 1..65535");
  }
  return { id: artifact.ref?.kernelId ?? "", source: artifact.code.value, entry: meta.entry ?? "main", operands: meta.operands, dispatch: grid };
}

/** Invocations per workgroup of the SDK's shaders. */
const GROUP = 64;
/** Most workgroups along one dispatch dimension (WebGPU's default limit). */
const MAX_GROUPS = 65535;

const BINARY: Record<string, string> = { Add: "+", Sub: "-", Mul: "*", Div: "/" };

/** The ONNX ops a GPU value can go through when no jitzoo kernel computes them. */
export const GPU_HOST_OPS = new Set(["Transpose", ...Object.keys(BINARY)]);

/**
 * The SDK's shader for a data-movement node whose input is on the GPU: Transpose, and float
 * Add/Sub/Mul/Div with numpy broadcasting (an attention mask added to the scores). Each
 * invocation writes one element of C, reading its inputs at strided offsets baked into the source.
 * Undefined for any other node.
 */
export function hostProgram(node: OnnxNode, shapes: readonly (readonly number[])[]): GpuProgram | undefined {
  if (node.opType === "Transpose") {
    const shape = shapes[0];
    const perm = (node.attrs.perm as number[] | undefined) ?? shape.map((_, i) => shape.length - 1 - i);
    const strides = stridesOf(shape);
    return strided(perm.map((p) => shape[p]), [perm.map((p) => strides[p])], (a) => a);
  }
  const op = BINARY[node.opType];
  if (!op || shapes.length !== 2) return undefined;
  const out = broadcastShape(shapes[0], shapes[1]);
  return strided(out, shapes.map((s) => broadcastStrides(s, out)), (a, b) => `${a} ${op} ${b}`);
}

/** `C[o] = f(A[ia], B[ib])` over C's shape `out`, each input read with its strides per axis of `out`. */
function strided(out: readonly number[], strides: readonly (readonly number[])[], f: (...x: string[]) => string): GpuProgram {
  const n = sizeOf(out);
  const groups = Math.max(1, Math.ceil(n / GROUP));
  const x = Math.min(groups, MAX_GROUPS), y = Math.ceil(groups / x);
  const names = ["A", "B"].slice(0, strides.length);
  const lines = [
    ...names.map((name, i) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<f32>;`),
    `@group(0) @binding(${names.length}) var<storage, read_write> C: array<f32>;`,
    `@compute @workgroup_size(${GROUP})`,
    "fn main(@builtin(global_invocation_id) g: vec3<u32>) {",
    `  let o = g.x + g.y * ${x * GROUP}u;`,
    `  if (o >= ${n}u) { return; }`,
    "  var r = o;",
    ...names.map((name) => `  var i${name} = 0u;`),
  ];
  for (let axis = out.length - 1; axis >= 0; axis--) {
    if (out[axis] === 1) continue;
    lines.push(`  let d${axis} = r % ${out[axis]}u;`, `  r = r / ${out[axis]}u;`);
    names.forEach((name, i) => { if (strides[i][axis]) lines.push(`  i${name} += d${axis} * ${strides[i][axis]}u;`); });
  }
  lines.push(`  C[o] = ${f(...names.map((name) => `${name}[i${name}]`))};`, "}");
  const source = lines.join("\n") + "\n";
  return { id: `host:${digest(source)}`, source, entry: "main", operands: [...names, "C"], dispatch: [x, y, 1] };
}

/** A short digest of a source (FNV-1a, 32 bits, twice): names the SDK's shaders in the pipeline cache. */
function digest(text: string): string {
  let h1 = 0x811c9dc5, h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}
