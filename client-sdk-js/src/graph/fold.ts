import { inferNode, runNode, type ValueMeta } from "./host/index.js";
import { ModelError, type OnnxGraph, type OnnxNode } from "./onnx.js";
import { roundIfFloat } from "./tensor.js";

/** The graph for one set of input shapes: every value's type and shape, constants folded. */
export interface FoldedGraph {
  /** Every value: graph inputs, initializers, node outputs. */
  readonly values: ReadonlyMap<string, ValueMeta>;
  /** The nodes that depend on the inputs, in order; everything else was computed here. */
  readonly nodes: readonly OnnxNode[];
}

/** Concrete shapes of the graph inputs for one run. */
export type InputShapes = Readonly<Record<string, readonly number[]>>;

/**
 * Infers every value's shape for these input shapes and computes every node whose inputs are
 * all known (weights, shape subgraphs: Shape is known once the input shapes are), so that only
 * the nodes that depend on the inputs' contents remain.
 */
export function fold(graph: OnnxGraph, shapes: InputShapes): FoldedGraph {
  const values = new Map<string, ValueMeta>();
  for (const [name, value] of graph.initializers) values.set(name, { dtype: value.dtype, shape: value.shape, value });
  for (const input of graph.inputs) {
    const shape = shapes[input.name];
    if (!shape) throw new ModelError(`input ${input.name} is missing`);
    checkDims(input.name, input.dims, shape);
    values.set(input.name, { dtype: input.dtype, shape });
  }
  const dynamic: OnnxNode[] = [];
  for (const node of graph.nodes) {
    const ins = node.inputs.map((name) => (name ? values.get(name) : undefined));
    try {
      const known = node.opType === "Shape" || ins.every((i) => i === undefined || i.value !== undefined);
      if (known) {
        const outs = runNode(node, ins.map((i) => i && (i.value ?? { dtype: i.dtype, shape: i.shape, data: new Float32Array(0) })));
        outs.forEach((value, i) => {
          if (graph.half.has(node.outputs[i])) roundIfFloat(value);
          values.set(node.outputs[i], { dtype: value.dtype, shape: value.shape, value });
        });
      } else {
        const outs = inferNode(node, ins);
        if (node.outputs.length > outs.length && node.outputs.slice(outs.length).some((o) => o)) {
          throw new Error(`only its first ${outs.length} outputs are supported`);
        }
        outs.forEach((meta, i) => node.outputs[i] && values.set(node.outputs[i], meta));
        dynamic.push(node);
      }
    } catch (e) {
      if (e instanceof ModelError) throw e;
      const message = (e as Error).message.replace(`node ${node.name} (${node.opType}): `, "");
      throw new ModelError(`node ${node.name} (${node.opType}): ${message}`);
    }
  }
  for (const output of graph.outputs) {
    if (!values.has(output)) throw new ModelError(`output ${output} is produced by no node`);
  }
  return { values, nodes: dynamic };
}

function checkDims(name: string, declared: readonly (number | string)[], given: readonly number[]): void {
  if (declared.length && declared.length !== given.length) {
    throw new ModelError(`input ${name} has rank ${declared.length}, got dims [${given}]`);
  }
  declared.forEach((d, i) => {
    if (typeof d === "number" && d > 0 && d !== given[i]) throw new ModelError(`input ${name}: dimension ${i} must be ${d}, got ${given[i]}`);
  });
  if (given.some((d) => !Number.isInteger(d) || d < 0)) throw new ModelError(`input ${name}: dims [${given}] must be whole numbers`);
}
