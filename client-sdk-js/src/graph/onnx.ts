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
import { HOST_OP_ATTRIBUTES } from "./host/index.js";
import { lower } from "./lower.js";
import { halfToFloat, sizeOf, type DType, type HostTensor, type TensorData } from "./tensor.js";

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
  /**
   * The values the file declares float16 (held as float32 here): every op writing one rounds it
   * to float16's precision, as onnxruntime stores them.
   */
  readonly half: ReadonlySet<string>;
}

/** Opsets of the default domain the engine reads (what PyTorch's exporters and onnxruntime's tools write). */
export const OPSETS = { min: 13, max: 21 } as const;

/** Ops of other domains the engine reads, by `domain.OpType` (onnxruntime's 4-bit MatMul). */
const CONTRIB_DOMAINS = new Set(["com.microsoft"]);

/**
 * The op set: each supported op type (`domain.OpType` outside the default domain) and the
 * attributes it may carry. Anything else is refused by {@link decodeModel} with the node's name.
 */
export const SUPPORTED_OPS: Readonly<Record<string, readonly string[]>> = HOST_OP_ATTRIBUTES;

/** External tensor data by the `location` the model names (the `model.onnx_data` beside `model.onnx`). */
export type ExternalFiles = ReadonlyMap<string, Uint8Array>;

/** Decodes a `.onnx` file and checks it against the supported op set. */
export function decodeModel(bytes: Uint8Array, external: ExternalFiles = new Map()): OnnxGraph {
  return graphOf(parseModel(bytes), external);
}

/** The model's protobuf, or a ModelError saying the bytes are not (or no longer all of) a model. */
export function parseModel(bytes: Uint8Array): ModelProto {
  try {
    return fromBinary(ModelProtoSchema, bytes);
  } catch (e) {
    throw new ModelError(`not an ONNX model (truncated or corrupted?): ${(e as Error).message}`);
  }
}

/** The external data files a model's tensors name, in order of first use. */
export function externalLocations(model: ModelProto): string[] {
  const locations = new Set<string>();
  for (const t of model.graph?.initializer ?? []) {
    if (t.dataLocation === TensorProto_DataLocation.EXTERNAL) locations.add(externalOf(t, `initializer ${t.name}`).location);
  }
  return [...locations];
}

/**
 * A parsed model as the engine's graph, its external data read from `external`; `lowered` false
 * keeps the quantized products as the file has them (node for node: what a rewrite of the file reads).
 */
export function graphOf(model: ModelProto, external: ExternalFiles = new Map(), { lowered = true } = {}): OnnxGraph {
  const graph = model.graph;
  if (!graph || graph.node.length === 0) throw new ModelError("the model has no graph nodes");
  const opset = model.opsetImport.find((o) => o.domain === "" || o.domain === "ai.onnx");
  if (!opset) throw new ModelError("the model imports no opset of the default ONNX domain");
  const version = Number(opset.version);
  if (version < OPSETS.min || version > OPSETS.max) {
    throw new ModelError(`opset ${version} is not supported (supported: ${OPSETS.min} to ${OPSETS.max})`);
  }
  const initializers = new Map<string, HostTensor>();
  for (const t of graph.initializer) initializers.set(t.name, tensorOf(t, `initializer ${t.name}`, external));
  const nodes = graph.node.map((n, i): OnnxNode => {
    const name = n.name || `#${i}`;
    const domain = n.domain === "ai.onnx" ? "" : n.domain;
    const opType = domain ? `${domain}.${n.opType}` : n.opType;
    const where = `node ${name} (${opType})`;
    if (domain && !CONTRIB_DOMAINS.has(domain)) throw new ModelError(`${where}: domain ${domain} is not supported`);
    const allowed = SUPPORTED_OPS[opType];
    if (!allowed) throw new ModelError(`${where}: op type ${opType} is not supported`);
    const attrs: Record<string, AttrValue> = {};
    for (const a of n.attribute) {
      if (!allowed.includes(a.name)) throw new ModelError(`${where}: attribute ${a.name} is not supported`);
      attrs[a.name] = attrOf(a, where, external);
    }
    return { name, opType, inputs: [...n.input], outputs: [...n.output], attrs };
  });
  const ordered = topologicalOrder(nodes, new Set([...initializers.keys(), ...graph.input.map((i) => i.name)]));
  const halfInputs = [
    ...[...initializers].filter(([, t]) => t.half).map(([name]) => name),
    ...graph.input.filter((i) => i.type?.value.case === "tensorType" && i.type.value.value.elemType === DataType.FLOAT16).map((i) => i.name),
  ];
  const decoded: OnnxGraph = {
    name: graph.name,
    opset: version,
    nodes: ordered,
    initializers,
    inputs: graph.input.filter((i) => !initializers.has(i.name)).map(inputOf),
    outputs: graph.output.map((o) => o.name),
    half: halfValues(ordered, halfInputs),
  };
  return lowered ? lower(decoded) : decoded;
}

/**
 * The float16 values of a graph, from its float16 inputs and initializers: a Cast writes float16
 * when cast to it, a Constant or ConstantOfShape when its value is, and any other op when it reads
 * a float16 value (where the output is not a float at all, the mark is never used).
 */
function halfValues(nodes: readonly OnnxNode[], inputs: readonly string[]): Set<string> {
  const half = new Set(inputs);
  for (const n of nodes) {
    const value = n.attrs.value as HostTensor | undefined;
    const writes = n.opType === "Cast" ? n.attrs.to === DataType.FLOAT16
      : n.opType === "Constant" || n.opType === "ConstantOfShape" ? value?.half === true
        : n.inputs.some((i) => half.has(i));
    if (writes) n.outputs.forEach((o) => o && half.add(o));
  }
  return half;
}

/**
 * The nodes in an order where each reads only values known before it: the file's order where it
 * already is one (ONNX asks for it, but some tools append nodes, e.g. float16 converters their
 * input Casts), else the nodes moved after what they read, otherwise in file order.
 */
function topologicalOrder(nodes: readonly OnnxNode[], known: Set<string>): OnnxNode[] {
  const ready = (n: OnnxNode) => n.inputs.every((i) => !i || known.has(i));
  const ordered: OnnxNode[] = [];
  let waiting = [...nodes];
  while (waiting.length) {
    const next: OnnxNode[] = [];
    for (const n of waiting) {
      if (ready(n)) {
        ordered.push(n);
        n.outputs.forEach((o) => known.add(o));
      } else {
        next.push(n);
      }
    }
    if (next.length === waiting.length) {
      const n = next[0];
      const input = n.inputs.find((i) => i && !known.has(i));
      throw new ModelError(`node ${n.name} (${n.opType}): input ${input} is produced by no node (or by a cycle)`);
    }
    waiting = next;
  }
  return ordered;
}

/** ONNX element types the engine reads, and how each is held ({@link DType}). */
const DTYPES: Partial<Record<DataType, DType>> = {
  [DataType.FLOAT]: "float32", [DataType.FLOAT16]: "float32", [DataType.DOUBLE]: "float32",
  [DataType.INT64]: "int64", [DataType.INT32]: "int64", [DataType.INT16]: "int64", [DataType.UINT16]: "int64",
  [DataType.UINT32]: "int64", [DataType.UINT64]: "int64",
  [DataType.INT8]: "int8", [DataType.UINT8]: "uint8", [DataType.BOOL]: "bool",
};

/** How an ONNX element type is held, or a ModelError naming it. */
export function dtypeOf(type: number, where: string): DType {
  const dtype = DTYPES[type as DataType];
  if (!dtype) {
    throw new ModelError(`${where}: element type ${DataType[type] ?? type} is not supported `
      + "(float32, float16, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool)");
  }
  return dtype;
}

function inputOf(v: ValueInfoProto): GraphInput {
  const t = v.type?.value;
  if (v.type?.value.case !== "tensorType" || !t) throw new ModelError(`input ${v.name}: only tensor inputs are supported`);
  const tensorType = v.type.value.value;
  const dims = (tensorType.shape?.dim ?? []).map((d) =>
    d.value.case === "dimValue" ? Number(d.value.value) : d.value.case === "dimParam" ? d.value.value : "?");
  return { name: v.name, dtype: dtypeOf(tensorType.elemType, `input ${v.name}`), dims };
}

function attrOf(a: AttributeProto, where: string, external: ExternalFiles): AttrValue {
  switch (a.type) {
    case AttrType.FLOAT: return a.f;
    case AttrType.INT: return Number(a.i);
    case AttrType.STRING: return new TextDecoder().decode(a.s);
    case AttrType.FLOATS: return [...a.floats];
    case AttrType.INTS: return a.ints.map(Number);
    case AttrType.TENSOR: return tensorOf(a.t!, `${where} attribute ${a.name}`, external);
    default: throw new ModelError(`${where}: attribute ${a.name} of type ${AttrType[a.type]} is not supported`);
  }
}

function externalOf(t: TensorProto, where: string): { location: string; offset: number; length?: number } {
  const entry = (key: string) => t.externalData.find((e) => e.key === key)?.value;
  const location = entry("location");
  if (!location) throw new ModelError(`${where}: external data without a location`);
  const length = entry("length");
  return { location, offset: Number(entry("offset") ?? 0), length: length === undefined ? undefined : Number(length) };
}

/** Bytes per element of the element types stored as raw bytes. */
const WIDTH: Partial<Record<DataType, number>> = {
  [DataType.FLOAT]: 4, [DataType.FLOAT16]: 2, [DataType.DOUBLE]: 8, [DataType.INT64]: 8, [DataType.UINT64]: 8,
  [DataType.INT32]: 4, [DataType.UINT32]: 4, [DataType.INT16]: 2, [DataType.UINT16]: 2,
  [DataType.INT8]: 1, [DataType.UINT8]: 1, [DataType.BOOL]: 1,
};

/** A tensor's raw bytes: its raw_data, or its slice of an external file. Empty when the values are in typed fields. */
function rawBytes(t: TensorProto, where: string, external: ExternalFiles, size: number): Uint8Array {
  if (t.dataLocation !== TensorProto_DataLocation.EXTERNAL) return t.rawData;
  const { location, offset, length } = externalOf(t, where);
  const file = external.get(location);
  if (!file) throw new ModelError(`${where}: its external data file ${location} was not given (pass it in externalData, or load the model from a URL beside it)`);
  const bytes = length ?? size * WIDTH[t.dataType as DataType]!;
  if (offset + bytes > file.byteLength) {
    throw new ModelError(`${where}: ${location} holds ${file.byteLength} bytes, the tensor needs ${bytes} from offset ${offset} (truncated?)`);
  }
  return file.subarray(offset, offset + bytes);
}

/** A TensorProto's values, from raw_data, an external file or the typed fields. */
export function tensorOf(t: TensorProto, where: string, external: ExternalFiles = new Map()): HostTensor {
  const dtype = dtypeOf(t.dataType, where);
  const shape = t.dims.map(Number);
  const size = sizeOf(shape);
  const raw = rawBytes(t, where, external, size);
  const data = raw.length > 0 ? fromRaw(t.dataType, raw, where) : fromFields(t);
  if (data.length !== size) throw new ModelError(`${where}: ${data.length} values for shape [${shape}]`);
  return t.dataType === DataType.FLOAT16 ? { dtype, shape, data, half: true } : { dtype, shape, data };
}

/** Little-endian raw bytes as the engine's array for the type; copied, so the array is aligned and owns its memory. */
function fromRaw(type: DataType, raw: Uint8Array, where: string): TensorData {
  const width = WIDTH[type]!;
  if (raw.byteLength % width) throw new ModelError(`${where}: ${raw.byteLength} bytes of raw data is no whole number of ${DataType[type]} values`);
  const own = new Uint8Array(raw); // a copy (a Node Buffer's slice() would be a view of its pool)
  const buffer = own.buffer;
  const view = new DataView(buffer);
  const n = raw.byteLength / width;
  switch (type) {
    case DataType.FLOAT: return new Float32Array(buffer);
    case DataType.FLOAT16: return Float32Array.from({ length: n }, (_, i) => halfToFloat(view.getUint16(i * 2, true)));
    case DataType.DOUBLE: return Float32Array.from({ length: n }, (_, i) => view.getFloat64(i * 8, true));
    case DataType.INT8: return new Int8Array(buffer);
    case DataType.UINT8: case DataType.BOOL: return own;
    case DataType.INT64: return Float64Array.from(new BigInt64Array(buffer), Number);
    case DataType.UINT64: return Float64Array.from(new BigUint64Array(buffer), Number);
    case DataType.INT32: return Float64Array.from(new Int32Array(buffer));
    case DataType.UINT32: return Float64Array.from(new Uint32Array(buffer));
    case DataType.INT16: return Float64Array.from(new Int16Array(buffer));
    default: return Float64Array.from(new Uint16Array(buffer)); // UINT16
  }
}

/** Values from the typed fields: float_data, int32_data (the small types and float16's bits), int64_data, ... */
function fromFields(t: TensorProto): TensorData {
  switch (t.dataType) {
    case DataType.FLOAT: return Float32Array.from(t.floatData);
    case DataType.FLOAT16: return Float32Array.from(t.int32Data, halfToFloat);
    case DataType.DOUBLE: return Float32Array.from(t.doubleData);
    case DataType.INT8: return Int8Array.from(t.int32Data);
    case DataType.UINT8: case DataType.BOOL: return Uint8Array.from(t.int32Data);
    case DataType.INT64: return Float64Array.from(t.int64Data, Number);
    case DataType.UINT32: case DataType.UINT64: return Float64Array.from(t.uint64Data, Number);
    default: return Float64Array.from(t.int32Data); // INT32, INT16, UINT16
  }
}
