import type { KernelArtifact, OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opName } from "../ops.js";
import { rotates } from "../graph/host/fused.js";
import type { OnnxNode } from "../graph/onnx.js";
import { broadcastShape, broadcastStrides, sizeOf, stridesOf } from "../graph/tensor.js";

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

/**
 * The SDK's shader for a node whose input is on the GPU and that no jitzoo kernel computes:
 * Transpose; Expand (grouped-query attention's K and V over the heads); float Add/Sub/Mul/Div
 * with numpy broadcasting; and the steps the fuser makes of exporters' patterns (RMSNorm, rotary
 * rotate-half, the softmax's NaN guard), so that a decoder's layer stays on the GPU. Each shader
 * binds the node's float inputs as A, B, D (in the node's order; Expand's shape is baked in) and
 * its output as C. Undefined for any other node.
 */
export function hostProgram(node: OnnxNode, shapes: readonly (readonly number[])[], outShape: readonly number[]): GpuProgram | undefined {
  if (node.opType === "Transpose") {
    const shape = shapes[0];
    const perm = (node.attrs.perm as number[] | undefined) ?? shape.map((_, i) => shape.length - 1 - i);
    const strides = stridesOf(shape);
    return strided(perm.map((p) => shape[p]), [perm.map((p) => strides[p])], (a) => a);
  }
  if (node.opType === "Expand") return strided(outShape, [broadcastStrides(shapes[0], outShape)], (a) => a);
  const fused = FUSED_STEPS[node.opType];
  if (fused) return fused(node, shapes);
  const op = BINARY[node.opType];
  if (!op || shapes.length !== 2) return undefined;
  const out = broadcastShape(shapes[0], shapes[1]);
  return strided(out, shapes.map((s) => broadcastStrides(s, out)), (a, b) => `${a} ${op} ${b}`);
}

/** A shader over C's `n` elements (or rows): `body` computes index `o` of them, `inputs` are bound read-only before C. */
function shader(n: number, inputs: readonly string[], body: readonly string[]): GpuProgram {
  const groups = Math.max(1, Math.ceil(n / GROUP));
  const x = Math.min(groups, MAX_GROUPS), y = Math.ceil(groups / x);
  const source = [
    ...inputs.map((name, i) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<f32>;`),
    `@group(0) @binding(${inputs.length}) var<storage, read_write> C: array<f32>;`,
    `@compute @workgroup_size(${GROUP})`,
    "fn main(@builtin(global_invocation_id) g: vec3<u32>) {",
    `  let o = g.x + g.y * ${x * GROUP}u;`,
    `  if (o >= ${n}u) { return; }`,
    ...body.map((line) => `  ${line}`),
    "}",
  ].join("\n") + "\n";
  return { id: `host:${digest(source)}`, source, entry: "main", operands: [...inputs, "C"], dispatch: [x, y, 1] };
}

/** A float as a WGSL f32 expression (exponent forms included). */
const f32 = (x: number): string => `f32(${Number.isInteger(x) ? x.toFixed(1) : String(Math.fround(x))})`;

/** The fuser's own steps (`model/host/fused.ts`) as shaders, where their shapes allow. */
const FUSED_STEPS: Record<string, (node: OnnxNode, shapes: readonly (readonly number[])[]) => GpuProgram | undefined> = {
  // one invocation per row: the sum of squares, then the row scaled
  SimplifiedLayerNormalization(node, [x, scale]) {
    const axis = (node.attrs.axis as number | undefined) ?? -1;
    const cols = x.at(-1)!;
    if ((axis !== -1 && axis !== x.length - 1) || sizeOf(scale) !== cols) return undefined;
    return shader(sizeOf(x) / cols, ["A", "B"], [
      `let at = o * ${cols}u;`,
      "var squares = 0.0;",
      `for (var j = 0u; j < ${cols}u; j++) { let v = A[at + j]; squares += v * v; }`,
      `let r = 1.0 / sqrt(squares / ${f32(cols)} + ${f32((node.attrs.epsilon as number | undefined) ?? 1e-5)});`,
      `for (var j = 0u; j < ${cols}u; j++) { C[at + j] = A[at + j] * r * B[j]; }`,
    ]);
  },
  "jitzoo.RotateHalf"(_node, [x, cos, sin]) {
    if (!rotates(x, cos, sin)) return undefined;
    const cols = x.at(-1)!, period = sizeOf(cos), half = cols / 2;
    return shader(sizeOf(x), ["A", "B", "D"], [
      `let j = o % ${cols}u;`,
      `let p = o % ${period}u;`,
      `var rotated = 0.0;`,
      `if (j < ${half}u) { rotated = -A[o + ${half}u]; } else { rotated = A[o - ${half}u]; }`,
      "C[o] = A[o] * B[p] + rotated * D[p];",
    ]);
  },
  // NaN by its bits: WGSL lets an implementation assume no NaN in comparisons
  "jitzoo.ReplaceNaN": (_node, [x]) => shader(sizeOf(x), ["A", "B"], [
    "let a = A[o];",
    "C[o] = select(a, B[0], (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u);",
  ]),
};

/** `C[o] = f(A[ia], B[ib])` over C's shape `out`, each input read with its strides per axis of `out`. */
function strided(out: readonly number[], strides: readonly (readonly number[])[], f: (...x: string[]) => string): GpuProgram {
  const names = ["A", "B"].slice(0, strides.length);
  const body = ["var r = o;", ...names.map((name) => `var i${name} = 0u;`)];
  for (let axis = out.length - 1; axis >= 0; axis--) {
    if (out[axis] === 1) continue;
    body.push(`let d${axis} = r % ${out[axis]}u;`, `r = r / ${out[axis]}u;`);
    names.forEach((name, i) => { if (strides[i][axis]) body.push(`i${name} += d${axis} * ${strides[i][axis]}u;`); });
  }
  body.push(`C[o] = ${f(...names.map((name) => `${name}[i${name}]`))};`);
  return shader(sizeOf(out), names, body);
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
