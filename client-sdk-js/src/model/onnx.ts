import { fromBinary } from "@bufbuild/protobuf";
import { JitzooError } from "../errors.js";
import {
  AttributeProto_AttributeType as AttrType,
  ModelProtoSchema,
  TensorProto_DataLocation,
  TensorProto_DataType as DataType,
  type AttributeProto,
  type ModelProto,
  type TensorProto,
  type ValueInfoProto,
} from "../gen/onnx/onnx_pb.js";
import { sizeOf, type DType, type HostTensor } from "./tensor.js";

/** A model the engine cannot take: names the node and op where there is one. */
export class ModelError extends JitzooError {
  constructor(message: string) {
    super("model_invalid", message);
    this.name = "ModelError";
  }
}

/** An attribute's value: a number, a list of numbers, a string or a tensor. */
export type AttrValue = number | number[] | string | HostTensor;

/** One node of the graph, with its attributes decoded. */
export interface OnnxNode {
  readonly name: string;
  readonly opType: string;
  /** Value names; "" for an omitted optional input. */
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attrs: Readonly<Record<string, AttrValue>>;
}

/** A graph input: name, element type and dimensions (a string for a symbolic one, e.g. "sequence"). */
export interface GraphInput {
  readonly name: string;
  readonly dtype: DType;
  readonly dims: readonly (number | string)[];
}

/** A decoded model: nodes in topological order, initializers, inputs and outputs. */
export interface OnnxGraph {
  readonly name: string;
  /** The default domain's opset. */
  readonly opset: number;
  readonly nodes: readonly OnnxNode[];
  readonly initializers: ReadonlyMap<string, HostTensor>;
  /** Inputs a run must feed (initializers excluded). */
  readonly inputs: readonly GraphInput[];
  readonly outputs: readonly string[];
}

/** Opsets of the default domain the engine reads (what PyTorch and Hugging Face exporters write for encoders). */
export const OPSETS = { min: 13, max: 18 } as const;

/**
 * The op set: each supported op type and the attributes it may carry. Anything else is refused
 * by {@link decodeModel} with the node's name.
 */
export const SUPPORTED_OPS: Readonly<Record<string, readonly string[]>> = {
  MatMul: [], Gemm: ["alpha", "beta", "transA", "transB"],
  Add: [], Sub: [], Mul: [], Div: [], Pow: [], Sqrt: [], Erf: [], Tanh: [],
  Softmax: ["axis"], LayerNormalization: ["axis", "epsilon", "stash_type"],
  ReduceMean: ["axes", "keepdims", "noop_with_empty_axes"],
  Transpose: ["perm"], Reshape: ["allowzero"], Gather: ["axis"], Where: [], Cast: ["to", "saturate"],
  Unsqueeze: ["axes"], Squeeze: ["axes"], Shape: ["start", "end"], Concat: ["axis"], Slice: [],
  Constant: ["value", "value_float", "value_floats", "value_int", "value_ints"], Identity: [],
};

/** Decodes a `.onnx` file and checks it against the supported op set. */
export function decodeModel(bytes: Uint8Array): OnnxGraph {
  let model: ModelProto;
  try {
    model = fromBinary(ModelProtoSchema, bytes);
  } catch (e) {
    throw new ModelError(`not an ONNX model: ${(e as Error).message}`);
  }
  const graph = model.graph;
  if (!graph || graph.node.length === 0) throw new ModelError("the model has no graph nodes");
  const opset = model.opsetImport.find((o) => o.domain === "" || o.domain === "ai.onnx");
  if (!opset) throw new ModelError("the model imports no opset of the default ONNX domain");
  const version = Number(opset.version);
  if (version < OPSETS.min || version > OPSETS.max) {
    throw new ModelError(`opset ${version} is not supported (supported: ${OPSETS.min} to ${OPSETS.max})`);
  }
  const initializers = new Map<string, HostTensor>();
  for (const t of graph.initializer) initializers.set(t.name, tensorOf(t, `initializer ${t.name}`));
  const nodes = graph.node.map((n, i): OnnxNode => {
    const name = n.name || `#${i}`;
    const where = `node ${name} (${n.opType})`;
    if (n.domain && n.domain !== "ai.onnx") throw new ModelError(`${where}: domain ${n.domain} is not supported`);
    const allowed = SUPPORTED_OPS[n.opType];
    if (!allowed) throw new ModelError(`${where}: op type ${n.opType} is not supported`);
    const attrs: Record<string, AttrValue> = {};
    for (const a of n.attribute) {
      if (!allowed.includes(a.name)) throw new ModelError(`${where}: attribute ${a.name} is not supported`);
      attrs[a.name] = attrOf(a, where);
    }
    return { name, opType: n.opType, inputs: [...n.input], outputs: [...n.output], attrs };
  });
  checkOrder(nodes, new Set([...initializers.keys(), ...graph.input.map((i) => i.name)]));
  return {
    name: graph.name,
    opset: version,
    nodes,
    initializers,
    inputs: graph.input.filter((i) => !initializers.has(i.name)).map(inputOf),
    outputs: graph.output.map((o) => o.name),
  };
}

function checkOrder(nodes: readonly OnnxNode[], known: Set<string>): void {
  for (const n of nodes) {
    for (const input of n.inputs) {
      if (input && !known.has(input)) {
        throw new ModelError(`node ${n.name} (${n.opType}): input ${input} is produced by no earlier node (the graph must be in topological order)`);
      }
    }
    n.outputs.forEach((o) => known.add(o));
  }
}

function dtypeOf(type: number, where: string): DType {
  switch (type) {
    case DataType.FLOAT: return "float32";
    case DataType.INT64: case DataType.INT32: return "int64";
    case DataType.BOOL: return "bool";
    default: throw new ModelError(`${where}: element type ${DataType[type] ?? type} is not supported (float32, int32, int64, bool)`);
  }
}

function inputOf(v: ValueInfoProto): GraphInput {
  const t = v.type?.value;
  if (v.type?.value.case !== "tensorType" || !t) throw new ModelError(`input ${v.name}: only tensor inputs are supported`);
  const tensorType = v.type.value.value;
  const dims = (tensorType.shape?.dim ?? []).map((d) =>
    d.value.case === "dimValue" ? Number(d.value.value) : d.value.case === "dimParam" ? d.value.value : "?");
  return { name: v.name, dtype: dtypeOf(tensorType.elemType, `input ${v.name}`), dims };
}

function attrOf(a: AttributeProto, where: string): AttrValue {
  switch (a.type) {
    case AttrType.FLOAT: return a.f;
    case AttrType.INT: return Number(a.i);
    case AttrType.STRING: return new TextDecoder().decode(a.s);
    case AttrType.FLOATS: return [...a.floats];
    case AttrType.INTS: return a.ints.map(Number);
    case AttrType.TENSOR: return tensorOf(a.t!, `${where} attribute ${a.name}`);
    default: throw new ModelError(`${where}: attribute ${a.name} of type ${AttrType[a.type]} is not supported`);
  }
}

/** A TensorProto's values, from raw_data or the typed fields. */
export function tensorOf(t: TensorProto, where: string): HostTensor {
  if (t.dataLocation === TensorProto_DataLocation.EXTERNAL) {
    throw new ModelError(`${where}: external tensor data is not supported; save the model with its weights inside`);
  }
  const dtype = dtypeOf(t.dataType, where);
  const shape = t.dims.map(Number);
  const size = sizeOf(shape);
  const raw = t.rawData.length > 0 ? new Uint8Array(t.rawData) : undefined; // a copy: aligned, owned bytes (a Node Buffer's slice would be a view)
  let data: Float32Array | Float64Array | Uint8Array;
  if (dtype === "float32") {
    data = raw ? new Float32Array(raw.buffer, 0, raw.byteLength / 4) : Float32Array.from(t.floatData);
  } else if (dtype === "bool") {
    data = raw ? new Uint8Array(raw) : Uint8Array.from(t.int32Data);
  } else if (t.dataType === DataType.INT64) {
    data = raw ? Float64Array.from(new BigInt64Array(raw.buffer, 0, raw.byteLength / 8), Number) : Float64Array.from(t.int64Data, Number);
  } else {
    data = raw ? Float64Array.from(new Int32Array(raw.buffer, 0, raw.byteLength / 4)) : Float64Array.from(t.int32Data);
  }
  if (data.length !== size) throw new ModelError(`${where}: ${data.length} values for shape [${shape}]`);
  return { dtype, shape, data };
}
