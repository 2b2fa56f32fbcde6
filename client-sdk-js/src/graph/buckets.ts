// A decode step's attention at a bucket of past lengths: one set of ops for every length of a
// bucket, not a kernel per length.
import { create } from "@bufbuild/protobuf";
import { EpilogueKind, OpKind, OpSpecSchema, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opKey } from "../ops.js";
import type { KernelStep, Step } from "./fuse.js";
import type { ValueMeta } from "./host/index.js";
import type { OnnxNode } from "./onnx.js";

/** Past lengths a decode step's attention is padded to a multiple of. */
export const ATTENTION_BUCKET = 32;

/** float32's lowest: what an exporter's additive mask puts on positions not attended to, so kernels handle it. */
const MASKED = -3.4028234663852886e38;

/**
 * Copies `from`, blocks of `inner` floats, into `to`, `outer` blocks of `padded` floats, each
 * block's tail filled with `fill`; with `repeat`, each block of `from` fills `repeat` blocks of
 * `to` in turn (a KV cache repeated over its head group).
 */
export interface PadStep {
  readonly kind: "pad";
  readonly from: string;
  readonly to: string;
  readonly outer: number;
  readonly inner: number;
  readonly padded: number;
  readonly fill: number;
  readonly repeat?: number;
}

/**
 * Rewrites each one-row attention of `steps` (a decode step's: Q·Kᵀ with a residual mask, its
 * softmax, its NaN guard if the file has one, the probabilities times V, over a past of L positions) to run at the bucket's length,
 * L rounded up to {@link ATTENTION_BUCKET}: K and V are copied into blocks with zero rows after
 * their L, the mask into one whose tail is float32's lowest, so the scores' padded columns are
 * that lowest, the softmax gives them exact zeros and the product adds nothing for them. The
 * attention of every length in a bucket then runs the same three ops (tuned once, not per length),
 * at the cost of one copy of K and V a step. The padded values are added to `values`. A product
 * whose mask is not its last epilogue step, or whose scores or probabilities something else
 * reads, is left as it is.
 */
export function bucketAttention(steps: readonly Step[], values: Map<string, ValueMeta>, base: (v: string) => string,
  outputs: readonly string[]): (Step | PadStep)[] {
  const readers = new Map<string, number>();
  const read = (v: string) => readers.set(base(v), (readers.get(base(v)) ?? 0) + 1);
  for (const s of steps) {
    if (s.kind === "kernel") Object.entries(s.operands).filter(([name]) => name !== "C").forEach(([, v]) => read(v));
    else s.node.inputs.filter(Boolean).forEach(read);
  }
  outputs.forEach(read);
  const onlyReader = (v: string) => readers.get(base(v)) === 1;
  const isConst = (v: string) => values.get(base(v))?.value !== undefined;

  const out: (Step | PadStep)[] = [];
  for (let i = 0; i < steps.length; i++) {
    const chain = attentionAt(steps, i, base);
    if (!chain || !onlyReader(chain.scores.operands.C) || !onlyReader(chain.softmax.operands.C) || (chain.guard && !onlyReader(chain.guard.outputs[0]))
      || [chain.scores.operands.Residual, chain.scores.operands.B, chain.product.operands.B].some(isConst)) {
      out.push(steps[i]);
      continue;
    }
    const { scores, softmax, guard, product } = chain;
    const [batch, , k, length] = scores.op.shape, n = product.op.shape[3];
    const bucket = Math.ceil(length / ATTENTION_BUCKET) * ATTENTION_BUCKET;
    if (bucket === length) {
      out.push(...steps.slice(i, i + chain.steps));
    } else {
      const value = (name: string, shape: number[]) => {
        const padded = `${name}:bucket${bucket}`;
        values.set(padded, { dtype: "float32", shape });
        return padded;
      };
      const keys = value(scores.operands.B, [batch, bucket, k]), mask = value(scores.operands.Residual, [batch, 1, bucket]);
      const weights = value(scores.operands.C, [batch, 1, bucket]), probs = value(softmax.operands.C, [batch, bucket]);
      const guarded = guard ? value(guard.outputs[0], [batch, 1, bucket]) : probs;
      const vals = value(product.operands.B, [batch, bucket, n]);
      out.push(
        { kind: "pad", from: scores.operands.B, to: keys, outer: batch, inner: length * k, padded: bucket * k, fill: 0 },
        { kind: "pad", from: scores.operands.Residual, to: mask, outer: batch, inner: length, padded: bucket, fill: MASKED },
        withShape(scores, [batch, 1, k, bucket], { ...scores.operands, B: keys, Residual: mask, C: weights }),
        withShape(softmax, [batch, bucket], { A: weights, C: probs }),
        ...(guard ? [{ kind: "host" as const, node: { ...guard, inputs: [probs, ...guard.inputs.slice(1)], outputs: [guarded] } }] : []),
        { kind: "pad", from: product.operands.B, to: vals, outer: batch, inner: length * n, padded: bucket * n, fill: 0 },
        withShape(product, [batch, 1, bucket, n], { ...product.operands, A: guarded, B: vals }),
      );
    }
    i += chain.steps - 1;
  }
  return foldExpands(out, values, base, onlyReader);
}

/**
 * Grouped-query attention's K and V (Llama, Qwen2, Mistral) come repeated over each head group by
 * an Expand the pad alone reads: the pad reads the Expand's input instead, each block `repeat`
 * times, and the Expand goes. One copy of K and V a step, not two.
 */
function foldExpands(steps: (Step | PadStep)[], values: Map<string, ValueMeta>, base: (v: string) => string,
  onlyReader: (v: string) => boolean): (Step | PadStep)[] {
  const producers = new Map<string, OnnxNode>();
  for (const s of steps) if (s.kind === "host" && s.node.opType === "Expand") producers.set(base(s.node.outputs[0]), s.node);
  const shape = (v: string) => (values.get(v) ?? values.get(base(v)))?.shape;
  const folded = new Set<OnnxNode>();
  const out = steps.map((s) => {
    if (s.kind !== "pad") return s;
    const expand = producers.get(base(s.from));
    if (!expand || !onlyReader(s.from)) return s;
    const repeat = groupRepeat(shape(expand.inputs[0]), shape(expand.outputs[0]), s.inner);
    if (!repeat) return s;
    folded.add(expand);
    return { ...s, from: expand.inputs[0], repeat };
  });
  return out.filter((s) => s.kind !== "host" || !folded.has(s.node));
}

/**
 * How many times an Expand from `input` to `output` repeats each block of `inner` floats: when
 * they differ on one axis alone, 1 in `input`, and the axes after it make up `inner`.
 */
function groupRepeat(input: readonly number[] | undefined, output: readonly number[] | undefined, inner: number): number | undefined {
  if (!input || !output || input.length > output.length) return undefined;
  const padded = [...Array<number>(output.length - input.length).fill(1), ...input];
  const differ = output.flatMap((d, a) => (d === padded[a] ? [] : [a]));
  if (differ.length !== 1 || padded[differ[0]] !== 1) return undefined;
  const a = differ[0];
  return output.slice(a + 1).reduce((x, y) => x * y, 1) === inner ? output[a] : undefined;
}

interface Attention {
  readonly scores: KernelStep;
  readonly softmax: KernelStep;
  /** The softmax's NaN guard (`jitzoo.ReplaceNaN`) between it and the product, if the file has one. */
  readonly guard?: OnnxNode;
  readonly product: KernelStep;
  /** Steps the chain spans. */
  readonly steps: number;
}

/**
 * The attention starting at `steps[at]`: Q·Kᵀ of one row with the mask its last epilogue step, its
 * softmax, the probabilities (NaN-guarded or not) times V (not a shared B); undefined where none.
 */
function attentionAt(steps: readonly Step[], at: number, base: (v: string) => string): Attention | undefined {
  const [scores, softmax, next] = steps.slice(at, at + 3);
  const guard = next?.kind === "host" && next.node.opType === "jitzoo.ReplaceNaN" ? next.node : undefined;
  const product = guard ? steps[at + 3] : next;
  if (scores?.kind !== "kernel" || softmax?.kind !== "kernel" || product?.kind !== "kernel") return undefined;
  const [batch, m, , length] = scores.op.shape;
  const probs = guard ? (base(guard.inputs[0]) === base(softmax.operands.C) ? guard.outputs[0] : undefined) : softmax.operands.C;
  const chained = scores.op.kind === OpKind.BATCH_MATMUL && m === 1 && scores.op.transposeB && !scores.op.broadcastB
    && scores.op.epilogue.at(-1)?.kind === EpilogueKind.RESIDUAL
    && softmax.op.kind === OpKind.SOFTMAX && softmax.op.shape[0] === batch && softmax.op.shape[1] === length
    && base(softmax.operands.A) === base(scores.operands.C)
    && product.op.kind === OpKind.BATCH_MATMUL && !product.op.transposeB && !product.op.broadcastB
    && product.op.shape[0] === batch && product.op.shape[1] === 1 && product.op.shape[2] === length
    && probs !== undefined && base(product.operands.A) === base(probs);
  return chained ? { scores, softmax, guard, product, steps: guard ? 4 : 3 } : undefined;
}

function withShape(step: KernelStep, shape: number[], operands: Record<string, string>): KernelStep {
  const op: OpSpec = create(OpSpecSchema, { ...step.op, shape });
  return { ...step, op, key: opKey(op), operands };
}
