import type { OnnxGraph } from "./onnx.js";
import type { HostTensor } from "./tensor.js";

/** Ops that pass token ids on unchanged (exporters reshape them before the embedding's Gather). */
const ID_VIEWS = new Set(["Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Cast"]);

/**
 * The float tables a decoder gathers rows of: the token embedding (indices from input_ids, with its
 * initializer's name), and the others (positions).
 */
export function embeddings(graph: OnnxGraph): { tokens?: HostTensor; tokensName?: string; others: HostTensor[] } {
  const producer = new Map(graph.nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  const fromIds = (v: string): boolean => {
    for (let n = producer.get(v); ; n = producer.get(v)) {
      if (v === "input_ids") return true;
      if (!n || !ID_VIEWS.has(n.opType)) return false;
      v = n.inputs[0];
    }
  };
  let tokens: HostTensor | undefined, tokensName: string | undefined;
  const others: HostTensor[] = [];
  for (const n of graph.nodes) {
    const table = n.opType === "Gather" ? graph.initializers.get(n.inputs[0]) : undefined;
    if (!table || table.dtype !== "float32" || table.shape.length !== 2) continue;
    if (!fromIds(n.inputs[1])) others.push(table);
    else if (!tokens) [tokens, tokensName] = [table, n.inputs[0]];
  }
  return { tokens, tokensName, others };
}
