import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { OpKind, OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { Arena, ArenaWeight, ModelWeight } from "../../src/model/arena.js";
import { compileKernel } from "../../src/model/kernels.js";
import { referenceOp } from "../../src/ops.js";
import { seededFloats } from "../../src/reference.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const [M, K, N] = [8, 16, 12];

describe("weights and kernel bindings in the arena", () => {
  it("a weight takes an arena block only while some binding holds it", () => {
    const arena = new Arena();
    const values = seededFloats(1000, 1);
    const w = new ArenaWeight(arena, () => values);
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
    const x = seededFloats(M * K, 2), b = seededFloats(K * N, 3), w = new ArenaWeight(arena, () => b);
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

  it("a model weight is held once: in JavaScript until a kernel reads it unpacked, then in the arena for good", () => {
    const arena = new Arena();
    const values = seededFloats(1000, 4);
    const w = new ModelWeight(arena, Float32Array.from(values));
    const tensor = w.tensor({ dtype: "float32", shape: [10, 100], data: values });
    expect(tensor.data).toEqual(values);
    expect(arena.usage.liveBytes).toBe(0); // packing kernels read their own copies
    expect(w.hold()).toEqual(w.hold()); // no second copy for a second kernel
    expect(w.resident).toBe(true);
    expect(arena.usage.liveBytes).toBe(4000);
    w.unhold();
    w.unhold();
    expect(arena.usage.liveBytes).toBe(4000); // and it stays
    arena.alloc(1 << 20); // the memory grows: an unshared memory's old views are detached
    expect(tensor.data).toEqual(values);
    expect(tensor.data.buffer).toBe(arena.memory.buffer);
    expect(w.values).toEqual(values);
  });

  it("kernels that read a weight packed in the same layout share one packed copy", () => {
    const arena = new Arena();
    const w = new ModelWeight(arena, seededFloats(64, 5));
    let packs = 0;
    const pack = () => { packs++; return w.values.map((v) => -v); };
    const base = arena.usage.liveBytes;
    const a = arena.holdPacked(w, "x0=8", 64, pack), b = arena.holdPacked(w, "x0=8", 64, pack);
    expect(b).toBe(a);
    expect(packs).toBe(1);
    expect(arena.usage.liveBytes).toBe(base + 256);
    expect(arena.holdPacked(w, "x0=4", 64, pack)).not.toBe(a); // another layout, another copy
    arena.unholdPacked(w, "x0=8", 64);
    expect(arena.f32(a, 64)).toEqual(w.values.map((v) => -v)); // still held once
    arena.unholdPacked(w, "x0=8", 64);
    arena.unholdPacked(w, "x0=4", 64);
    expect(arena.usage.liveBytes).toBe(base);
  });

  it("refuses a kernel made for another op when it is compiled", async () => {
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [M, K, N + 4] });
    await expect(compileKernel(naiveMatmulArtifact("k", [M, K, N]), op)).rejects.toThrow(/offered for matmul/);
  });
});
