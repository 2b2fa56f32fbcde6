import { ModelError, type OnnxGraph } from "./onnx.js";
import { halfToFloat, type HostTensor } from "./tensor.js";

// A run's feeds as the graph holds them, and its outputs as the app gets them (the element types
// of onnxruntime-web's tensors), the same on every backend.

/**
 * A tensor fed to a run: onnxruntime-web's `Tensor` fits, as does `{ data, dims }` with numbers
 * or bigints (a Float32Array, Int32Array, BigInt64Array or a plain array).
 */
export interface TensorLike {
  readonly data: ArrayLike<unknown>;
  readonly dims: readonly number[];
}

/**
 * A model output, row-major, as onnxruntime-web returns them: float32 (float16 and float64
 * outputs too), int64 (BigInt64Array; every wider integer type), bool (0 or 1), int8, uint8.
 */
export interface OutputTensor {
  readonly type: "float32" | "int64" | "bool" | "int8" | "uint8";
  readonly dims: number[];
  readonly data: Float32Array | BigInt64Array | Uint8Array | Int8Array;
}

/** The shapes of a run's feeds by input name; throws a ModelError naming a missing or unknown input. */
export function inputShapes(graph: OnnxGraph, feeds: Readonly<Record<string, TensorLike>>): Record<string, readonly number[]> {
  const names = graph.inputs.map((i) => i.name).join(", ");
  const shapes: Record<string, readonly number[]> = {};
  for (const input of graph.inputs) {
    const feed = feeds[input.name];
    if (!feed) throw new ModelError(`input ${input.name} is missing (inputs: ${names})`);
    shapes[input.name] = [...feed.dims];
  }
  for (const name of Object.keys(feeds)) {
    if (!shapes[name]) throw new ModelError(`${name} is not an input of the model (inputs: ${names})`);
  }
  return shapes;
}

/**
 * The typed arrays a feed of each element type may come in: onnxruntime-web's, and a Float64Array
 * for numbers (how the engine holds integers); a plain array of numbers (or bigints for integers)
 * fits every type.
 */
const FEED_ARRAYS: Record<HostTensor["dtype"], readonly string[]> = {
  float32: ["Float32Array", "Float64Array"], int64: ["BigInt64Array", "Int32Array", "Float64Array"], bool: ["Uint8Array"],
  int8: ["Int8Array"], uint8: ["Uint8Array"],
};

/**
 * A feed's elements as the engine holds the input's type; a ModelError names a feed of another
 * type. A float16 input (`half`) also takes its values' bits in a Uint16Array, as onnxruntime-web
 * holds float16 tensors. A float32 input's Float32Array is the feed's own (read, never written: a
 * decode step's past needs no copy before the arena's).
 */
export function toHost(name: string, dtype: HostTensor["dtype"], data: ArrayLike<unknown>, half = false): HostTensor["data"] {
  if (half && data instanceof Uint16Array) return Float32Array.from(data, halfToFloat);
  if (dtype === "float32" && !half && data instanceof Float32Array) return data;
  const array = ArrayBuffer.isView(data) ? data.constructor.name : undefined;
  if (array && !FEED_ARRAYS[dtype].includes(array)) {
    const accepted = [...FEED_ARRAYS[dtype], ...(half ? ["Uint16Array (float16 bits)"] : []), "an array of numbers"];
    throw new ModelError(`input ${name}: ${half ? "float16" : dtype} expected (${accepted.join(", ")}), got a${/^[AEIOU]/.test(array) ? "n" : ""} ${array}`);
  }
  const kind = data.length ? typeof data[0] : "number";
  if (kind !== "number" && !(kind === "bigint" && dtype !== "float32")) throw new ModelError(`input ${name}: ${dtype} elements must be numbers${dtype === "float32" ? "" : " or bigints"}, got ${kind}`);
  const values = kind === "bigint" ? Array.from(data as ArrayLike<bigint>, Number) : (data as ArrayLike<number>);
  // a typed array's constructor copies another's elements in one go (`from` iterates them one by one)
  if (dtype === "float32") return ArrayBuffer.isView(values) ? new Float32Array(values as Float32Array) : Float32Array.from(values);
  if (dtype === "int8") return Int8Array.from(values);
  return dtype === "bool" || dtype === "uint8" ? Uint8Array.from(values) : Float64Array.from(values);
}

export function fromHost(t: HostTensor): OutputTensor["data"] {
  if (t.dtype === "float32") return new Float32Array(t.data as Float32Array);
  if (t.dtype === "int8") return Int8Array.from(t.data);
  return t.dtype === "int64" ? BigInt64Array.from(t.data, (x) => BigInt(x)) : Uint8Array.from(t.data);
}
