#!/usr/bin/env node
// ./jitzoo bench extended: what the extended space buys a new device kind. For each op, a kind
// with no neighbours in the zoo tunes it (the lite space alone), then another kind on the same
// hardware (the first one's results in the zoo: its exploitation set comes first). Side by side:
// kernels timed and milliseconds until the incumbent is within 5% of the session's final best.
import "@jitzoo/client/node";
import { randomUUID } from "node:crypto";
import { Backend, median, tune, type OpResult, matmul } from "@jitzoo/client/internal";
import { zooFetch } from "./zoo.js";

/** BERT-base MatMuls (sequence 128 and 384) and a few odd ones. */
const OPS: [number, number, number][] = [
  [384, 768, 768], [128, 768, 768], [128, 768, 3072], [128, 3072, 768], [200, 384, 160], [300, 256, 256],
];

async function zooHasElected(zoo: string, fingerprint: string, shape: number[]): Promise<void> {
  const path = `${zoo}/api/v1/best?fingerprint=${fingerprint}&backend=wasm&op=matmul&shape=${shape.join(",")}`;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    if ((await zooFetch(path)).status === 200) return;
  }
  throw new Error(`the zoo elected nothing for ${fingerprint} within 30 s`);
}

async function main(): Promise<void> {
  const url = process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session";
  const zoo = process.env.JITZOO_ZOO_HTTP ?? "http://127.0.0.1:8083";
  const json = process.argv.includes("--json");
  const rows: { shape: number[]; alone: OpResult; offers: [number, number]; extended: OpResult; fromZoo: number }[] = [];
  for (const shape of OPS) {
    const workload = { name: `matmul ${shape}`, backend: Backend.WASM, ops: [matmul(...shape)] };
    const first = `bench-a-${randomUUID()}`;
    const alone = await tune(url, workload, { fingerprint: first });
    await zooHasElected(zoo, first, shape);
    const extended = await tune(url, workload, { fingerprint: `bench-b-${randomUUID()}` });
    rows.push({ shape, alone: alone.ops[0], extended: extended.ops[0], offers: [alone.offersSent, extended.offersSent],
      fromZoo: extended.offersFromZoo });
    process.stderr.write(`  ${shape.join("x")}: done\n`);
  }

  const header = ["op (MxKxN)", "offers", "alone: kernels to 5%", "ms", "GFLOP/s", "extended: from zoo", "kernels to 5%", "ms", "GFLOP/s"];
  const cells = rows.map((r) => [
    r.shape.join("x"), `${r.offers[0]}/${r.offers[1]}`, String(r.alone.kernelsToNearBest), r.alone.timeToNearBestMs.toFixed(0),
    r.alone.gflops.toFixed(1), String(r.fromZoo), String(r.extended.kernelsToNearBest), r.extended.timeToNearBestMs.toFixed(0),
    r.extended.gflops.toFixed(1),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c].length)));
  for (const line of [header, ...cells]) console.log(line.map((cell, c) => cell.padStart(widths[c])).join("  "));

  const summary = {
    bench: "extended",
    ops: rows.length,
    median_kernels_to_near_best_alone: median(rows.map((r) => r.alone.kernelsToNearBest)),
    median_kernels_to_near_best_extended: median(rows.map((r) => r.extended.kernelsToNearBest)),
    median_ms_to_near_best_alone: Math.round(median(rows.map((r) => r.alone.timeToNearBestMs))),
    median_ms_to_near_best_extended: Math.round(median(rows.map((r) => r.extended.timeToNearBestMs))),
    median_best_gflops_ratio_extended_over_alone: Math.round(1000 * median(rows.map((r) => r.extended.gflops / r.alone.gflops))) / 1000,
  };
  console.log(`median kernels timed until within 5% of the best: ${summary.median_kernels_to_near_best_alone} alone, ` +
    `${summary.median_kernels_to_near_best_extended} with the exploitation set; milliseconds: ` +
    `${summary.median_ms_to_near_best_alone} vs ${summary.median_ms_to_near_best_extended}; ` +
    `best reached, extended over alone: ${summary.median_best_gflops_ratio_extended_over_alone}×`);
  if (json) console.log(JSON.stringify(summary));
}

main().catch((e: Error) => {
  console.error(`bench extended failed: ${e.message}`);
  process.exitCode = 1;
});
