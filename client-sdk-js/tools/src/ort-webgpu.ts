#!/usr/bin/env node
// onnxruntime-web's WebGPU backend on an ONNX model, in Node on Dawn: the peer `bench webgpu`
// times beside jitzoo. It runs in a process of its own (the bench spawns it), so a peer that
// crashes Dawn costs the bench a figure, not its run. Prints one JSON line: the median latency and
// the first output.
//   node ort-webgpu.js MODEL SEQ ROUNDS
import { readFileSync } from "node:fs";

async function main(): Promise<void> {
  const [file, seqArg, roundsArg] = process.argv.slice(2);
  const seq = Number(seqArg), rounds = Number(roundsArg);
  if (!file || !(seq > 0) || !(rounds > 0)) throw new Error("usage: ort-webgpu MODEL SEQ ROUNDS");
  const { create, globals } = await import("webgpu");
  Object.assign(globalThis, globals);
  const gpu = create(["backend=vulkan"]);
  // onnxruntime-web finds WebGPU where a browser has it
  Object.defineProperty(globalThis, "navigator", { value: { gpu, hardwareConcurrency: 1, userAgent: "node" }, configurable: true });
  const ort = await import("onnxruntime-web/webgpu");
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
  const session = await ort.InferenceSession.create(readFileSync(file), { executionProviders: ["webgpu"] });
  const ids = (f: (i: number) => number) => new ort.Tensor("int64", BigInt64Array.from({ length: seq }, (_, i) => BigInt(f(i))), [1, seq]);
  // the SDK's feedsFor: small ids, the last two positions masked, token types zeros then ones
  const feeds = {
    input_ids: ids((i) => (i * 7919 + 101) % 1000), attention_mask: ids((i) => (i < seq - 2 ? 1 : 0)), token_type_ids: ids((i) => (i < seq / 2 ? 0 : 1)),
  };
  const times: number[] = [];
  let output: Float32Array | undefined;
  for (let r = 0; r <= rounds; r++) {
    const t0 = performance.now();
    const out = await session.run(feeds);
    const first = Object.values(out)[0];
    const data = (await first.getData()) as Float32Array;
    if (r > 0) times.push(performance.now() - t0);
    output ??= data;
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ ms: times[Math.floor(times.length / 2)], output: Array.from(output!) }));
}

main().then(() => process.exit(0), (e: Error) => {
  console.error(`onnxruntime-web webgpu: ${e.message}`);
  process.exit(1);
});
