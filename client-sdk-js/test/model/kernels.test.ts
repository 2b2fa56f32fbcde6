import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { OpKind, OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { Arena, ArenaWeight, ModelWeight, packedWords, unpackPanels, type Panels } from "../../src/wasm/arena.js";
import { compileKernel } from "../../src/wasm/kernels.js";
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

  it("a model weight is held once: in JavaScript, then its first packed copy, or unpacked in the arena once a kernel reads it so", () => {
    const arena = new Arena();
    const [k, n] = [6, 7];
    const values = seededFloats(k * n, 4);
    const w = new ModelWeight(arena, Float32Array.from(values));
    const panels: Panels = { x0: 4, k, n, transposed: false };
    expect(w.held).toBe("javascript");
    const copy = arena.holdPacked(w, "x0=4", k * n, () => packPanels(w.values, panels), panels);
    expect(w.held).toBe("packed"); // the JavaScript copy is gone
    expect(w.values).toEqual(values); // unpacked when asked for
    expect(arena.holdPacked(w, "x0=2", k * n, () => packPanels(w.values, { ...panels, x0: 2 }), { ...panels, x0: 2 })).not.toBe(copy);
    arena.unholdPacked(w, "x0=4"); // the one copy goes: the values move back first
    expect(w.held).toBe("javascript");
    expect(w.values).toEqual(values);
    const block = w.hold(); // a kernel reads it as it is
    expect(w.held).toBe("arena");
    expect(w.hold()).toEqual(block); // no second copy for a second kernel
    w.unhold();
    arena.alloc(1 << 20); // the memory grows: an unshared memory's old views are detached
    expect(w.values).toEqual(values);
    expect(w.values.buffer).toBe(arena.memory.buffer);
  });

  it("a weight read through the graph keeps its values readable at once", () => {
    const arena = new Arena();
    const values = seededFloats(12, 6);
    const w = new ModelWeight(arena, Float32Array.from(values));
    const tensor = w.tensor({ dtype: "float32", shape: [3, 4], data: values });
    expect(tensor.data).toEqual(values); // a host step's read
    const panels: Panels = { x0: 2, k: 3, n: 4, transposed: true };
    arena.holdPacked(w, "x0=2", 12, () => packPanels(w.values, panels), panels);
    expect(w.held).toBe("javascript");
  });

  it("unpacks panels of B stored as it is or transposed", () => {
    for (const transposed of [false, true]) {
      for (const x0 of [1, 3, 4, 8]) {
        const panels = { x0, k: 5, n: 7, transposed }, b = seededFloats(35, x0);
        expect(unpackPanels(packPanels(b, panels), panels)).toEqual(b);
      }
    }
  });

  it("an int8 B packed in k pairs is held once, as its packed copy, and reads back byte for byte", () => {
    for (const [k, n, x0] of [[5, 7, 4], [6, 9, 8], [1, 3, 12], [33, 20, 16]]) {
      const bytes = Int8Array.from(seededFloats(k * n, k + n), (v) => Math.round(v * 127));
      const words = new Float32Array(Math.ceil(k * n / 4));
      new Int8Array(words.buffer).set(bytes);
      const panels: Panels = { x0, k, n, transposed: false, int8: true };
      const arena = new Arena();
      const w = new ModelWeight(arena, words);
      const at = arena.holdPacked(w, `x0=${x0}`, packedWords(panels), () => packInt8(bytes, panels), panels);
      expect(w.held).toBe("packed");
      expect(new Int8Array(arena.f32(at, packedWords(panels)).buffer, at, packedWords(panels) * 4)).toEqual(new Int8Array(packInt8(bytes, panels).buffer));
      expect(new Int8Array(w.values.buffer, w.values.byteOffset, k * n)).toEqual(bytes);
      const tensor = w.tensor({ dtype: "int8", shape: [k, n], data: bytes });
      expect(tensor.data).toEqual(bytes); // read through the graph: back in JavaScript for good
      expect(w.held).toBe("javascript");
    }
  });

  it("a 4-bit B packed block by block is held once, as its packed copy, and reads back byte for byte", () => {
    for (const [k, n] of [[32, 3], [33, 2], [384, 5]]) {
      const stored = Uint8Array.from(seededFloats(n * Math.ceil(k / 32) * 16, k + n), (v) => Math.floor((v + 1) * 128));
      const panels: Panels = { x0: 2, k, n, transposed: false, q4: true };
      const arena = new Arena();
      const w = new ModelWeight(arena, new Float32Array(stored.slice().buffer));
      const at = arena.holdPacked(w, "q4", packedWords(panels), () => packQ4(stored), panels);
      expect(w.held).toBe("packed");
      expect(packedWords(panels) * 4).toBe(stored.length); // packed in place of size: still 4 bits a weight
      expect(new Uint8Array(arena.f32(at, packedWords(panels)).buffer, at, stored.length)).toEqual(new Uint8Array(packQ4(stored).buffer));
      expect(new Uint8Array(w.values.buffer, w.values.byteOffset, stored.length)).toEqual(stored);
    }
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
    arena.unholdPacked(w, "x0=8");
    expect(arena.f32(a, 64)).toEqual(w.values.map((v) => -v)); // still held once
    arena.unholdPacked(w, "x0=8");
    arena.unholdPacked(w, "x0=4");
    expect(arena.usage.liveBytes).toBe(base);
  });

  it("refuses a kernel made for another op when it is compiled", async () => {
    const op = create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [M, K, N + 4] });
    await expect(compileKernel(naiveMatmulArtifact("k", [M, K, N]), op)).rejects.toThrow(/offered for matmul/);
  });
});

/** An int8 B's pack_b layout (docs/kernel-abi.md, matmul_int8), written out: per panel, per k pair, per group of 4 columns, 8 bytes. */
function packInt8(b: Int8Array, { x0, k, n }: Panels): Float32Array {
  const out = new Int8Array(Math.ceil(n / x0) * Math.ceil(k / 2) * 2 * x0);
  let o = 0;
  for (let c0 = 0; c0 < n; c0 += x0) {
    for (let p = 0; p < k; p += 2) {
      for (let g = 0; g < x0; g += 4) {
        for (let j = c0 + g; j < c0 + g + 4; j++) {
          for (const r of [p, p + 1]) out[o++] = j < n && r < k ? b[r * n + j] : 0;
        }
      }
    }
  }
  return new Float32Array(out.buffer);
}

/** A 4-bit B's pack_b layout (docs/kernel-abi.md, matmul_q4), written out: per block, byte 4L + j holds k = 8j + L and 8j + 4 + L. */
function packQ4(stored: Uint8Array): Float32Array {
  const out = new Uint8Array(stored.length);
  const q = (block: number, p: number) => (stored[block + (p >> 1)] >> ((p & 1) * 4)) & 15;
  for (let block = 0; block < stored.length; block += 16) {
    for (let lane = 0; lane < 4; lane++) {
      for (let j = 0; j < 4; j++) out[block + 4 * lane + j] = q(block, 8 * j + lane) | (q(block, 8 * j + 4 + lane) << 4);
    }
  }
  return new Float32Array(out.buffer);
}

/** pack_b's layout (docs/kernel-abi.md), written out: panels of x0 columns of the logical [K, N] B, K rows each. */
function packPanels(b: Float32Array, { x0, k, n, transposed }: Panels): Float32Array {
  const out = new Float32Array(k * n);
  let o = 0;
  for (let c0 = 0; c0 < n; c0 += x0) {
    for (let r = 0; r < k; r++) for (let j = 0; j < Math.min(x0, n - c0); j++) out[o++] = transposed ? b[(c0 + j) * k + r] : b[r * n + c0 + j];
  }
  return out;
}
