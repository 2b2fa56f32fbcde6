// The SDK's generic kernels (shapes given at call time, from the compiler at build time): every
// product kind, B stored either way or shared by the batches, every epilogue step, against the
// float64 reference on seeded operands; a compact weight widened once however many binds read it.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpilogueKind, OpKind, OpSpecSchema, type OpSpec } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { GENERIC_KERNELS } from "../../src/gen/generic-kernels.js";
import { inputNames, operandShapes, operandTypes, operandView, opKey, opTolerance, referenceOp, scratchOperands, seededWords, wordsOf } from "../../src/ops.js";
import { maxRelativeError, TOLERANCE } from "../../src/reference.js";
import { Arena, ArenaWeight, SHARED_MAX_PAGES } from "../../src/wasm/arena.js";
import { baseKernel, genericKernel } from "../../src/wasm/generic.js";
import type { Operand, Weight } from "../../src/wasm/kernels.js";

const E = EpilogueKind;
const op = (kind: OpKind, shape: number[], more: { transposeB?: boolean; broadcastB?: boolean; epilogue?: [EpilogueKind, number?][] } = {}): OpSpec =>
  create(OpSpecSchema, {
    kind, shape, transposeB: more.transposeB, broadcastB: more.broadcastB,
    epilogue: (more.epilogue ?? []).map(([kind, value]) => ({ kind, value: value ?? 0 })),
  });

const CASES: OpSpec[] = [
  op(OpKind.MATMUL, [1, 1, 1]),
  op(OpKind.MATMUL, [13, 17, 29], { epilogue: [[E.BIAS], [E.GELU_ERF], [E.RESIDUAL]] }),
  op(OpKind.MATMUL, [6, 40, 24], { transposeB: true, epilogue: [[E.SCALE, 0.125], [E.BIAS], [E.RELU]] }),
  op(OpKind.MATMUL, [9, 33, 16], { epilogue: [[E.GELU_TANH], [E.ROUND_HALF]] }),
  op(OpKind.MATMUL, [3, 20, 10], { epilogue: [[E.SILU]] }),
  op(OpKind.BATCH_MATMUL, [3, 7, 16, 9], { transposeB: true, epilogue: [[E.SCALE, 0.25], [E.RESIDUAL]] }),
  op(OpKind.BATCH_MATMUL, [4, 5, 11, 12]),
  op(OpKind.BATCH_MATMUL, [2, 5, 11, 12], { broadcastB: true, epilogue: [[E.BIAS]] }),
  op(OpKind.MATMUL_F16, [5, 24, 20], { epilogue: [[E.BIAS]] }),
  op(OpKind.MATMUL_Q4, [4, 70, 12], { epilogue: [[E.RESIDUAL]] }),
  op(OpKind.MATMUL_INT8, [7, 30, 16], { epilogue: [[E.BIAS], [E.GELU_ERF]] }),
];

/** Binds the op's generic kernel over seeded operands: activations in the arena, constants (B, Bias, scales) as weights. */
function bound(spec: OpSpec, arena: Arena, weightsOf: (name: string, words: Float32Array) => Weight = (_n, words) => new ArenaWeight(arena, () => words)) {
  const words = seededWords(spec, operandShapes(spec));
  const constant = (name: string) => name !== "A" && name !== "Residual" && !(spec.kind === OpKind.BATCH_MATMUL && !spec.broadcastB && name === "B");
  const operands: Record<string, Operand> = {};
  const weights: Record<string, Weight> = {};
  for (const [name, shape] of operandShapes(spec)) {
    const floats = wordsOf(operandTypes(spec)[name] ?? "float32", shape.reduce((a, b) => a * b, 1));
    if (words[name] && constant(name)) weights[name] = weightsOf(name, words[name]);
    else if (!scratchOperands(spec).includes(name)) {
      operands[name] = { offset: arena.alloc(floats * 4), floats };
      if (words[name]) arena.f32(operands[name].offset, floats).set(words[name]);
    }
  }
  const kernel = genericKernel(spec, arena)!;
  const inputs = Object.fromEntries(inputNames(spec).map((n) => [n, operandView(spec, n, words[n])]));
  const unbound = arena.usage.liveBytes;
  return { kernel, binding: kernel.bind({ operands, weights }), c: operands.C, want: referenceOp(spec, inputs), unbound };
}

describe("generic kernels", () => {
  it.each(CASES.map((spec) => [opKey(spec), spec] as const))("%s matches the reference", (_key, spec) => {
    const arena = new Arena();
    const { kernel, binding, c, want, unbound } = bound(spec, arena);
    expect([kernel.id, kernel.source]).toEqual(["generic", "generic"]);
    arena.f32(c.offset, c.floats).fill(NaN); // every element of C is written
    binding.call();
    binding.call(); // and again: nothing accumulates across calls
    const tolerance = opTolerance(spec, TOLERANCE);
    expect(maxRelativeError(arena.f32(c.offset, c.floats), want)).toBeLessThanOrEqual(tolerance);
    binding.release();
    expect(arena.usage.liveBytes).toBe(unbound); // the weights it held, its widened or quantized copies: all freed
  });

  it("widens a compact weight once for every bind that reads it, and frees it with the last", () => {
    const spec = op(OpKind.MATMUL_Q4, [2, 64, 8]);
    const arena = new Arena();
    const shared = new Map<string, Weight>();
    const weightOf = (name: string, words: Float32Array) => shared.get(name) ?? shared.set(name, new ArenaWeight(arena, () => words)).get(name)!;
    const first = bound(spec, arena, weightOf);
    const afterFirst = arena.usage.liveBytes;
    const second = bound(spec, arena, weightOf);
    const widened = 64 * 8 * 4;
    // the second bind takes its own A and C (and nothing for B): less than the first's widened copy more
    expect(arena.usage.liveBytes - afterFirst).toBeLessThan(widened);
    second.binding.call();
    expect(maxRelativeError(arena.f32(second.c.offset, second.c.floats), second.want)).toBeLessThanOrEqual(TOLERANCE);
    first.binding.release();
    second.binding.call(); // the widened copy outlives the first bind
    expect(maxRelativeError(arena.f32(second.c.offset, second.c.floats), second.want)).toBeLessThanOrEqual(TOLERANCE);
    second.binding.release();
  });

  it("runs on a shared memory (a model on threads), and leaves the other ops to the reference", () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: SHARED_MAX_PAGES, shared: true });
    const module = new WebAssembly.Module(Uint8Array.from(atob(GENERIC_KERNELS.shared), (ch) => ch.charCodeAt(0)));
    const { matmul } = new WebAssembly.Instance(module, { env: { memory } }).exports as { matmul: (...args: number[]) => void };
    const f = new Float32Array(memory.buffer);
    f.set([1, 2, 3, 4], 16); // A [2, 2] at 64, B [2, 1] at 128: C at 192
    f.set([5, 6], 32);
    matmul(64, 128, 192, 2, 2, 1);
    expect(Array.from(f.subarray(48, 50))).toEqual([17, 39]);

    const softmax = op(OpKind.SOFTMAX, [4, 8]);
    expect(genericKernel(softmax, new Arena())).toBeUndefined();
    expect(baseKernel(softmax, new Arena()).source).toBe("reference");
  });
});
