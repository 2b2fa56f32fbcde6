#!/usr/bin/env node
import { parseArgs } from "node:util";
import { fingerprintOf, probeFeatures } from "../probe.js";
import { tune, type TuneResult } from "../tuner.js";
import { WORKLOADS } from "../workloads.js";

const USAGE = `usage: tune --workload NAME [--url ws://HOST:PORT/v1/session] [--fingerprint F] [--json]
       tune --print-fingerprint
workloads: ${Object.keys(WORKLOADS).join(", ")}`;

function table(r: TuneResult): string {
  const rows = r.ops.map((o) =>
    `  ${o.op}[${o.shape.join(",")}]  initial ${o.initialMs.toFixed(3)} ms (${o.initialFromZoo ? "zoo" : "default"})  ` +
    `best ${o.bestMs.toFixed(3)} ms = ${o.gflops.toFixed(2)} GFLOP/s  ${o.bestKernelId}  found after ${o.timeToBestMs.toFixed(0)} ms`);
  return [
    `workload ${r.workload}, device ${r.fingerprint}`,
    `kernels: ${r.kernelsReceived} offered, ${r.kernelsValidated} validated, ${r.kernelsInvalid} wrong, ` +
      `${r.kernelsTimed} timed; ${r.inferences} inferences; ${r.reportsAcked} reports acknowledged`,
    ...rows,
  ].join("\n");
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        workload: { type: "string" },
        url: { type: "string", default: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session" },
        fingerprint: { type: "string" },
        json: { type: "boolean", default: false },
        "print-fingerprint": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args["print-fingerprint"]) {
    console.log(await fingerprintOf(probeFeatures()));
    return 0;
  }
  const workload = args.workload ? WORKLOADS[args.workload] : undefined;
  if (!workload) {
    console.error(`${args.workload ? `unknown workload ${args.workload}` : "--workload is required"}\n${USAGE}`);
    return 2;
  }
  const log = (line: string) => console.error(line);
  log(`tuning ${workload.name} against ${args.url}`);
  try {
    const result = await tune(args.url!, workload, { fingerprint: args.fingerprint, log });
    console.log(table(result));
    if (args.json) {
      const o = result.ops;
      console.log(JSON.stringify({
        workload: result.workload, fingerprint: result.fingerprint, rounds: result.rounds,
        kernels_received: result.kernelsReceived, kernels_validated: result.kernelsValidated,
        kernels_invalid: result.kernelsInvalid, kernels_timed: result.kernelsTimed,
        inferences: result.inferences, reports_acked: result.reportsAcked, initial_from_zoo: result.initialFromZoo,
        ops: o.map((x) => ({
          op: x.op, shape: x.shape, best_kernel_id: x.bestKernelId, best_ms: round(x.bestMs),
          gflops: round(x.gflops), time_to_best_ms: round(x.timeToBestMs), initial_from_zoo: x.initialFromZoo,
          initial_kernel_id: x.initialKernelId, initial_ms: round(x.initialMs),
        })),
      }));
    }
    return 0;
  } catch (e) {
    console.error(`tune failed: ${(e as Error).message}`);
    return 1;
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

process.exitCode = await main();
