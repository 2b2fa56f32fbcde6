import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { KernelArtifactSchema } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { loadKernel, OperandMemory } from "../src/wasm-executor.js";

const name = (s: string) => [s.length, ...new TextEncoder().encode(s)];
const leb = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...leb(n >>> 7)]);
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];

/**
 * A hand-assembled ABI v1 kernel for 1x1x1 "matmul": C[0] = A[0] * B[0].
 * (import "env" "memory" (memory 1)) (func (export "matmul") (param i32 i32 i32) ...)
 */
function tinyKernel(metadata: string): Uint8Array {
  const body = [0x00, 0x20, 0x02, 0x20, 0x00, 0x2a, 0x02, 0x00, 0x20, 0x01, 0x2a, 0x02, 0x00, 0x94, 0x38, 0x02, 0x00, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]),
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name("matmul"), 0x00, 0]),
    ...section(10, [1, body.length, ...body]),
    ...section(0, [...name("jitzoo.abi"), ...new TextEncoder().encode(metadata)]),
  ]);
}

const METADATA = JSON.stringify({ abi: 1, op: "matmul", shape: [1, 1, 1], entry: "matmul", operands: ["A", "B", "C"],
  operandShapes: { A: [1, 1], B: [1, 1], C: [1, 1] } });

describe("wasm executor", () => {
  it("runs an ABI v1 kernel over operands in the shared memory", async () => {
    const operands = new OperandMemory({ batch: 1, m: 1, k: 1, n: 1 }, new Float32Array([3]), new Float32Array([7]));
    const artifact = create(KernelArtifactSchema, {
      ref: { kernelId: "ktiny" }, code: { case: "wasm", value: tinyKernel(METADATA) }, metadataJson: METADATA,
    });
    const kernel = await loadKernel(artifact, operands);
    operands.poisonOutput();
    expect(Number.isNaN(operands.readOutput()[0])).toBe(true);
    kernel.run();
    expect([...operands.readOutput()]).toEqual([21]);
    expect(kernel.kernelId).toBe("ktiny");
  });

  it("refuses an artifact whose custom section disagrees with its metadata", async () => {
    const operands = new OperandMemory({ batch: 1, m: 1, k: 1, n: 1 }, new Float32Array([1]), new Float32Array([1]));
    const artifact = create(KernelArtifactSchema, {
      code: { case: "wasm", value: tinyKernel(METADATA) }, metadataJson: METADATA.replace("matmul", "other"),
    });
    await expect(loadKernel(artifact, operands)).rejects.toThrow(/disagrees/);
  });
});
