#!/usr/bin/env node
import "../node-platform.js";
import { readFileSync } from "node:fs";
import { DEFAULT_URL, parseCli, runWhenInvoked, type CliIo } from "./io.js";
import { microbenchSpeedups, type MicrobenchSummary } from "../microbench.js";
import { fingerprintOf, probeFeatures } from "../probe.js";
import { tune, type TuneResult } from "../tuner.js";
import type { ClientOptions } from "../client.js";
import { WORKLOADS } from "../workloads.js";
import { convergence, feedsFor, runUntilSettled, type Convergence } from "../model/drive.js";
import { loadModel } from "../load.js";
import type { Model, ModelStats } from "../model/model.js";
import { DEFAULT_TUNING } from "../model/tuning.js";

export type { CliIo };
/** Most tuning time `--budget` allows, as a multiple of inference time. */
const MAX_BUDGET = 10;

const USAGE = `usage: tune --workload NAME [--url ws://HOST:PORT/v1/session] [--key K] [--fingerprint F] [--microbench FILE] [--json]
       tune --model FILE.onnx [--seq N] [--runs N] [--seconds S] [--budget F] [--threads N] [--url ...] [--key K] [--fingerprint F] [--json]
       tune --print-fingerprint
  --model        an ONNX model (BERT-family encoders): run it as an app would and tune it while it infers,
                 until every op settles; progress per op on stderr, a per-op and whole-model table at the end
  --seq          sequence length of the inputs (default 128)
  --runs, --seconds  stop after this many runs or seconds even if not settled (default 5000, 300)
  --budget       tuning time as a fraction of inference time (default 0.1; 1 tunes as long as it infers)
  --threads      most threads the model's kernels run on (default: the model's, up to 4 where there are cores)
  --url          gateway WebSocket address (default: $JITZOO_GATEWAY_URL, else ${DEFAULT_URL})
  --key          the tenant's API key, where the gateway requires one (default: $JITZOO_API_KEY)
  --fingerprint  device kind to report as (default: derived from this machine)
  --microbench   a result of ./jitzoo microbench (JSON with "primitives", "engine" and "peak_gflops"), sent for the
                 fleet's primitive table and the device kind's peak
  --json         end stdout with one line of JSON
workloads: ${Object.keys(WORKLOADS).join(", ")}
exit codes: 0 done, 1 the session failed (gateway unreachable, refused, closed), 2 bad usage`;

/** The human summary: what was tried and the best kernel of each op. */
export function table(r: TuneResult): string {
  const header = ["op", "shape", "initial", "initial ms", "best kernel", "best ms", "GFLOP/s", "best after ms"];
  const rows = r.ops.map((o) => [
    o.op, `[${o.shape.join(",")}]`, o.initialFromZoo ? "zoo" : "default", o.initialMs.toFixed(3),
    o.bestKernelId, o.bestMs.toFixed(3), o.gflops.toFixed(2), o.timeToBestMs.toFixed(0),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd();
  return [
    `workload ${r.workload}, device ${r.fingerprint}, session ${r.sessionId}`,
    `kernels: ${r.kernelsReceived} offered (${r.offersFromZoo} of them similar devices' bests), ${r.kernelsValidated} validated (initial included), ${r.kernelsInvalid} refused, ` +
      `${r.kernelsTimed} timed; ${r.inferences} inferences; ${r.reportsAcked} reports acknowledged`,
    line(header),
    ...rows.map(line),
  ].join("\n");
}

/** The `--json` object (snake_case keys, numbers rounded to 4 decimals). */
export function toJson(r: TuneResult): Record<string, unknown> {
  return {
    workload: r.workload, fingerprint: r.fingerprint, session_id: r.sessionId, rounds: r.rounds,
    offers_sent: r.offersSent, kernels_received: r.kernelsReceived, offers_from_zoo: r.offersFromZoo,
    kernels_validated: r.kernelsValidated,
    kernels_invalid: r.kernelsInvalid, kernels_timed: r.kernelsTimed,
    inferences: r.inferences, reports_acked: r.reportsAcked, microbench_acked: r.microbenchAcked, initial_from_zoo: r.initialFromZoo,
    ops: r.ops.map((o) => ({
      op: o.op, shape: o.shape, best_kernel_id: o.bestKernelId, best_ms: round(o.bestMs),
      gflops: round(o.gflops), time_to_best_ms: round(o.timeToBestMs), time_to_near_best_ms: round(o.timeToNearBestMs),
      kernels_to_near_best: round(o.kernelsToNearBest), initial_from_zoo: o.initialFromZoo,
      initial_kernel_id: o.initialKernelId, initial_ms: round(o.initialMs), zoo_kernel_ids: o.zooKernelIds,
    })),
  };
}

const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : null);

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const args = parseCli({
    args: argv,
    options: {
      workload: { type: "string" },
      model: { type: "string" },
      seq: { type: "string", default: "128" },
      runs: { type: "string", default: "5000" },
      seconds: { type: "string", default: "300" },
      threads: { type: "string" },
      budget: { type: "string", default: String(DEFAULT_TUNING.budget) },
      url: { type: "string" },
      key: { type: "string" },
      fingerprint: { type: "string" },
      microbench: { type: "string" },
      json: { type: "boolean", default: false },
      "print-fingerprint": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }, USAGE, io);
  if (typeof args === "number") return args;
  if (args["print-fingerprint"]) {
    io.out(await fingerprintOf(await probeFeatures()));
    return 0;
  }
  const url = args.url ?? io.env.JITZOO_GATEWAY_URL ?? DEFAULT_URL;
  const client = { apiKey: args.key ?? io.env.JITZOO_API_KEY };
  if (args.model) {
    const numbers = {
      seq: Number(args.seq), runs: Number(args.runs), seconds: Number(args.seconds),
      ...(args.threads === undefined ? {} : { threads: Number(args.threads) }),
    };
    const bad = Object.entries(numbers).find(([, v]) => !(Number.isInteger(v) && v > 0));
    if (bad) {
      io.err(`--${bad[0]} must be a positive integer\n${USAGE}`);
      return 2;
    }
    const budget = Number(args.budget);
    if (!(budget > 0 && budget <= MAX_BUDGET)) {
      io.err(`--budget must be a fraction of inference time above 0 and at most ${MAX_BUDGET}\n${USAGE}`);
      return 2;
    }
    return tuneModel(args.model, url, { ...numbers, budget, fingerprint: args.fingerprint, json: args.json, client }, io);
  }
  const workload = args.workload ? WORKLOADS[args.workload] : undefined;
  if (!workload) {
    io.err(`${args.workload ? `unknown workload "${args.workload}"` : "--workload is required"}\n${USAGE}`);
    return 2;
  }
  let microbench: MicrobenchSummary | undefined;
  if (args.microbench) {
    try {
      microbench = readMicrobench(args.microbench);
    } catch (e) {
      io.err(`--microbench ${args.microbench}: ${(e as Error).message}`);
      return 2;
    }
  }
  io.err(`tuning ${workload.name} against ${url}`);
  let result: TuneResult;
  try {
    result = await tune(url, workload, { fingerprint: args.fingerprint, log: io.err, microbench, client });
  } catch (e) {
    io.err(`tune failed: ${(e as Error).message}`);
    return 1;
  }
  io.out(table(result));
  if (args.json) io.out(JSON.stringify(toJson(result)));
  return 0;
}

/** `tune --model`: load, run until every op settles, print the tables. */
async function tuneModel(file: string, url: string, o: { seq: number; runs: number; seconds: number; threads?: number; budget: number; fingerprint?: string; json: boolean; client: ClientOptions }, io: CliIo): Promise<number> {
  let model: Model;
  try {
    model = await loadModel(readFileSync(file), {
      gateway: url, fingerprint: o.fingerprint, tuning: { budget: o.budget }, log: io.err, client: o.client, threads: o.threads,
    });
  } catch (e) {
    io.err(`${file}: ${(e as Error).message}`);
    return (e as Error).name === "ModelError" || (e as NodeJS.ErrnoException).code === "ENOENT" ? 2 : 1;
  }
  io.err(`tuning ${file} at sequence length ${o.seq} against ${url}`);
  let lastNote = 0;
  const stats = await runUntilSettled(model, feedsFor(model, o.seq), {
    maxRuns: o.runs, maxSeconds: o.seconds,
    onRun: (run, s) => {
      const settled = s.ops.filter((op) => op.settled).length;
      if (run === 0 || performance.now() - lastNote > 2000) {
        lastNote = performance.now();
        io.err(`run ${run + 1}: ${s.lastRunMs.toFixed(1)} ms, ${settled}/${s.ops.length} ops settled`);
      }
    },
  });
  if (stats.notes.length) stats.notes.forEach((n) => io.err(`note: ${n}`));
  const c = convergence(stats);
  io.out(modelTable(file, stats, c));
  if (o.json) io.out(JSON.stringify(modelJson(file, o.seq, stats, c)));
  return stats.ops.some((op) => op.source === "wasm") ? 0 : 1;
}

/** The per-op and whole-model tables of `tune --model`. */
export function modelTable(file: string, s: ModelStats, c: Convergence): string {
  const header = ["op", "uses", "kernel", "ms", "kernels in use", "last swap (s)", "refused", "settled"];
  const rows = s.ops.map((o) => [o.key, String(o.instances), o.kernelId, o.ms.toFixed(3), String(o.history.length),
    ((o.history.at(-1)?.atMs ?? 0) / 1000).toFixed(1), String(o.refused), o.settled ? "yes" : "no"]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd();
  return [
    `model ${file}: ${s.runs} runs, ${s.ops.length} distinct ops, ${s.hostSteps} steps in JavaScript`,
    line(header), ...rows.map(line),
    `first run ${c.firstRunMs.toFixed(1)} ms, final ${c.finalMs.toFixed(1)} ms (${(c.firstRunMs / c.finalMs).toFixed(2)}x), ` +
      `within 5% of final after ${(c.nearFinalAfterMs / 1000).toFixed(1)} s (${c.nearFinalAfterRuns} runs), tuning took ${(100 * c.tuningShare).toFixed(1)}% of inference time`,
  ].join("\n");
}

function modelJson(file: string, seq: number, s: ModelStats, c: Convergence): Record<string, unknown> {
  return {
    model: file, seq, runs: s.runs, settled: s.settled, first_run_ms: round(c.firstRunMs), final_ms: round(c.finalMs),
    near_final_after_ms: round(c.nearFinalAfterMs), near_final_after_runs: c.nearFinalAfterRuns, tuning_share: round(c.tuningShare),
    memory_bytes: s.memoryBytes, notes: s.notes,
    ops: s.ops.map((o) => ({ key: o.key, instances: o.instances, kernel_id: o.kernelId, ms: round(o.ms), kernels_in_use: o.history.length, last_swap_ms: round(o.history.at(-1)?.atMs ?? 0), refused: o.refused, settled: o.settled })),
  };
}

/** A stored microbenchmark result: its "primitives" speedups, "engine" and "peak_gflops"; throws saying what is wrong. */
export function readMicrobench(path: string): MicrobenchSummary {
  const json = JSON.parse(readFileSync(path, "utf8")) as { primitives?: unknown; engine?: unknown; peak_gflops?: unknown };
  if (typeof json.primitives !== "object" || json.primitives === null) throw new Error('no "primitives" object of speedups');
  const speedups: Record<string, number> = {};
  for (const [name, value] of Object.entries(json.primitives)) {
    if (typeof value !== "number") throw new Error(`speedup of ${name} is not a number`);
    speedups[name] = value;
  }
  microbenchSpeedups({ speedups, engine: "" }); // unknown names refused here, not by the gateway
  if (json.peak_gflops !== undefined && !(typeof json.peak_gflops === "number" && json.peak_gflops > 0)) {
    throw new Error(`peak_gflops is not a positive number: ${JSON.stringify(json.peak_gflops)}`);
  }
  return { speedups, engine: typeof json.engine === "string" ? json.engine : "", peakGflops: json.peak_gflops };
}

await runWhenInvoked(import.meta.url, main);
