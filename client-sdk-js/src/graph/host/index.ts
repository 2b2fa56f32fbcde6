import type { OnnxNode } from "../onnx.js";
import type { HostTensor } from "../tensor.js";
import { ELEMENTWISE_OPS } from "./elementwise.js";
import { FUSED_OPS } from "./fused.js";
import { INDEXING_OPS } from "./indexing.js";
import { LINALG_OPS } from "./linalg.js";
import { NN_OPS } from "./nn.js";
import type { HostOp, OutputMeta, ValueMeta } from "./op.js";
import { QUANT_OPS } from "./quant.js";
import { REDUCE_OPS } from "./reduce.js";
import { RESIZE } from "./resize.js";
import { SHAPE_OPS } from "./shape.js";

/**
 * ONNX semantics of every supported op, in JavaScript over {@link HostTensor}s: what folds
 * constants and shape subgraphs at load, runs the ops no kernel covers (data movement, masks,
 * the little arithmetic between kernels), and serves as the whole-graph reference in tests.
 * One file per family; an op is supported when it is here.
 */
const OPS: Readonly<Record<string, HostOp>> = {
  ...ELEMENTWISE_OPS, ...SHAPE_OPS, ...INDEXING_OPS, ...REDUCE_OPS, ...LINALG_OPS, ...NN_OPS, Resize: RESIZE, ...QUANT_OPS, ...FUSED_OPS,
};

/** The engine's own domain: ops the fuser makes, which a file may not name. */
const OWN_DOMAIN = "jitzoo.";

/** Each op type a file may use (`domain.OpType` outside the default domain) and the attributes it may carry. */
export const HOST_OP_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(OPS).filter(([op]) => !op.startsWith(OWN_DOMAIN)).map(([op, { attrs }]) => [op, attrs]));

/** Output types and shapes of a node. */
export function inferNode(node: OnnxNode, ins: readonly (ValueMeta | undefined)[]): OutputMeta[] {
  return OPS[node.opType].infer(ins, node);
}

/** Runs a node on host tensors; writes output i into `out[i]` where given. */
export function runNode(node: OnnxNode, ins: readonly (HostTensor | undefined)[], out?: readonly (HostTensor | undefined)[]): HostTensor[] {
  return OPS[node.opType].run(ins, node, out);
}

export { VIEW_OPS } from "./shape.js";
export type { ValueMeta } from "./op.js";
