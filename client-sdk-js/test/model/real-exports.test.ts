// Every real export in ../shared/models/real-exports/tiny (25 files: text and vision encoders and
// decoders, both torch exporters, int8 / 4-bit / fp16) loads and matches onnxruntime-web on the
// same file and feeds. No gateway here: every op runs its reference kernel (the e2e stage runs
// them on jitzoo kernels from a private stack).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { serveSite } from "../../tools/src/site.js";
import { ModelProtoSchema, StringStringEntryProtoSchema, TensorProto_DataLocation } from "../../src/gen/onnx/onnx_pb.js";
import { fold } from "../../src/graph/fold.js";
import { fuse } from "../../src/graph/fuse.js";
import { loadModel } from "../../src/load.js";
import { decodeModel } from "../../src/graph/onnx.js";
import { ortOutputs } from "../support/models.js";
import { allowed, distance, formOf, fp32Sibling, nameOf, ortLevel, realExports, realFeeds } from "../support/real-exports.js";

const files = realExports("tiny");
const lines: string[] = [];

describe.skipIf(files.length === 0)("real exports: every file loads and matches onnxruntime-web", () => {
  afterAll(() => console.log(`real exports (max |jitzoo − onnxruntime-web| / allowed; int8, 4-bit, fp16: each runtime's distance from the fp32 file):\n  ${lines.join("\n  ")}`));

  it.each(files.map((f) => [nameOf(f), f]))("%s", async (name, file) => {
    const bytes = readFileSync(file);
    const model = await loadModel(bytes, { worker: false, store: null });
    const feeds = realFeeds(model.inputs);
    const ours = await model.run(feeds);
    const form = formOf(file);
    const theirs = await ortOutputs(bytes, feeds, ortLevel(form));
    const reference = form === "fp32" ? undefined : await ortOutputs(readFileSync(fp32Sibling(file)), feeds);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const [output, expected] of Object.entries(theirs)) {
      const { worst, largest } = distance(ours[output].data as Float32Array, expected);
      let line = `${name} ${output}: ${worst.toExponential(2)} / ${allowed(form, largest).toExponential(2)}`;
      if (reference) {
        line += ` (from fp32: jitzoo ${distance(ours[output].data as Float32Array, reference[output]).worst.toExponential(2)}, `
          + `onnxruntime-web ${distance(expected, reference[output]).worst.toExponential(2)})`;
      }
      lines.push(line);
      expect(worst, `${name} ${output}`).toBeLessThanOrEqual(allowed(form, largest));
    }
  });
});

/** What the heavy ops of each exporter's patterns must become: the jitzoo ops (keys) that carry the flops. */
const HEAVY: [string, string[]][] = [
  // the patch embedding (a Conv of stride = kernel) as a MatMul of the patches with its bias
  ["vit", ["matmul|16x192x64|bias"]],
  // SDPA's scalars on Q and K as one scale on Q·Kᵀ, the mask (broadcast over heads) as its residual;
  // GPT-2's Conv1D Gemm through its reshape into the tanh GELU
  ["gpt2", ["batch_matmul|2x16x32x16|transposeB|scale:0.1767767,residual", "matmul|16x64x256|bias,gelu_tanh", "matmul|16x256x64|bias,residual"]],
  ["bert", ["batch_matmul|2x16x32x16|scale:0.1767767,residual", "matmul|16x64x128|bias,gelu_erf", "matmul|16x128x64|bias,residual"]],
  // SiLU into the gate projection
  ["llama", ["matmul|16x64x128|silu", "batch_matmul|2x16x32x16|transposeB|scale:0.1767767,residual"]],
  ["qwen2", ["matmul|16x64x128|silu"]],
  // the 4-bit weights as 4-bit matmuls (kept 4-bit), the int8 ones as int8 matmuls (kept int8),
  // their epilogues fused as the float file's are
  ["bert_q4", ["matmul_q4|16x64x128|bias,gelu_erf", "matmul_q4|16x128x64|bias,residual"]],
  ["llama_q4", ["matmul_q4|16x64x128|silu"]],
  // float16 weights as float16-weight matmuls (kept 16-bit), rounding to float16 in the kernel after
  // each step the file rounds (as onnxruntime does op by op); its GELU (its constants float16) fused
  // as GELU to float16's precision, rounded once
  ["bert_fp16", ["matmul_f16|16x64x64|round_half,bias,round_half,residual,round_half",
    "matmul_f16|16x64x128|round_half,bias,round_half,gelu_erf,round_half",
    "matmul_f16|16x128x64|round_half,bias,round_half,residual,round_half", "batch_matmul|2x16x16x32|round_half"]],
  ["bert_int8", ["matmul_int8|16x64x128|bias,gelu_erf", "matmul_int8|16x128x64|bias,residual"]],
  ["llama_int8", ["matmul_int8|16x64x128|silu"]],
];

describe.skipIf(files.length === 0)("real exports: the heavy ops become jitzoo ops", () => {
  it.each(HEAVY)("%s", async (name, keys) => {
    const model = await loadModel(readFileSync(files.find((f) => nameOf(f) === name)!), { worker: false, store: null });
    await model.run(realFeeds(model.inputs));
    expect(model.stats().ops.map((op) => op.key)).toEqual(expect.arrayContaining(keys));
  });
});

/**
 * A real export saved as hubs ship big models: every initializer's bytes moved to `model.onnx_data`
 * (external data, 64-byte aligned as onnx's save_model writes it).
 */
function withExternalData(bytes: Uint8Array): { model: Uint8Array; data: Uint8Array } {
  const proto = fromBinary(ModelProtoSchema, bytes);
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const t of proto.graph!.initializer) {
    const raw = t.rawData;
    if (raw.length === 0) continue;
    const padded = Math.ceil(raw.length / 64) * 64;
    const chunk = new Uint8Array(padded);
    chunk.set(raw);
    chunks.push(chunk);
    t.externalData = [
      create(StringStringEntryProtoSchema, { key: "location", value: "model.onnx_data" }),
      create(StringStringEntryProtoSchema, { key: "offset", value: String(offset) }),
      create(StringStringEntryProtoSchema, { key: "length", value: String(raw.length) }),
    ];
    t.dataLocation = TensorProto_DataLocation.EXTERNAL;
    t.rawData = new Uint8Array(0);
    offset += padded;
  }
  const data = new Uint8Array(offset);
  chunks.reduce((at, c) => (data.set(c, at), at + c.length), 0);
  return { model: toBinary(ModelProtoSchema, proto), data };
}

describe.skipIf(files.length === 0)("real exports: external data", () => {
  it("loads BERT with its weights in model.onnx_data, fetched beside its URL or given as bytes, with the same outputs", async () => {
    const bytes = readFileSync(files.find((f) => nameOf(f) === "bert")!);
    const { model, data } = withExternalData(bytes);
    const dir = mkdtempSync(join(tmpdir(), "jitzoo-external-"));
    writeFileSync(join(dir, "model.onnx"), model);
    writeFileSync(join(dir, "model.onnx_data"), data);
    const site = await serveSite({ models: { "model.onnx": join(dir, "model.onnx"), "model.onnx_data": join(dir, "model.onnx_data") }, pages: {} });
    try {
      const whole = await loadModel(bytes, { worker: false, store: null });
      const feeds = realFeeds(whole.inputs);
      const want = (await whole.run(feeds)).last_hidden_state.data;
      const byUrl = await loadModel(`${site.url}models/model.onnx`, { worker: false, store: null });
      const given = await loadModel(model, { worker: false, store: null, externalData: { "model.onnx_data": data } });
      expect((await byUrl.run(feeds)).last_hidden_state.data).toEqual(want);
      expect((await given.run(feeds)).last_hidden_state.data).toEqual(want);
    } finally {
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * What the per-inference arithmetic between kernels must become: each pattern one host step
 * (`host/fused.ts`), none of the node-by-node ops it is written in left on the host.
 */
const HOST: [string, string[], string[]][] = [
  ["llama", ["SimplifiedLayerNormalization", "jitzoo.RotateHalf", "jitzoo.ReplaceNaN"], ["Pow", "Sqrt", "Sigmoid", "Neg", "IsNaN"]],
  ["qwen2", ["SimplifiedLayerNormalization", "jitzoo.RotateHalf"], ["Pow", "Sigmoid", "Neg"]],
  ["t5_encoder", ["SimplifiedLayerNormalization"], ["Pow", "ReduceMean"]],
  ["bert", ["jitzoo.ReplaceNaN"], ["IsNaN"]],
];

describe.skipIf(files.length === 0)("real exports: the arithmetic between kernels is one host step per pattern", () => {
  it.each(HOST)("%s", (name, present, absent) => {
    const graph = decodeModel(readFileSync(files.find((f) => nameOf(f) === name)!));
    const shapes = Object.fromEntries(Object.entries(realFeeds(graph.inputs)).map(([k, t]) => [k, t.dims]));
    const ops = fuse(fold(graph, shapes), graph.outputs).steps.flatMap((s) => (s.kind === "host" ? [s.node.opType] : []));
    expect(ops).toEqual(expect.arrayContaining(present));
    for (const op of absent) expect(ops, `${op} left on the host`).not.toContain(op);
  });
});
