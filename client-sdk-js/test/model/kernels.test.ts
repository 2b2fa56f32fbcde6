import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { OpKind, OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { Arena, ArenaWeight } from "../../src/model/arena.js";
import { compileKernel } from "../../src/model/kernels.js";
import { referenceOp } from "../../src/ops.js";
import { seededFloats } from "../../src/reference.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const [M, K, N] = [8, 16, 12];

describe("weights and kernel bindings in the arena", () => {
  it("a weight takes an arena block only while some binding holds it", () => {
    const arena = new Arena();
    const w = new ArenaWeight(arena, seededFloats(1000, 1));
    const a = w.hold(), b = w.hold();
    expect(b).toEqual(a);
    expect(arena.f32(a.offset, 1000)).toEqual(w.values);
    expect(arena.usage.liveBytes).toBe(4000);
    w.unhold();
    expect(arena.usage.liveBytes).toBe(4000);
    w.unhold();
    expect(arena.usage.liveBytes).toBe(0);
    expect(w.hold().offset).toBe(a.offset); // the freed block is reused, written again
  });

  it("a kernel bound to a weight reads it from the arena, and releasing the binding frees it", async () => {
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [M, K, N] });
    const code = await compileKernel(naiveMatmulArtifact("k", [M, K, N]), op);
    const arena = new Arena();
    const x = seededFloats(M * K, 2), w = new ArenaWeight(arena, seededFloats(K * N, 3));
    const A = { offset: arena.alloc(M * K * 4), floats: M * K }, C = { offset: arena.alloc(M * N * 4), floats: M * N };
    arena.f32(A.offset, A.floats).set(x);
    const before = arena.usage.liveBytes;
    const bound = code.instantiate(arena).bind({ operands: { A, C }, weights: { B: w } });
    expect(arena.usage.liveBytes).toBe(before + K * N * 4);
    bound.call();
    const want = referenceOp(op, { A: x, B: w.values });
    arena.f32(C.offset, C.floats).forEach((v, i) => expect(v).toBeCloseTo(want[i], 4));
    bound.release();
    expect(arena.usage.liveBytes).toBe(before);
  });

  it("refuses a kernel made for another op when it is compiled", async () => {
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [M, K, N + 4] });
    await expect(compileKernel(naiveMatmulArtifact("k", [M, K, N]), op)).rejects.toThrow(/offered for matmul/);
  });
});
