#!/usr/bin/env node
// ./jitzoo bench webgpu: the MiniLM-shaped encoder on WebGPU, in Node through Dawn (npm `webgpu`),
// tuned through the suite (a WGSL session for the probed adapter):
//  - every lite-space WGSL kernel the session offers is checked against the reference, and timed;
//  - time to a first inference on a new device kind (every pipeline built then), and on a reload of
//    that kind with every kernel and shader kept (pipelines built while the model loads);
//  - per-inference host time (encoding and submitting) with every op in one submit against one
//    submit per op, and their inference latency, interleaved round by round.
import "@jitzoo/client/node";
import { create } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseOptions, wholeNumber } from "./args.js";
import { record, serveRecording, type Recording } from "./replay.js";
import { feedsFor, runUntilSettled, MemoryKernelStore, loadModel, type Model, type OutputTensor, usePlatform, maxRelativeError, TOLERANCE, median, type GpuModel, DeviceProfileSchema, type OpSpec } from "@jitzoo/client/internal";

const usage = `usage: bench-webgpu [--models DIR] [--seq N] [--rounds N] [--adapter swiftshader|gpu] [--tune-seconds N] [--onnxruntime-web] [--json]
       bench-webgpu --record FILE --for VENDOR/ARCHITECTURE [--models DIR] [--seq N]
       bench-webgpu --replay FILE [options of the first form]
  --models        directory of the ONNX files (default: $JITZOO_MODELS, else .jitzoo/models)
  --seq           sequence length (default 32)
  --rounds        interleaved rounds of batched against per-op submits (default 30)
  --adapter       swiftshader (software Vulkan, from Debian's chromium; the default) or gpu (whatever GPU Dawn finds)
  --tune-seconds  most seconds the new device kind tunes (default 300)
  --onnxruntime-web  also times onnxruntime-web's WebGPU backend on the model (a process of its own: on
                  SwiftShader it crashes Dawn)
  --record        writes the model's WGSL sessions for an adapter (--for nvidia/hopper: its vendor and
                  architecture, WebGPU's default limits) from the running suite into FILE, and stops
  --replay        takes the kernels from such a FILE instead of a gateway: the bench on a machine
                  without the suite (its zoo left out: nothing is stored)`;
const MODEL = "minilm.onnx";
const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

interface Options {
  dir: string; seq: number; rounds: number; adapter: "swiftshader" | "gpu"; tuneSeconds: number; json: boolean; url: string;
  record?: { file: string; vendor: string; architecture: string }; replay?: string; peer: boolean;
}

function parse(argv: string[]): Options {
  const v = parseOptions({ args: argv, strict: true, options: {
    json: { type: "boolean", default: false },
    models: { type: "string", default: process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models") },
    seq: { type: "string", default: "32" },
    rounds: { type: "string", default: "30" },
    adapter: { type: "string", default: "swiftshader" },
    "tune-seconds": { type: "string", default: "300" },
    record: { type: "string" },
    for: { type: "string" },
    replay: { type: "string" },
    "onnxruntime-web": { type: "boolean", default: false },
  } }, usage);
  if (v.adapter !== "swiftshader" && v.adapter !== "gpu") throw new Error(`--adapter must be swiftshader or gpu\n${usage}`);
  const target = v.for?.split("/");
  if (v.record && (target?.length !== 2 || !target[0] || !target[1])) throw new Error(`--record needs --for VENDOR/ARCHITECTURE\n${usage}`);
  if (v.record && v.replay) throw new Error(`--record and --replay exclude each other\n${usage}`);
  return {
    record: v.record ? { file: v.record, vendor: target![0], architecture: target![1] } : undefined, replay: v.replay,
    peer: v["onnxruntime-web"],
    dir: v.models, seq: wholeNumber("seq", v.seq, usage), rounds: wholeNumber("rounds", v.rounds, usage), adapter: v.adapter,
    tuneSeconds: wholeNumber("tune-seconds", v["tune-seconds"], usage), json: v.json,
    url: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
  };
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const first = (out: Record<string, OutputTensor>) => Object.values(out)[0].data as Float32Array;

/** Installs Dawn as the SDK's WebGPU. Its GPU object lives as long as the process (Dawn tears devices down with it). */
async function installDawn(adapter: Options["adapter"]): Promise<void> {
  if (adapter === "swiftshader" && !process.env.VK_ICD_FILENAMES) {
    if (!existsSync(SWIFTSHADER_ICD)) throw new Error(`SwiftShader not found at ${SWIFTSHADER_ICD}: apt-get install -y chromium libvulkan1, or --adapter gpu`);
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  const { create, globals } = await import("webgpu");
  Object.assign(globalThis, globals);
  const gpu = create(["backend=vulkan"]) as GPU;
  usePlatform({ gpu: () => gpu });
}

/** Loads the model and times loading plus its first inference. */
async function firstInference(bytes: Uint8Array, o: Options, fingerprint: string, store: MemoryKernelStore, budget: number): Promise<{ model: Model; ms: number; out: Float32Array }> {
  const t0 = performance.now();
  const model = await loadModel(bytes, { gateway: o.url, fingerprint, backend: "webgpu", store, tuning: { budget } });
  const out = first(await model.run(feedsFor(model, o.seq)));
  return { model, ms: performance.now() - t0, out };
}

/**
 * onnxruntime-web's WebGPU backend on the same model, feeds and adapter, in a process of its own
 * (ort-webgpu.js): its median latency and first output, or why it gave none.
 */
function ortWebGpu(o: Options): { ms: number; output: number[] } | { failed: string } {
  say(`onnxruntime-web's WebGPU backend on the same model (${o.rounds} rounds, a process of its own)`);
  const script = join(dirname(fileURLToPath(import.meta.url)), "ort-webgpu.js");
  const child = spawnSync(process.execPath, [script, join(o.dir, MODEL), String(o.seq), String(o.rounds)],
    { encoding: "utf8", timeout: 600_000, maxBuffer: 256 << 20, env: process.env });
  if (child.status === 0) return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as { ms: number; output: number[] };
  const why = child.signal ? `crashed (${child.signal})` : `failed: ${child.stderr.trim().split("\n").at(-1) ?? `exit ${child.status}`}`;
  say(`  onnxruntime-web webgpu ${why}`);
  return { failed: why };
}

/** Writes the model's WGSL sessions for another adapter (its profile: vendor, architecture, WebGPU's default limits). */
async function recordSessions(o: Options, ops: OpSpec[]): Promise<void> {
  const { file, vendor, architecture } = o.record!;
  say(`recording the WGSL sessions of ${ops.length} ops for ${vendor} ${architecture} into ${file}`);
  const device = create(DeviceProfileSchema, { fingerprint: `recorded-${vendor}-${architecture}`, logicalCores: 1, webgpu: { vendor, architecture } });
  const recording = await record(o.url, device, ops, say);
  writeFileSync(file, JSON.stringify(recording));
  say(`wrote ${recording.ops.reduce((n, r) => n + 1 + r.offers.length, 0)} kernels`);
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const bytes = readFileSync(join(o.dir, MODEL));
  const reference = await loadModel(bytes);
  const expected = first(await reference.run(feedsFor(reference, o.seq)));
  if (o.record) return recordSessions(o, reference.stats().ops.map((op) => op.op));
  let replay: Awaited<ReturnType<typeof serveRecording>> | undefined;
  if (o.replay) {
    replay = await serveRecording(JSON.parse(readFileSync(o.replay, "utf8")) as Recording);
    o.url = replay.url;
    say(`kernels from ${o.replay} (no suite: nothing reaches a zoo)`);
  }
  await installDawn(o.adapter);
  const fingerprint = `bench-webgpu-${randomUUID()}`;
  const store = new MemoryKernelStore();

  say(`${MODEL} at sequence ${o.seq}: a new device kind on WebGPU loads and runs (every pipeline built on the way)`);
  const cold = await firstInference(bytes, o, fingerprint, store, 1);
  const model = cold.model as GpuModel;
  const adapter = model.gpu.profile;
  say(`  adapter ${adapter.vendor || "?"} ${adapter.architecture || "?"}${adapter.software ? " (software)" : ""}: first inference after ${cold.ms.toFixed(0)} ms`);
  let checked = 0, refused = 0, faster = 0;
  model.on("kernel-timed", (e) => { checked++; if (e.faster) faster++; });
  model.on("kernel-refused", (e) => { refused++; say(`  refused ${e.op} ${e.kernelId}: ${e.why}`); });
  say("  tuning every op through the WGSL session (each offered kernel checked against the reference, then timed)");
  const t0 = performance.now();
  let lastNote = 0;
  const tuned = await runUntilSettled(model, feedsFor(model, o.seq), {
    maxSeconds: o.tuneSeconds,
    onRun: (run, s) => {
      if (performance.now() - lastNote < 5000) return;
      lastNote = performance.now();
      say(`  run ${run + 1}: ${s.lastRunMs.toFixed(1)} ms, ${s.ops.filter((op) => op.settled).length}/${s.ops.length} ops settled`);
    },
  });
  const tuneS = (performance.now() - t0) / 1000;
  tuned.notes.forEach((n) => say(`  note: ${n}`));
  if (!tuned.settled) say(`  not every op settled within ${o.tuneSeconds} s: the reload keeps the kernels of the settled ones only`);
  const welcomed = tuned.ops.length; // each op's first kernel was checked before the first run
  await model.close();

  say("a reload of the same device kind: every kernel and shader kept, their pipelines built while it loads");
  const warm = await firstInference(bytes, o, fingerprint, store, 0);
  const reloaded = warm.model.stats();

  say(`batched (one submit an inference) against one submit per op, ${o.rounds} rounds interleaved`);
  const perOp = await loadModel(bytes, { gateway: o.url, fingerprint, backend: "webgpu", store, tuning: { budget: 0 }, gpuDispatch: "per-op" });
  const feeds = feedsFor(warm.model, o.seq);
  const runMs = { batched: [] as number[], perOp: [] as number[] };
  let worst = Math.max(maxRelativeError(cold.out, expected), maxRelativeError(warm.out, expected));
  await perOp.run(feeds);
  for (let r = 0; r < o.rounds; r++) {
    for (const [name, m] of [["batched", warm.model], ["perOp", perOp]] as const) {
      const t = performance.now();
      const out = first(await m.run(feeds));
      runMs[name].push(performance.now() - t);
      worst = Math.max(worst, maxRelativeError(out, expected));
    }
  }
  const batchedGpu = warm.model.stats().gpu!, perOpGpu = perOp.stats().gpu!;
  const peer = o.peer ? ortWebGpu(o) : undefined;
  if (peer && "ms" in peer) worst = Math.max(worst, maxRelativeError(Float32Array.from(peer.output), expected));
  await warm.model.close();
  await perOp.close();

  const row = {
    bench: "webgpu", kernels_from: o.replay ? "recording" : "suite", model: MODEL.replace(".onnx", ""), seq: o.seq, adapter: `${adapter.vendor} ${adapter.architecture}`.trim(), software_adapter: adapter.software,
    timer: tuned.gpu?.timer, timestamp_quantum_ns: tuned.gpu?.timestampQuantumNs,
    ops: tuned.ops.length, ops_settled: tuned.ops.filter((op) => op.settled).length, tune_s: round(tuneS, 1),
    kernels_checked: checked + welcomed, kernels_timed: checked, kernels_faster: faster, kernels_refused: refused,
    dispatches_per_inference: batchedGpu.dispatchesPerRun,
    batched_host_ms: round(batchedGpu.hostMs), per_op_host_ms: round(perOpGpu.hostMs), host_overhead_per_op_over_batched: round(perOpGpu.hostMs / batchedGpu.hostMs, 2),
    batched_run_ms: round(median(runMs.batched)), per_op_run_ms: round(median(runMs.perOp)),
    first_inference_cold_ms: round(cold.ms, 1), first_inference_kept_ms: round(warm.ms, 1),
    pipelines_built_in_runs_cold: tuned.gpu?.pipelinesBuiltInRuns, pipelines_built_in_runs_kept: reloaded.gpu?.pipelinesBuiltInRuns,
    onnxruntime_web_webgpu_ms: peer && "ms" in peer ? round(peer.ms) : null,
    speedup_vs_onnxruntime_web_webgpu: peer && "ms" in peer ? round(peer.ms / median(runMs.batched), 2) : null,
    max_error: worst, outputs_match: worst <= TOLERANCE,
  };
  console.log([
    `adapter                      ${row.adapter}${row.software_adapter ? " (software)" : ""}, timed by ${row.timer} (quantum ${row.timestamp_quantum_ns} ns)`,
    `kernels checked              ${row.kernels_checked} (${row.kernels_timed} timed, ${row.kernels_faster} faster, ${row.kernels_refused} refused) over ${row.ops} ops, ${row.ops_settled} settled in ${row.tune_s} s`,
    `host time per inference      batched ${row.batched_host_ms} ms, per-op ${row.per_op_host_ms} ms: ${row.host_overhead_per_op_over_batched}x (${row.dispatches_per_inference} dispatches)`,
    `inference                    batched ${row.batched_run_ms} ms, per-op ${row.per_op_run_ms} ms`,
    `first inference              cold ${row.first_inference_cold_ms} ms (${row.pipelines_built_in_runs_cold} pipelines built in runs), kept ${row.first_inference_kept_ms} ms (${row.pipelines_built_in_runs_kept})`,
    ...(peer ? [`onnxruntime-web webgpu       ${"ms" in peer ? `${row.onnxruntime_web_webgpu_ms} ms: jitzoo ${row.speedup_vs_onnxruntime_web_webgpu}x` : peer.failed}`] : []),
    `outputs                      ${row.outputs_match ? "match" : "DIFFER from"} the reference (max error ${row.max_error.toExponential(2)})`,
  ].join("\n"));
  if (o.json) console.log(JSON.stringify(row));
  (cold.model as GpuModel).gpu.close();
  (warm.model as GpuModel).gpu.close();
  (perOp as GpuModel).gpu.close();
  await replay?.close();
}

// the exit is explicit: a replayed gateway's server and Dawn's instance would keep the process alive
main().then(() => process.exit(0), (e: Error) => {
  console.error(`bench webgpu failed: ${e.message}`);
  process.exit(1);
});
