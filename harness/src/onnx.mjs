// One-product ONNX models (MatMul; onnxruntime's dynamic int8 product), encoded by hand: enough
// protobuf for onnxruntime-web to load.

function varint(out, value) {
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
}

class Message {
  constructor() { this.bytes = []; }
  int(field, value) { varint(this.bytes, field << 3); varint(this.bytes, value); return this; }
  raw(field, data) { varint(this.bytes, (field << 3) | 2); varint(this.bytes, data.length); for (const b of data) this.bytes.push(b); return this; }
  string(field, s) { return this.raw(field, new TextEncoder().encode(s)); }
  message(field, m) { return this.raw(field, m.bytes); }
  finish() { return new Uint8Array(this.bytes); }
}

const FLOAT = 1;
const UINT8 = 2;
const INT8 = 3;

function node(opType, inputs, outputs, attributes = [], domain = '') {
  const m = new Message();
  for (const i of inputs) m.string(1, i);
  for (const o of outputs) m.string(2, o);
  m.string(3, outputs[0]).string(4, opType);
  for (const a of attributes) m.message(5, a);
  if (domain) m.string(7, domain);
  return m;
}

/** An integer attribute. */
const intAttribute = (name, value) => new Message().string(1, name).int(3, value).int(20, 2);

/** An attribute of integers. */
function intsAttribute(name, values) {
  const m = new Message().string(1, name);
  for (const v of values) m.int(8, v);
  return m.int(20, 7);
}

function initializer(name, shape, type, array) {
  const tensor = new Message();
  for (const d of shape) tensor.int(1, d);
  return tensor.int(2, type).string(8, name).raw(9, new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
}

function valueInfo(name, shape) {
  const dims = new Message();
  for (const d of shape) dims.message(1, new Message().int(1, d));
  const tensor = new Message().int(1, FLOAT).message(2, dims);
  return new Message().string(1, name).message(2, new Message().message(1, tensor));
}

/**
 * MatMul of A (an input) and B, C = A × B with numpy batching rules; `constantB` (a Float32Array)
 * makes B an initializer (weights the runtime may pre-pack), else B is a second input.
 */
export function matmulModel(aShape, bShape, cShape, constantB) {
  const graph = new Message()
    .message(1, new Message().string(1, 'A').string(1, 'B').string(2, 'C').string(3, 'matmul').string(4, 'MatMul'))
    .string(2, 'jitzoo-peer');
  if (constantB) {
    const tensor = new Message();
    for (const d of bShape) tensor.int(1, d);
    tensor.int(2, FLOAT).string(8, 'B').raw(9, new Uint8Array(constantB.buffer, constantB.byteOffset, constantB.byteLength));
    graph.message(5, tensor);
  }
  graph.message(11, valueInfo('A', aShape));
  if (!constantB) graph.message(11, valueInfo('B', bShape));
  graph.message(12, valueInfo('C', cShape));
  return new Message().int(1, 8).message(8, new Message().string(1, '').int(2, 17)).message(7, graph).finish();
}

/**
 * onnxruntime's dynamic int8 product as its quantizer writes it: DynamicQuantizeLinear of A (an
 * input), MatMulInteger with B (int8 [K, N], zero point 0), Cast to float, Mul by A's scale times
 * BScale (per column). What a `matmul_int8` kernel computes.
 */
export function int8MatmulModel(aShape, bShape, cShape, b, bScale) {
  const to = new Message().string(1, 'to').int(3, FLOAT).int(20, 2);
  const graph = new Message()
    .message(1, node('DynamicQuantizeLinear', ['A'], ['q', 'a_scale', 'a_zero']))
    .message(1, node('MatMulInteger', ['q', 'B', 'a_zero'], ['sums']))
    .message(1, node('Cast', ['sums'], ['sums_f'], [to]))
    .message(1, node('Mul', ['a_scale', 'BScale'], ['scales']))
    .message(1, node('Mul', ['sums_f', 'scales'], ['C']))
    .string(2, 'jitzoo-peer-int8')
    .message(5, initializer('B', bShape, INT8, b))
    .message(5, initializer('BScale', [bShape[1]], FLOAT, bScale))
    .message(11, valueInfo('A', aShape))
    .message(12, valueInfo('C', cShape));
  return new Message().int(1, 8).message(8, new Message().string(1, '').int(2, 17)).message(7, graph).finish();
}

/**
 * ONNX's Conv of A (an input, `[N, C, H, W]`) by B (the weights, an initializer) with the kernel's
 * window (metadata `window`: strides, dilations, pads top-left-bottom-right, group). What a `conv`
 * kernel without an epilogue computes.
 */
export function convModel(meta, weights) {
  const { A, B, C } = meta.operandShapes, w = meta.window;
  const graph = new Message()
    .message(1, node('Conv', ['A', 'B'], ['C'], [intsAttribute('kernel_shape', B.slice(2)), intsAttribute('strides', w.strides),
      intsAttribute('dilations', w.dilations), intsAttribute('pads', [w.pads[0], w.pads[1], w.pads[2], w.pads[3]]), intAttribute('group', w.group)]))
    .string(2, 'jitzoo-peer-conv')
    .message(5, initializer('B', B, FLOAT, weights))
    .message(11, valueInfo('A', A))
    .message(12, valueInfo('C', C));
  return new Message().int(1, 8).message(8, new Message().string(1, '').int(2, 17)).message(7, graph).finish();
}

/**
 * onnxruntime's 4-bit product as its MatMulNBits quantizer writes it: `com.microsoft.MatMulNBits`
 * (bits 4, block_size 32) of A (an input) with B (`[N, blocks, 16]` bytes), its scales and its
 * 4-bit zero points. What a `matmul_q4` kernel computes; `bShape` is the kernel's `[N, blocks × 16]`.
 */
export function q4MatmulModel(aShape, bShape, cShape, b, scales, zeros) {
  const [n, blockBytes] = bShape, k = aShape.at(-1), blocks = blockBytes / 16;
  const graph = new Message()
    .message(1, node('MatMulNBits', ['A', 'B', 'scales', 'zeros'], ['C'],
      [intAttribute('K', k), intAttribute('N', n), intAttribute('bits', 4), intAttribute('block_size', 32)], 'com.microsoft'))
    .string(2, 'jitzoo-peer-q4')
    .message(5, initializer('B', [n, blocks, 16], UINT8, b))
    .message(5, initializer('scales', [n * blocks], FLOAT, scales))
    .message(5, initializer('zeros', [zeros.length], UINT8, zeros))
    .message(11, valueInfo('A', aShape))
    .message(12, valueInfo('C', cShape));
  return new Message().int(1, 8).message(8, new Message().string(1, '').int(2, 17))
    .message(8, new Message().string(1, 'com.microsoft').int(2, 1)).message(7, graph).finish();
}
