// Tiny hand-assembled kernels for the harness's own tests: one right, some wrong in known ways.

const section = (id, body) => [id, body.length, ...body];
const LOAD = [0x2a, 0x02, 0x00];  // f32.load align=4 offset=0
const STORE = [0x38, 0x02, 0x00]; // f32.store align=4 offset=0

/** A module exporting `add(a, b, c)` of shape [1] with the given body (locals 0..2 are the offsets). */
export function addModule(body) {
  const code = [0, ...body, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]),
    ...section(2, [1, 3, ...Buffer.from('env'), 6, ...Buffer.from('memory'), 0x02, 0x00, 0x01]),
    ...section(3, [1, 0]),
    ...section(7, [1, 3, ...Buffer.from('add'), 0, 0]),
    ...section(10, [1, code.length, ...code]),
  ]);
}

/** c[0] = a[0] + b[0]. */
export const correctAdd = () => addModule([0x20, 2, 0x20, 0, ...LOAD, 0x20, 1, ...LOAD, 0x92, ...STORE]);
/** c[0] = a[0] - b[0]. */
export const wrongAdd = () => addModule([0x20, 2, 0x20, 0, ...LOAD, 0x20, 1, ...LOAD, 0x93, ...STORE]);
/** Writes nothing. */
export const silentAdd = () => addModule([]);
/** Right result, plus a stray 0 written just past C. */
export const strayAdd = () => addModule([
  0x20, 2, 0x20, 0, ...LOAD, 0x20, 1, ...LOAD, 0x92, ...STORE,
  0x20, 2, 0x43, 0, 0, 0, 0, 0x38, 0x02, 0x04, // f32.store offset=4
]);

export const addMeta = {
  abi: 1, op: 'add', shape: [1], entry: 'add', operands: ['A', 'B', 'C'],
  operandShapes: { A: [1], B: [1], C: [1] }, flops: 1, transposeB: false, broadcastB: false, epilogue: [],
};

/**
 * A split `add` of shape [n] (ABI v2): `add(a, b, c, first, end)` computes elements [first, end)
 * on a shared memory; `greedy` computes all n whatever the range (each share writes past its own).
 */
export function splitAddModule(n, { greedy = false } = {}) {
  const element = (param) => [0x20, param, 0x20, 3, 0x41, 2, 0x74, 0x6a]; // offset + 4 * i
  const body = [
    ...(greedy ? [0x41, 0, 0x21, 3, 0x41, n, 0x21, 4] : []), // first = 0, end = n
    0x02, 0x40, 0x03, 0x40,
    0x20, 3, 0x20, 4, 0x4f, 0x0d, 1, // i >= end: done
    ...element(2), ...element(0), ...LOAD, ...element(1), ...LOAD, 0x92, ...STORE,
    0x20, 3, 0x41, 1, 0x6a, 0x21, 3, 0x0c, 0,
    0x0b, 0x0b,
  ];
  const code = [0, ...body, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
    // env.memory: shared (limits flag 3), at least 1 page, at most 65536
    ...section(2, [1, 3, ...Buffer.from('env'), 6, ...Buffer.from('memory'), 0x02, 0x03, 0x01, 0x80, 0x80, 0x04]),
    ...section(3, [1, 0]),
    ...section(7, [1, 3, ...Buffer.from('add'), 0, 0]),
    ...section(10, [1, code.length, ...code]),
  ]);
}

export const splitAddMeta = (n) => ({
  ...addMeta, abi: 2, shape: [n], operandShapes: { A: [n], B: [n], C: [n] }, flops: n,
  split: { axis: 'rows', grain: 1, units: n },
});
