// Hand-assembled Wasm modules that follow the kernel ABI v1, for tests.
import { create } from "@bufbuild/protobuf";
import { Backend, KernelArtifactSchema, OpKind, type KernelArtifact } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";

/** Unsigned LEB128. */
export const uleb = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...uleb(n >>> 7)]);

/** Signed LEB128 (i32.const immediates). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const utf8 = (s: string) => [...new TextEncoder().encode(s)];
const name = (s: string) => [...uleb(utf8(s).length), ...utf8(s)];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

const I32_CONST = 0x41, LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;
const I32_ADD = 0x6a, I32_MUL = 0x6c, I32_LT_U = 0x49, F32_ADD = 0x92, F32_MUL = 0x94;
const LOOP_VOID = [0x03, 0x40], END = 0x0b, BR_IF_0 = [0x0d, 0x00];
const F32_LOAD = [0x2a, 0x02, 0x00], F32_STORE = [0x38, 0x02, 0x00];
const i32 = (n: number) => [I32_CONST, ...sleb(n)];
const get = (l: number) => [LOCAL_GET, l];

/**
 * A module with the ABI's shape: imports env.memory, exports `entry` (i32, i32, i32) -> (),
 * and carries `metadata` in a `jitzoo.abi` custom section (left out when `metadata` is undefined).
 */
export function abiModule(entry: string, body: number[], locals: number[][], metadata?: string): Uint8Array {
  const code = [...uleb(locals.length), ...locals.flat(), ...body, END];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]),
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name(entry), 0x00, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
    ...(metadata === undefined ? [] : section(0, [...name("jitzoo.abi"), ...utf8(metadata)])),
  ]);
}

/**
 * A naive ABI v1 matmul for a fixed [M, K, N]: for i, for j, acc = Σk A[i,k]·B[k,j]; C[i,j] = acc·scale.
 * `scale` other than 1 makes a wrong kernel.
 */
export function naiveMatmulWasm(m: number, k: number, n: number, scale = 1, metadata?: string): Uint8Array {
  const [A, B, C, I, J, K, ACC] = [0, 1, 2, 3, 4, 5, 6];
  const step = (local: number, limit: number) => [...get(local), ...i32(1), I32_ADD, LOCAL_TEE, local, ...i32(limit), I32_LT_U, ...BR_IF_0];
  const address = (base: number, row: number, rowLength: number, col: number) =>
    [...get(base), ...get(row), ...i32(rowLength), I32_MUL, ...get(col), I32_ADD, ...i32(4), I32_MUL, I32_ADD];
  const scaled = scale === 1 ? [] : [0x43, ...new Uint8Array(new Float32Array([scale]).buffer), F32_MUL];
  const body = [
    ...i32(0), LOCAL_SET, I,
    ...LOOP_VOID,
    ...i32(0), LOCAL_SET, J,
    ...LOOP_VOID,
    0x43, 0, 0, 0, 0, LOCAL_SET, ACC,
    ...i32(0), LOCAL_SET, K,
    ...LOOP_VOID,
    ...get(ACC),
    ...address(A, I, k, K), ...F32_LOAD,
    ...address(B, K, n, J), ...F32_LOAD,
    F32_MUL, F32_ADD, LOCAL_SET, ACC,
    ...step(K, k),
    END,
    ...address(C, I, n, J), ...get(ACC), ...scaled, ...F32_STORE,
    ...step(J, n),
    END,
    ...step(I, m),
    END,
  ];
  return abiModule("matmul", body, [[3, 0x7f], [1, 0x7d]], metadata);
}

/** The metadata_json of a matmul kernel, keys in the ABI's order. */
export function matmulMetadata(m: number, k: number, n: number, schedule: Record<string, unknown> = {}): string {
  return JSON.stringify({
    abi: 1, op: "matmul", shape: [m, k, n], entry: "matmul", operands: ["A", "B", "C"],
    operandShapes: { A: [m, k], B: [k, n], C: [m, n] }, schedule, flops: 2 * m * k * n,
  });
}

/** A KernelArtifact around a naive matmul kernel (wrong when `scale` is not 1). */
export function naiveMatmulArtifact(kernelId: string, shape: [number, number, number], scale = 1): KernelArtifact {
  const metadata = matmulMetadata(...shape, { id: kernelId });
  return create(KernelArtifactSchema, {
    ref: { kernelId, backend: Backend.WASM, op: { kind: OpKind.MATMUL, shape }, abiVersion: 1 },
    code: { case: "wasm", value: naiveMatmulWasm(...shape, scale, metadata) },
    metadataJson: metadata,
  });
}

/**
 * A split kernel (ABI v2) of `add` over [n] in units of one element: imports a shared env.memory
 * and exports `add(a, b, c, first, end)`, computing c[i] = a[i] + b[i] for i in [first, end).
 * `trapAt`: the call traps when its range holds that element (an unreachable), as a broken kernel would
 * (`Infinity`: every call with a unit to compute traps).
 */
export function splitAddWasm(trapAt = -1): Uint8Array<ArrayBuffer> {
  const at = (param: number) => [...get(param), ...get(3), ...i32(4), I32_MUL, I32_ADD]; // param + 4 * i
  // if i == trapAt (every i when trapAt is Infinity): unreachable
  const trap = trapAt < 0 ? [] : trapAt === Infinity ? [0x00] : [...get(3), ...i32(trapAt), 0x46, 0x04, 0x40, 0x00, END];
  const body = [
    0x02, 0x40, ...get(3), ...get(4), I32_LT_U, 0x45, 0x0d, 0x00, // i >= end: nothing to do
    ...LOOP_VOID, ...trap,
    ...at(2), ...at(0), ...F32_LOAD, ...at(1), ...F32_LOAD, F32_ADD, ...F32_STORE,
    ...get(3), ...i32(1), I32_ADD, LOCAL_TEE, 3, ...get(4), I32_LT_U, ...BR_IF_0,
    END, END,
  ];
  const code = [0, ...body, END];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x03, 1, ...uleb(65536)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name("add"), 0, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
  ]);
}
