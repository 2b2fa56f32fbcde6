// generate() through the suite (Node, the private stack): a KV-cache decoder's tokens on the
// suite's kernels are the reference kernels' tokens; its prefill waits for the Welcome's kernels,
// its decode steps never do: every past length of a bucket runs the bucket's attention ops, which
// with the one-row products (met every step) are tuned from their second step on, and all end on
// generated kernels. A plain 4-bit decoder with the cache withKvCache() builds decodes on one-row
// 4-bit kernels of its own.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { withKvCache } from "../../src/graph/kv-cache.js";
import { loadModel } from "../../src/load.js";
import { REAL_EXPORTS, realExports } from "../support/real-exports.js";
import { GATEWAY } from "./support.js";

const PROMPT = [5, 17, 250, 3, 99];

describe.skipIf(!GATEWAY || realExports("tiny").length === 0)("generate() on the suite's kernels", () => {
  it("gives the reference kernels' tokens; decode steps tune what they meet again without waiting for the gateway", async () => {
    const bytes = readFileSync(join(REAL_EXPORTS, "tiny", "gpt2_kv.onnx"));
    const sampling = { maxNewTokens: 24, temperature: 1, seed: 9 };
    const reference = await loadModel(bytes, { worker: false, store: null });
    const want = await reference.generate(PROMPT, sampling);
    const model = await loadModel(bytes, { gateway: GATEWAY, fingerprint: `e2e-generate-${randomUUID()}`, worker: false, store: null });
    const got = await model.generate(PROMPT, sampling);
    expect(got.tokens).toEqual(want.tokens);
    expect(got.decodeTokensPerSecond).toBeGreaterThan(0);
    // past lengths 5 to 28, one bucket: a softmax over 32 positions for every decode step, beside the prompt's
    expect(model.stats().ops.filter((op) => op.key.startsWith("softmax|")).map((op) => op.op.shape[1]).sort((a, b) => a - b)).toEqual([5, 32]);
    // met again by the next generations, every op (the one-row products, the bucket's attention)
    // takes a generated kernel, the tokens unchanged
    const onReference = () => model.stats().ops.filter((op) => op.source !== "wasm").map((op) => op.key);
    // (by time, not a count of generations: the kernels arrive when codegen has made them, later on a slow machine)
    for (const deadline = Date.now() + 60_000; onReference().length && Date.now() < deadline; await sleep(20)) {
      expect((await model.generate(PROMPT, sampling)).tokens).toEqual(want.tokens);
    }
    expect(onReference()).toEqual([]);
    // a decode step's products are matrix-vector products of their own (M = 1), not a prefill kernel's uKernel run on padded rows
    expect(model.stats().ops.filter((op) => /^matmul\|1x/.test(op.key)).length).toBeGreaterThanOrEqual(4);
    expect(model.stats().ops.filter((op) => op.key.startsWith("matmul|") && !/^matmul\|(1|5)x/.test(op.key)).map((op) => op.key)).toEqual([]);
    expect(model.stats().notes).toEqual([]);
    await model.close();
  }, 120_000);

  it("decodes a plain 4-bit decoder with the cache built around it on one-row 4-bit kernels of its own", async () => {
    const bytes = withKvCache(readFileSync(join(REAL_EXPORTS, "tiny", "llama_q4.onnx")));
    const greedy = { maxNewTokens: 12 };
    const want = await (await loadModel(bytes, { worker: false, store: null })).generate(PROMPT, greedy);
    const model = await loadModel(bytes, { gateway: GATEWAY, fingerprint: `e2e-generate-q4-${randomUUID()}`, worker: false, store: null });
    const oneRow = () => model.stats().ops.filter((op) => op.key.startsWith("matmul_q4|1x"));
    const pending = () => oneRow().length === 0 || oneRow().some((op) => op.source !== "wasm");
    for (const deadline = Date.now() + 60_000; pending() && Date.now() < deadline; await sleep(20)) {
      expect((await model.generate(PROMPT, greedy)).tokens).toEqual(want.tokens);
    }
    // the decode step's 4-bit products (q, k, v, o, gate, up, down: the weights read 4-bit, once a token) on generated kernels
    expect(oneRow().length).toBeGreaterThanOrEqual(4);
    expect(oneRow().filter((op) => op.source !== "wasm")).toEqual([]);
    expect(model.stats().notes).toEqual([]);
    await model.close();
  }, 120_000);
});
