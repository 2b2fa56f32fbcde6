import { create, getOption } from "@bufbuild/protobuf";
import { ConvWindowSchema, EpilogueKind, EpilogueKindSchema, OpKind, OpKindSchema, OpSpecSchema, op_rank, type OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { halfToFloat, halfWords, roundToHalf } from "./graph/tensor.js";
import { erf, roundHalfEven, seededFloats } from "./reference.js";

/**
 * What each jitzoo op computes (docs/kernel-abi.md): its ABI name, operands and their shapes,
 * flops, a key that tells two ops apart, and the reference every kernel is checked against.
 */

/** The epsilon of layer_norm when the op does not set one (OpSpec.epsilon = 0). */
export const DEFAULT_LAYER_NORM_EPSILON = 1e-5;

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/**
 * Each op kind a kernel exists for, read once from kernel.proto, the one source the Java side
 * (OpRules) reads too: its rank (the `op_rank` option) and its ABI name (the value's name without
 * OP_KIND_, in lower case).
 */
const KINDS = new Map<OpKind, { rank: number; name: string }>(OpKindSchema.values
  .filter((v) => getOption(v, op_rank) > 0)
  .map((v) => [v.number as OpKind, { rank: getOption(v, op_rank), name: v.name.slice("OP_KIND_".length).toLowerCase() }]));

/** Op kinds by ABI name. */
const KIND_BY_NAME = new Map([...KINDS].map(([kind, { name }]) => [name, kind]));

/** The ABI name of an op kind, as in kernel metadata and the zoo. */
export function opName(kind: OpKind): string {
  const known = KINDS.get(kind);
  if (!known) throw new Error(`unsupported op kind ${OpKind[kind] ?? kind}`);
  return known.name;
}

/** A product over quantized weights: the int8 matmul or the 4-bit one. */
export const isQuantized = (op: OpSpec) => op.kind === OpKind.MATMUL_INT8 || op.kind === OpKind.MATMUL_Q4;

/** A product whose weights are held compact (int8, 4-bit, float16) and widened in the kernel, with a Work scratch. */
export const hasCompactWeights = (op: OpSpec) => isQuantized(op) || op.kind === OpKind.MATMUL_F16;

/** A product: a float (batch) matmul or one over compact weights, whose C is rows of N with the matmul epilogue. */
const isMatmul = (op: OpSpec) => op.kind === OpKind.MATMUL || op.kind === OpKind.BATCH_MATMUL || hasCompactWeights(op);

/** Widest column tile of a conv's register tile: the outputs a Work row holds per window tap (OpRules.MAX_CONV_TILE_COLUMNS). */
const MAX_CONV_TILE_COLUMNS = 16;

/** A convolution's dimensions, window (defaults spelled out) and output size (docs/kernel-abi.md, `conv`). */
export interface ConvGeometry {
  n: number; c: number; h: number; w: number; m: number; kh: number; kw: number;
  strides: [number, number]; dilations: [number, number];
  /** Top, left, bottom, right. */
  pads: [number, number, number, number];
  group: number;
  oh: number; ow: number;
  /** Window taps per output: C / group · KH · KW. */
  taps: number;
}

/** Outputs along one axis: floor((size + pads − dilation (kernel − 1) − 1) / stride) + 1, 0 when the window does not fit (OpRules.outputExtent). */
const outputExtent = (size: number, kernel: number, stride: number, dilation: number, before: number, after: number): number => {
  const span = dilation * (kernel - 1) + 1, padded = size + before + after;
  return padded < span ? 0 : Math.floor((padded - span) / stride) + 1;
};

/**
 * Floats of one row of a conv's Work, one row per output row (OpRules.convWorkRow): a tile's
 * gathered windows, taps by at most 16 outputs; a depthwise conv's (one input and one output
 * channel per group) the padded input rows a band of output rows reads, max((KH − 1)·dh + 1, sh)
 * rows of W + pads, rounded up to a multiple of sw (a row is stored in sw phases).
 */
export function convWorkRow(g: ConvGeometry): number {
  if (g.group === g.c && g.group === g.m) {
    const padded = g.w + g.pads[1] + g.pads[3], sw = g.strides[1];
    return Math.max((g.kh - 1) * g.dilations[0] + 1, g.strides[0]) * Math.ceil(padded / sw) * sw; // sw phases of ⌈padded / sw⌉
  }
  return g.taps * Math.min(g.ow, MAX_CONV_TILE_COLUMNS);
}

/** A conv op's geometry; its window read from OpSpec.conv with a stride, dilation or group of 0 as 1. */
export function convGeometry(op: OpSpec): ConvGeometry {
  const [n, c, h, w, m, kh, kw] = op.shape;
  const win = op.conv ?? create(ConvWindowSchema, {});
  const strides: [number, number] = [win.strideH || 1, win.strideW || 1], dilations: [number, number] = [win.dilationH || 1, win.dilationW || 1];
  const pads: [number, number, number, number] = [win.padTop, win.padLeft, win.padBottom, win.padRight];
  const group = win.group || 1;
  return {
    n, c, h, w, m, kh, kw, strides, dilations, pads, group, taps: (c / group) * kh * kw,
    oh: outputExtent(h, kh, strides[0], dilations[0], pads[0], pads[2]), ow: outputExtent(w, kw, strides[1], dilations[1], pads[1], pads[3]),
  };
}

/** An operand's element type: float32 unless {@link operandTypes} says otherwise. */
export type OperandType = "float32" | "int8" | "uint8" | "int16" | "float16";

/** Values of an operand, typed as {@link operandTypes} says (float16: its bits). */
export type OperandValues = Float32Array | Int8Array | Uint8Array | Int16Array | Uint16Array;

/**
 * The operands that are not float32 (docs/kernel-abi.md, the metadata's `operandTypes`): the int8
 * matmul's B (int8 weights) and Work (its quantized A, int16); the 4-bit matmul's B and BZero
 * (bytes of two 4-bit values); the float16-weight matmul's B (float16 bits).
 */
export function operandTypes(op: OpSpec): Readonly<Record<string, OperandType>> {
  if (op.kind === OpKind.MATMUL_INT8) return { B: "int8", Work: "int16" };
  if (op.kind === OpKind.MATMUL_F16) return { B: "float16" };
  return op.kind === OpKind.MATMUL_Q4 ? { B: "uint8", BZero: "uint8" } : {};
}

/** Values of K per scale of a 4-bit matmul's B (MatMulNBits' block_size; OpRules.Q4_BLOCK). */
export const Q4_BLOCK = 32;

/** A 4-bit matmul's blocks per column of B, and the bytes of a column's zero points (two blocks a byte). */
export const q4Layout = (k: number) => ({ blocks: Math.ceil(k / Q4_BLOCK), zeroBytes: Math.ceil(Math.ceil(k / Q4_BLOCK) / 2) });

/**
 * Operands a kernel writes besides C, whose contents matter neither before nor after (docs/kernel-abi.md,
 * `scratch`): a compact-weight product's Work (the int8 matmul's A quantized, the 4-bit and float16
 * ones' weights widened).
 */
export function scratchOperands(op: OpSpec): readonly string[] {
  return hasCompactWeights(op) || op.kind === OpKind.CONV ? ["Work"] : [];
}

/** The operands a kernel reads: all but C and its scratch. */
export const inputNames = (op: OpSpec): string[] =>
  operandShapes(op).map(([name]) => name).filter((n) => n !== "C" && !scratchOperands(op).includes(n));

/** Bytes per element of an operand type. */
export const bytesOf = (type: OperandType): number => (type === "float32" ? 4 : type === "int16" || type === "float16" ? 2 : 1);

/** i16s per row of an int8 matmul's Work: K rounded up to a multiple of 8. */
const workRow = (k: number) => Math.ceil(k / 8) * 8;

/** Named dimensions of a (batch) matmul; `batch` is 1 for a plain matmul. */
export interface MatMulDims {
  batch: number;
  m: number;
  k: number;
  n: number;
}

/** Throws unless the op's shape has its kind's rank of positive integers. */
export function checkOp(op: OpSpec): void {
  const rank = KINDS.get(op.kind)?.rank;
  if (rank === undefined) throw new Error(`unsupported op kind ${OpKind[op.kind] ?? op.kind}`);
  if (op.shape.some((d) => !Number.isInteger(d) || d < 1)) throw new Error(`every dimension must be at least 1: [${op.shape.join(",")}]`);
  if (op.shape.length !== rank) throw new Error(`unsupported op ${OpKind[op.kind]} with shape [${op.shape.join(",")}]`);
  if (op.kind === OpKind.CONV) {
    const g = convGeometry(op);
    if (g.c % g.group || g.m % g.group) throw new Error(`a conv's ${g.c} input and ${g.m} output channels must both divide into its ${g.group} groups`);
    if (g.oh < 1 || g.ow < 1) throw new Error(`the conv's window (${g.kh}x${g.kw}, dilated and padded) does not fit its ${g.h}x${g.w} input`);
  }
}

/** Reads [M,K,N] (matmul) or [batch,M,K,N] (batch matmul); throws on anything else. */
export function dimsOf(op: OpSpec): MatMulDims {
  checkOp(op);
  const s = op.shape;
  if (op.kind === OpKind.MATMUL || hasCompactWeights(op)) return { batch: 1, m: s[0], k: s[1], n: s[2] };
  if (op.kind === OpKind.BATCH_MATMUL) return { batch: s[0], m: s[1], k: s[2], n: s[3] };
  throw new Error(`unsupported op ${OpKind[op.kind]} with shape [${s.join(",")}]`);
}

/** Floating-point operations of one run (2·batch·M·K·N for matmuls; 1, 4, 7 per element for add/mul, softmax, layer_norm). */
export function flopsOf(op: OpSpec): number {
  if (isMatmul(op)) {
    const d = dimsOf(op);
    return 2 * d.batch * d.m * d.k * d.n;
  }
  checkOp(op);
  if (op.kind === OpKind.CONV) {
    const g = convGeometry(op);
    return 2 * g.n * g.m * g.oh * g.ow * g.taps;
  }
  const elements = op.shape.reduce((a, b) => a * b, 1);
  return elements * (op.kind === OpKind.SOFTMAX ? 4 : op.kind === OpKind.LAYER_NORM ? 7 : 1);
}

/** The layer_norm epsilon an op asks for. */
export const epsilonOf = (op: OpSpec): number => op.epsilon || DEFAULT_LAYER_NORM_EPSILON;

/** Every operand's shape, by ABI name, in the entry's parameter order (inputs, then C, per docs/kernel-abi.md). */
export function operandShapes(op: OpSpec): [string, number[]][] {
  checkOp(op);
  const s = op.shape;
  switch (op.kind) {
    case OpKind.ADD: case OpKind.MUL: return [["A", [s[0]]], ["B", [s[0]]], ["C", [s[0]]]];
    case OpKind.SOFTMAX: return [["A", [s[0], s[1]]], ["C", [s[0], s[1]]]];
    case OpKind.LAYER_NORM: return [["A", [s[0], s[1]]], ["Gamma", [s[1]]], ["Beta", [s[1]]], ["C", [s[0], s[1]]]];
    case OpKind.MATMUL_INT8: {
      const [m, k, n] = s;
      return [["A", [m, k]], ["B", [k, n]], ["BScale", [n]], ["C", [m, n]], ["Work", [m, workRow(k)]], ...epilogueOperands(op, [m, n])];
    }
    case OpKind.MATMUL_F16: {
      const [m, k, n] = s;
      return [["A", [m, k]], ["B", [k, n]], ["C", [m, n]], ["Work", [m, k]], ...epilogueOperands(op, [m, n])];
    }
    case OpKind.CONV: {
      const g = convGeometry(op), c = [g.n, g.m, g.oh, g.ow];
      return [["A", [g.n, g.c, g.h, g.w]], ["B", [g.m, g.c / g.group, g.kh, g.kw]], ["C", c],
        ["Work", [g.n * g.oh, convWorkRow(g)]], ...epilogueOperands(op, c, g.m)];
    }
    case OpKind.MATMUL_Q4: {
      const [m, k, n] = s;
      const { blocks, zeroBytes } = q4Layout(k);
      return [["A", [m, k]], ["B", [n, blocks * Q4_BLOCK / 2]], ["BScale", [n, blocks]], ["BZero", [n, zeroBytes]], ["C", [m, n]],
        ["Work", [m, blocks * Q4_BLOCK]], ...epilogueOperands(op, [m, n])];
    }
    default: {
      const { batch, m, k, n } = dimsOf(op);
      const lead = op.kind === OpKind.BATCH_MATMUL ? [batch] : [];
      const b = op.transposeB ? [n, k] : [k, n];
      return [["A", [...lead, m, k]], ["B", op.broadcastB ? b : [...lead, ...b]], ["C", [...lead, m, n]], ...epilogueOperands(op, [...lead, m, n])];
    }
  }
}

/** The operands a product's epilogue reads: Bias [N] (a conv's [M], per output channel), Residual shaped like C. */
function epilogueOperands(op: OpSpec, c: number[], biasLength = c.at(-1)!): [string, number[]][] {
  const out: [string, number[]][] = [];
  if (op.epilogue.some((e) => e.kind === EpilogueKind.BIAS)) out.push(["Bias", [biasLength]]);
  if (op.epilogue.some((e) => e.kind === EpilogueKind.RESIDUAL)) out.push(["Residual", c]);
  return out;
}

/** An epilogue step's label (`gelu_tanh`), from kernel.proto's enum as the Java side reads it (`OpRules.label`). */
const epilogueLabel = (kind: EpilogueKind): string => EpilogueKind[kind].toLowerCase();

/** Epilogue kinds by label. */
const EPILOGUE_BY_LABEL = new Map(EpilogueKindSchema.values.filter((v) => v.number !== EpilogueKind.UNSPECIFIED)
  .map((v) => [epilogueLabel(v.number as EpilogueKind), v.number as EpilogueKind]));

/** The fields of a kernel's ABI metadata that say what it computes (docs/kernel-abi.md). */
export interface OpMetadata {
  op: string;
  shape: number[];
  transposeB?: boolean;
  broadcastB?: boolean;
  epilogue?: { kind: string; value?: number }[];
  epsilon?: number;
  /** A conv's window. */
  window?: { strides: number[]; dilations: number[]; pads: number[]; group: number };
}

/**
 * The op a kernel's metadata describes: what a host checks the kernel against with
 * {@link referenceOp}, in the browser and in the harness alike.
 */
export function opOfMetadata(meta: OpMetadata): OpSpec {
  const kind = KIND_BY_NAME.get(meta.op);
  if (kind === undefined) throw new Error(`unknown op '${meta.op}' in kernel metadata`);
  const epilogue = (meta.epilogue ?? []).map((e) => {
    const found = EPILOGUE_BY_LABEL.get(e.kind);
    if (found === undefined) throw new Error(`unknown epilogue step '${e.kind}' in kernel metadata`);
    return { kind: found, value: e.value ?? 0 };
  });
  const w = meta.window;
  const conv = w && create(ConvWindowSchema, {
    strideH: w.strides[0], strideW: w.strides[1], dilationH: w.dilations[0], dilationW: w.dilations[1],
    padTop: w.pads[0], padLeft: w.pads[1], padBottom: w.pads[2], padRight: w.pads[3], group: w.group,
  });
  return create(OpSpecSchema, {
    kind, shape: meta.shape, transposeB: !!meta.transposeB, broadcastB: !!meta.broadcastB, epilogue, epsilon: meta.epsilon ?? 0, conv,
  });
}

/**
 * Every field that changes what an op computes, as text (`matmul|384x768x768|transposeB|bias,gelu_erf`,
 * `layer_norm|128x768|epsilon=1.0E-12`): the gateway's and the zoo's key of the op (`OpRules.key`
 * in proto/…/rules writes the same; both are held to proto/src/test/resources/op-keys.tsv). A
 * layer norm's default epsilon is no epsilon; a scale is written as the wire carries it (float32).
 */
export function opKey(op: OpSpec): string {
  let key = `${opName(op.kind)}|${op.shape.join("x")}`;
  if (op.transposeB) key += "|transposeB";
  if (op.broadcastB) key += "|broadcastB";
  if (op.kind === OpKind.CONV) key += windowKey(convGeometry(op));
  if (op.epilogue.length) key += "|" + op.epilogue.map((e) => epilogueLabel(e.kind) + (e.kind === EpilogueKind.SCALE ? `:${keyNumber(e.value)}` : "")).join(",");
  const epsilon = Math.fround(op.epsilon);
  if (epsilon !== 0 && epsilon !== Math.fround(DEFAULT_LAYER_NORM_EPSILON)) key += `|epsilon=${keyNumber(epsilon)}`;
  return key;
}

/** A conv window's part of a key: what differs from the defaults (`|stride=2x2|dilation=2x2|pads=1,1,1,1|group=64`), as OpRules writes it. */
function windowKey({ strides, dilations, pads, group }: ConvGeometry): string {
  let key = "";
  if (strides.some((s) => s !== 1)) key += `|stride=${strides.join("x")}`;
  if (dilations.some((d) => d !== 1)) key += `|dilation=${dilations.join("x")}`;
  if (pads.some((p) => p !== 0)) key += `|pads=${pads.join(",")}`;
  if (group !== 1) key += `|group=${group}`;
  return key;
}

/**
 * A float32 as keys write it (`OpRules.number` in Java): the shortest decimal that reads back as
 * the same float (through a double, ties rounded away from zero), laid out as Java's
 * `Float.toString` lays it out (`0.125`, `1.0E-12`).
 */
export function keyNumber(value: number): string {
  const v = Math.fround(value), abs = Math.abs(v);
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  let shortest = abs.toPrecision(9);
  for (let precision = 1; precision <= 9; precision++) {
    const text = abs.toPrecision(precision);
    if (Math.fround(Number(text)) === abs) {
      shortest = text;
      break;
    }
  }
  const magnitude = Number(shortest);
  const [mantissa, power] = magnitude.toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exponent = Number(power);
  let text: string;
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    text = exponent >= 0
      ? `${digits.slice(0, exponent + 1).padEnd(exponent + 1, "0")}.${digits.slice(exponent + 1) || "0"}`
      : `0.${"0".repeat(-exponent - 1)}${digits}`;
  } else {
    text = `${digits[0]}.${digits.slice(1) || "0"}E${exponent}`;
  }
  return v < 0 ? `-${text}` : text;
}

/** gelu, erf form, in float64. */
export const geluErf = (x: number): number => 0.5 * x * (1 + erf(x / Math.SQRT2));
/** gelu, tanh form, in float64. */
export const geluTanh = (x: number): number => 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)));
/** silu (swish), x · sigmoid(x), in float64. */
export const silu = (x: number): number => x / (1 + Math.exp(-x));

/** C viewed as rows: `rows` runs of `cols` (N for matmuls, the row for softmax and layer_norm, all of it for add and mul). */
export function outputRows(op: OpSpec): { rows: number; cols: number } {
  if (isMatmul(op)) {
    const { batch, m, n } = dimsOf(op);
    return { rows: batch * m, cols: n };
  }
  checkOp(op);
  if (op.kind === OpKind.CONV) {
    const g = convGeometry(op);
    return { rows: g.n * g.m * g.oh, cols: g.ow };
  }
  return op.shape.length === 2 ? { rows: op.shape[0], cols: op.shape[1] } : { rows: 1, cols: op.shape[0] };
}

/**
 * The oracle: what an op's C must be, computed in float64 and rounded to float32 once per
 * element. `operands` holds every input by ABI name (A, B, Bias, Residual, Gamma, Beta). With
 * `rows`, only those rows of C (see {@link outputRows}), one after another.
 */
export function referenceOp(op: OpSpec, operands: Readonly<Record<string, OperandValues>>, rows?: readonly number[]): Float32Array {
  const inputs = inputNames(op);
  for (const [name, shape] of operandShapes(op)) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (inputs.includes(name) && operands[name]?.length !== size) throw new Error(`operand ${name} has ${operands[name]?.length} floats, [${shape}] needs ${size}`);
  }
  const all = rows ?? [...Array(outputRows(op).rows).keys()];
  const floats = operands as Readonly<Record<string, Float32Array>>;
  const { A: a, B: b } = floats;
  switch (op.kind) {
    case OpKind.ADD: return a.map((x, i) => x + b[i]);
    case OpKind.MUL: return a.map((x, i) => Math.fround(x * b[i]));
    case OpKind.SOFTMAX: case OpKind.LAYER_NORM: return referenceRows(op, floats, all);
    case OpKind.MATMUL_INT8: return referenceMatmulInt8(op, operands, all);
    case OpKind.MATMUL_Q4: return referenceMatmulQ4(op, operands, all);
    case OpKind.CONV: return referenceConv(op, floats, all);
    case OpKind.MATMUL_F16: {
      const b = Float32Array.from(operands.B as Uint16Array, halfToFloat);
      return referenceMatmul({ ...op, kind: OpKind.MATMUL }, { ...floats, B: b }, all);
    }
    default: return referenceMatmul(op, floats, all);
  }
}

function referenceRows(op: OpSpec, operands: Readonly<Record<string, Float32Array>>, rows: readonly number[]): Float32Array {
  const cols = op.shape[1];
  const { A: a, Gamma: gamma, Beta: beta } = operands;
  const c = new Float32Array(rows.length * cols);
  const eps = epsilonOf(op);
  rows.forEach((r, out) => {
    const at = r * cols, to = out * cols;
    if (op.kind === OpKind.SOFTMAX) {
      let max = -Infinity, sum = 0;
      for (let j = 0; j < cols; j++) max = Math.max(max, a[at + j]);
      for (let j = 0; j < cols; j++) sum += Math.exp(a[at + j] - max);
      for (let j = 0; j < cols; j++) c[to + j] = Math.exp(a[at + j] - max) / sum;
    } else {
      let mean = 0, variance = 0;
      for (let j = 0; j < cols; j++) mean += a[at + j];
      mean /= cols;
      for (let j = 0; j < cols; j++) variance += (a[at + j] - mean) ** 2;
      const inv = 1 / Math.sqrt(variance / cols + eps);
      for (let j = 0; j < cols; j++) c[to + j] = (a[at + j] - mean) * inv * gamma[j] + beta[j];
    }
  });
  return c;
}

function referenceMatmul(op: OpSpec, operands: Readonly<Record<string, Float32Array>>, rows: readonly number[]): Float32Array {
  const { m, k, n } = dimsOf(op);
  const { A: a, B: b, Bias: bias, Residual: residual } = operands;
  const c = new Float32Array(rows.length * n);
  const acc = new Float64Array(n);
  // B[k, j] of batch t, whatever its layout
  const bStride = op.broadcastB ? 0 : k * n;
  const [bk, bj] = op.transposeB ? [1, k] : [n, 1];
  rows.forEach((r, out) => {
    const t = Math.floor(r / m);
    const ai = r * k;
    if (bj === 1) {
      // B row by row: each row of B scaled into the sums (contiguous)
      acc.fill(0);
      for (let p = 0; p < k; p++) {
        const av = a[ai + p], bp = t * bStride + p * bk;
        for (let j = 0; j < n; j++) acc[j] += av * b[bp + j];
      }
    } else {
      // Bᵀ: each sum a dot product of two contiguous rows, over p in the same order as above
      for (let j = 0, bp = t * bStride; j < n; j++, bp += bj) {
        let sum = 0;
        for (let p = 0; p < k; p++) sum += a[ai + p] * b[bp + p];
        acc[j] = sum;
      }
    }
    epilogue(op, acc, r * n, bias, residual, c.subarray(out * n, out * n + n));
  });
  return c;
}

/**
 * ONNX's Conv by its definition, row by row of C viewed as `[N·M·OH, OW]` (row r: image
 * r / (M·OH), output channel r / OH mod M, output row r mod OH), summed in float64, then the
 * epilogue (the bias per output channel).
 */
function referenceConv(op: OpSpec, operands: Readonly<Record<string, Float32Array>>, rows: readonly number[]): Float32Array {
  const g = convGeometry(op);
  const { A: x, B: w, Bias: bias, Residual: residual } = operands;
  const cg = g.c / g.group, mg = g.m / g.group;
  const c = new Float32Array(rows.length * g.ow);
  const acc = new Float64Array(g.ow);
  const rowBias = bias && new Float32Array(g.ow);
  rows.forEach((r, out) => {
    const y = r % g.oh, channel = Math.floor(r / g.oh) % g.m, image = Math.floor(r / (g.oh * g.m)), first = Math.floor(channel / mg) * cg;
    acc.fill(0);
    for (let ci = 0; ci < cg; ci++) {
      for (let i = 0; i < g.kh; i++) {
        const iy = y * g.strides[0] - g.pads[0] + i * g.dilations[0];
        if (iy < 0 || iy >= g.h) continue;
        const xRow = ((image * g.c + first + ci) * g.h + iy) * g.w;
        for (let j = 0; j < g.kw; j++) {
          const tap = w[((channel * cg + ci) * g.kh + i) * g.kw + j];
          for (let t = 0; t < g.ow; t++) {
            const ix = t * g.strides[1] - g.pads[1] + j * g.dilations[1];
            if (ix >= 0 && ix < g.w) acc[t] += x[xRow + ix] * tap;
          }
        }
      }
    }
    rowBias?.fill(bias[channel]);
    epilogue(op, acc, r * g.ow, rowBias, residual, c.subarray(out * g.ow, (out + 1) * g.ow));
  });
  return c;
}

/**
 * The int8 matmul as onnxruntime computes its dynamic int8 files: A quantized as
 * DynamicQuantizeLinear does ({@link dynamicQuantize}), the products summed exactly (integers, in
 * float64), × A's scale · BScale[j], then the epilogue.
 */
function referenceMatmulInt8(op: OpSpec, operands: Readonly<Record<string, OperandValues>>, rows: readonly number[]): Float32Array {
  const { m, k, n } = dimsOf(op);
  const { B: b, BScale: bScale } = operands;
  const { values: q, scale } = dynamicQuantize(operands.A as Float32Array, m * k);
  const c = new Float32Array(rows.length * n);
  const acc = new Float64Array(n);
  rows.forEach((r, out) => {
    acc.fill(0);
    for (let p = 0; p < k; p++) {
      const av = q[r * k + p], bp = p * n;
      for (let j = 0; j < n; j++) acc[j] += av * b[bp + j];
    }
    for (let j = 0; j < n; j++) acc[j] *= scale * bScale[j];
    epilogue(op, acc, r * n, operands.Bias as Float32Array, operands.Residual as Float32Array, c.subarray(out * n, out * n + n));
  });
  return c;
}

/**
 * The 4-bit matmul as MatMulNBits defines it: B as the file stores it (`[N, blocks, 16]` bytes, k
 * = 2i in byte i's low nibble, 2i + 1 in its high one), each weight (q − zero) × scale of its
 * column's block, summed in float64, then the epilogue.
 */
function referenceMatmulQ4(op: OpSpec, operands: Readonly<Record<string, OperandValues>>, rows: readonly number[]): Float32Array {
  const { k, n } = dimsOf(op);
  const w = dequantizeQ4(k, n, operands.B as Uint8Array, operands.BScale as Float32Array, operands.BZero as Uint8Array);
  return referenceMatmul({ ...op, kind: OpKind.MATMUL, epilogue: op.epilogue }, { ...(operands as Record<string, Float32Array>), B: w }, rows);
}

/** A 4-bit B (`[N, blocks, 16]` bytes, 4-bit zero points) as float32 `[K, N]`: {@link dequantizeBlocks} of 4 bits in blocks of 32. */
export const dequantizeQ4 = (k: number, n: number, b: Uint8Array, scales: Float32Array, zeros: Uint8Array | undefined): Float32Array =>
  dequantizeBlocks(k, n, 4, Q4_BLOCK, b, scales, zeros);

/**
 * MatMulNBits' weight as float32 `[K, N]` (the layout of a MatMul's B): each column's K values in
 * blocks of `blockSize`, `bits` each, low bits first (`[N, blocks, blockSize · bits / 8]` bytes); a
 * value is `(q − zero) × scale` of its column's block, the zero point packed like the weights
 * (`Uint8Array`, two blocks a byte for 4 bits), or a float per block, or 2^(bits−1) when absent.
 */
export function dequantizeBlocks(k: number, n: number, bits: number, blockSize: number, q: ArrayLike<number>, scales: ArrayLike<number>,
  zeros?: ArrayLike<number>): Float32Array {
  const blocks = Math.ceil(k / blockSize), blob = (blockSize * bits) / 8;
  const mask = (1 << bits) - 1, perByte = 8 / bits;
  const zeroBytes = Math.ceil(blocks / perByte);
  const zeroOf = (col: number, block: number): number => {
    if (!zeros) return 1 << (bits - 1);
    if (zeros instanceof Float32Array) return zeros[col * blocks + block];
    return (zeros[col * zeroBytes + Math.floor(block / perByte)] >> ((block % perByte) * bits)) & mask;
  };
  const w = new Float32Array(k * n);
  for (let col = 0; col < n; col++) {
    for (let block = 0; block < blocks; block++) {
      const scale = scales[col * blocks + block], zero = zeroOf(col, block);
      const base = (col * blocks + block) * blob;
      for (let i = 0; i < blockSize; i++) {
        const row = block * blockSize + i;
        if (row >= k) break;
        const value = (q[base + Math.floor(i / perByte)] >> ((i % perByte) * bits)) & mask;
        w[row * n + col] = (value - zero) * scale;
      }
    }
  }
  return w;
}

/**
 * DynamicQuantizeLinear as onnxruntime computes it, in float32: the range of `x` with 0 in it,
 * scale = (max − min) / 255 (1 when max = min), zero point = round-half-even(clamp(−min / scale,
 * 0, 255)), each value round-half-even(x / scale) + zero point saturated to 0..255. Returns the
 * quantized values less the zero point (what the int8 matmul multiplies), the scale and the zero point.
 */
export function dynamicQuantize(x: ArrayLike<number>, length = x.length): { values: Int16Array; scale: number; zero: number } {
  let low = 0, high = 0;
  for (let i = 0; i < length; i++) {
    if (x[i] < low) low = x[i];
    if (x[i] > high) high = x[i];
  }
  const f = Math.fround;
  const scale = high === low ? 1 : f(f(high - low) / 255);
  const zero = roundHalfEven(Math.min(255, Math.max(0, f(0 - f(low / scale)))));
  const values = new Int16Array(length);
  for (let i = 0; i < length; i++) values[i] = Math.min(255, Math.max(0, roundHalfEven(f(x[i] / scale)) + zero)) - zero;
  return { values, scale, zero };
}

/** A row of sums through the op's epilogue into `to`; `ci` is the row's first element in C (Residual's place). */
function epilogue(op: OpSpec, acc: Float64Array, ci: number, bias: Float32Array | undefined, residual: Float32Array | undefined, to: Float32Array): void {
  for (let j = 0; j < to.length; j++) {
    let v = acc[j];
    for (const e of op.epilogue) {
      switch (e.kind) {
        case EpilogueKind.SCALE: v *= e.value; break;
        case EpilogueKind.BIAS: v += bias![j]; break;
        case EpilogueKind.RELU: v = Math.max(v, 0); break;
        case EpilogueKind.GELU_TANH: v = geluTanh(v); break;
        case EpilogueKind.GELU_ERF: v = geluErf(v); break;
        case EpilogueKind.SILU: v = silu(v); break;
        case EpilogueKind.RESIDUAL: v += residual![ci + j]; break;
        case EpilogueKind.ROUND_HALF: v = roundToHalf(v); break;
        default: throw new Error(`unsupported epilogue ${EpilogueKind[e.kind] ?? e.kind}`);
      }
    }
    to[j] = v;
  }
}

/**
 * The error a kernel of this op may show against its reference: `tolerance`, or, where the op
 * rounds to float16 (`round_half`), a float16 ulp (2^-10 of a value) per rounding: two sums that
 * differ in their last float32 bits may round to neighbouring float16s, and each later step and
 * rounding may carry that on.
 */
export const opTolerance = (op: OpSpec, tolerance: number): number =>
  Math.max(tolerance, op.epilogue.filter((e) => e.kind === EpilogueKind.ROUND_HALF).length * 2 ** -10);

/**
 * Seeded inputs of an op's kernel as the words its operands take in memory, for the operands of
 * `shapes` (a Wasm kernel's, or a WGSL kernel's without scratch) that are inputs: floats in
 * [-1, 1); an integer operand's words seeded bytes (values over its type's whole range); a
 * float16 one's seeded values in [-1, 1) as float16 bits (any bits could be NaN); a quantizer's
 * scales 0.01 (seeded sums stay near 1). {@link operandView} reads them as the reference takes them.
 */
export function seededWords(op: OpSpec, shapes: readonly [string, number[]][]): Record<string, Float32Array<ArrayBuffer>> {
  const types = operandTypes(op), inputs = inputNames(op);
  const words: Record<string, Float32Array<ArrayBuffer>> = {};
  shapes.forEach(([name, shape], i) => {
    if (!inputs.includes(name)) return;
    const elements = shape.reduce((a, b) => a * b, 1), type = types[name] ?? "float32";
    words[name] = type === "float16" ? halfWords(seededFloats(elements, 17 + i)) : seededFloats(wordsOf(type, elements), 17 + i);
  });
  if (words.BScale) words.BScale.fill(0.01);
  return words;
}

/** 4-byte words an operand of `elements` elements of `type` takes in memory (how arenas and weights count it). */
export const wordsOf = (type: OperandType, elements: number): number => Math.ceil(elements * bytesOf(type) / 4);

/**
 * An operand's elements over the words that hold it: the words themselves for a float32 operand,
 * else a view of its bytes as its type (the int8 matmul's B and Work).
 */
export function operandView(op: OpSpec, name: string, words: Float32Array): OperandValues {
  const type = operandTypes(op)[name];
  if (!type) return words;
  const elements = operandShapes(op).find(([n]) => n === name)![1].reduce((a, b) => a * b, 1);
  if (type === "int16") return new Int16Array(words.buffer, words.byteOffset, elements);
  if (type === "float16") return new Uint16Array(words.buffer, words.byteOffset, elements);
  return type === "uint8" ? new Uint8Array(words.buffer, words.byteOffset, elements) : new Int8Array(words.buffer, words.byteOffset, elements);
}

/** Bytes of an integer tensor as the 4-byte words a weight is held in (a view where they are aligned, else a padded copy). */
export function bytesAsWords(data: Uint8Array | Int8Array): Float32Array {
  if (data.byteOffset % 4 === 0 && data.byteLength % 4 === 0) return new Float32Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength / 4);
  const copy = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
  copy.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return new Float32Array(copy.buffer);
}
