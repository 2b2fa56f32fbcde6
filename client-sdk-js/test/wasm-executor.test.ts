import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { KernelArtifactSchema } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { maxRelativeError, referenceMatMul, seededFloats } from "../src/reference.js";
import { loadKernel, OperandMemory, readMetadata } from "../src/wasm/executor.js";
import { matmulMetadata, naiveMatmulArtifact } from "./support/wasm.js";

const leb = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...leb(n >>> 7)]);
const name = (s: string) => [s.length, ...new TextEncoder().encode(s)];
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];

/**
 * A hand-assembled ABI v1 kernel for a 1x1x1 matmul, C[0] = A[0] * B[0]:
 *   (import "env" "memory" (memory 1))
 *   (func (export "matmul") (param $a i32) (param $b i32) (param $c i32)
 *     (f32.store (local.get $c) (f32.mul (f32.load (local.get $a)) (f32.load (local.get $b)))))
 *   (@custom "jitzoo.abi" metadata)
 */
function tinyKernel(metadata?: string, exportName = "matmul"): Uint8Array {
  const body = [
    0x00, // no locals
    0x20, 0x02, // local.get $c
    0x20, 0x00, 0x2a, 0x02, 0x00, // local.get $a, f32.load align=4
    0x20, 0x01, 0x2a, 0x02, 0x00, // local.get $b, f32.load align=4
    0x94, // f32.mul
    0x38, 0x02, 0x00, // f32.store align=4
    0x0b, // end
  ];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
    ...section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]), // type: (i32, i32, i32) -> ()
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 1]), // import env.memory, min 1 page
    ...section(3, [1, 0]), // one function of type 0
    ...section(7, [1, ...name(exportName), 0x00, 0]), // export it
    ...section(10, [1, body.length, ...body]),
    ...(metadata ? section(0, [...name("jitzoo.abi"), ...new TextEncoder().encode(metadata)]) : []),
  ]);
}

const TINY = matmulMetadata(1, 1, 1);

/**
 * The tiny kernel plus `pack_b(b, dst)`, which writes dst[0] = 2 * B[0]: run with the packed copy,
 * C[0] = A[0] * 2 * B[0]; run with B itself, it would be A[0] * B[0].
 */
function packingKernel(): Uint8Array {
  const multiply = [0x00, 0x20, 0x02, 0x20, 0x00, 0x2a, 0x02, 0x00, 0x20, 0x01, 0x2a, 0x02, 0x00, 0x94, 0x38, 0x02, 0x00, 0x0b];
  const pack = [0x00, 0x20, 0x01, 0x20, 0x00, 0x2a, 0x02, 0x00, 0x43, 0x00, 0x00, 0x00, 0x40, 0x94, 0x38, 0x02, 0x00, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [2, 0x60, 3, 0x7f, 0x7f, 0x7f, 0, 0x60, 2, 0x7f, 0x7f, 0]),
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 1]),
    ...section(3, [2, 0, 1]),
    ...section(7, [2, ...name("matmul"), 0x00, 0, ...name("pack_b"), 0x00, 1]),
    ...section(10, [2, multiply.length, ...multiply, pack.length, ...pack]),
  ]);
}

const PACKED = TINY.replace(/}$/, ',"pack":{"operand":"B","entry":"pack_b","floats":1}}');
const ONE = { batch: 1, m: 1, k: 1, n: 1 };
const tinyArtifact = (bytes: Uint8Array, metadataJson = TINY) =>
  create(KernelArtifactSchema, { ref: { kernelId: "ktiny" }, code: { case: "wasm", value: bytes }, metadataJson });

describe("wasm executor", () => {
  it("runs an ABI v1 kernel over operands in the shared memory", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([3]), new Float32Array([7]));
    const kernel = await loadKernel(tinyArtifact(tinyKernel(TINY)), operands);
    expect(kernel.kernelId).toBe("ktiny");
    expect(kernel.metadata).toMatchObject({ entry: "matmul", operands: ["A", "B", "C"] });
    operands.poisonOutput();
    expect(Number.isNaN(operands.readOutput()[0])).toBe(true);
    kernel.run();
    expect([...operands.readOutput()]).toEqual([21]);
  });

  it("places operands one after another at 16-byte aligned offsets, growing memory to fit", () => {
    const dims = { batch: 1, m: 3, k: 5, n: 7 };
    const operands = new OperandMemory(dims, new Float32Array(15), new Float32Array(35));
    const { A, B, C } = operands.offsets;
    for (const offset of [A, B, C]) expect(offset % 16).toBe(0);
    expect(B).toBeGreaterThanOrEqual(A + 15 * 4);
    expect(C).toBeGreaterThanOrEqual(B + 35 * 4);
    const big = new OperandMemory({ batch: 1, m: 128, k: 256, n: 96 }, new Float32Array(128 * 256), new Float32Array(256 * 96));
    expect(big.memory.buffer.byteLength).toBeGreaterThanOrEqual(big.offsets.C + 128 * 96 * 4);
  });

  it("computes a matmul that matches the reference", async () => {
    const dims = { batch: 1, m: 3, k: 4, n: 5 };
    const a = seededFloats(12, 1);
    const b = seededFloats(20, 2);
    const operands = new OperandMemory(dims, a, b);
    const kernel = await loadKernel(naiveMatmulArtifact("knaive", [3, 4, 5]), operands);
    kernel.run();
    expect(maxRelativeError(operands.readOutput(), referenceMatMul(dims, a, b))).toBeLessThan(1e-6);
  });

  it("packs B once at load and passes the packed copy in B's place", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([3]), new Float32Array([7]));
    const before = operands.memory.buffer.byteLength;
    const kernel = await loadKernel(tinyArtifact(packingKernel(), PACKED), operands);
    kernel.run();
    expect([...operands.readOutput()]).toEqual([42]);
    expect(operands.memory.buffer.byteLength).toBeGreaterThanOrEqual(before);
    const plain = await loadKernel(tinyArtifact(packingKernel(), TINY), operands);
    plain.run();
    expect([...operands.readOutput()]).toEqual([21]);
  });

  it("refuses a pack it cannot honour", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([1]), new Float32Array([1]));
    await expect(loadKernel(tinyArtifact(packingKernel(), PACKED.replace('"entry":"pack_b"', '"entry":"pack_x"')), operands))
      .rejects.toThrow(/no pack function pack_x/);
    await expect(loadKernel(tinyArtifact(packingKernel(), PACKED.replace('"operand":"B"', '"operand":"Bias"')), operands))
      .rejects.toThrow(/packs Bias/);
    await expect(loadKernel(tinyArtifact(packingKernel(), PACKED.replace('"floats":1', '"floats":-3')), operands))
      .rejects.toThrow(/pack size/);
  });

  it("reserves room past the operands, aligned, growing the memory", () => {
    const operands = new OperandMemory(ONE, new Float32Array([1]), new Float32Array([1]));
    const at = operands.reserve(100_000);
    expect(at % 16).toBe(0);
    expect(at).toBeGreaterThan(operands.offsets.C);
    expect(operands.memory.buffer.byteLength).toBeGreaterThanOrEqual(at + 400_000);
    expect(operands.reserve(1)).toBeGreaterThanOrEqual(at + 400_000);
  });

  it("accepts a module without the custom section", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([2]), new Float32Array([4]));
    (await loadKernel(tinyArtifact(tinyKernel()), operands)).run();
    expect([...operands.readOutput()]).toEqual([8]);
  });

  it("refuses a custom section that disagrees with the metadata", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([1]), new Float32Array([1]));
    const artifact = tinyArtifact(tinyKernel(TINY), TINY.replace('"schedule":{}', '"schedule":{"x0":4}'));
    await expect(loadKernel(artifact, operands)).rejects.toThrow(/disagrees/);
  });

  it("refuses kernels that do not fit the operands or the ABI", async () => {
    const operands = new OperandMemory(ONE, new Float32Array([1]), new Float32Array([1]));
    await expect(loadKernel(naiveMatmulArtifact("kbig", [2, 2, 2]), operands)).rejects.toThrow(/does not match/);
    await expect(loadKernel(tinyArtifact(tinyKernel(undefined, "other")), operands)).rejects.toThrow(/no function matmul/);
    await expect(loadKernel(tinyArtifact(new Uint8Array([1, 2, 3])), operands)).rejects.toThrow();
    const wgsl = create(KernelArtifactSchema, { code: { case: "wgsl", value: "" }, metadataJson: TINY });
    await expect(loadKernel(wgsl, operands)).rejects.toThrow(/not a Wasm artifact/);
  });

  it("reads the metadata and refuses other ABI versions", () => {
    expect(readMetadata(tinyArtifact(new Uint8Array()))).toMatchObject({ abi: 1, op: "matmul", shape: [1, 1, 1] });
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":3')))).toThrow(/ABI 3/);
    // ABI v2 is a split kernel's: its metadata must say how it splits, and a v1 kernel cannot
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":2')))).toThrow(/has no split/);
    const split = ',"split":{"axis":"rows","grain":1,"units":1}}';
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), TINY.replace(/}$/, split)))).toThrow(/cannot be split/);
    expect(readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":2').replace(/}$/, split))).split)
      .toEqual({ axis: "rows", grain: 1, units: 1 });
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":2').replace(/}$/, split.replace('"grain":1', '"grain":0')))))
      .toThrow(/not rows or columns in positive grains/);
    const columns = split.replace('"rows"', '"columns"'), sideways = split.replace('"rows"', '"diagonal"');
    expect(readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":2').replace(/}$/, columns))).split?.axis).toBe("columns");
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), TINY.replace('"abi":1', '"abi":2').replace(/}$/, sideways))))
      .toThrow(/not rows or columns/);
    expect(() => readMetadata(tinyArtifact(new Uint8Array(), "not json"))).toThrow(/not JSON/);
  });
});
