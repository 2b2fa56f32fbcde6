#!/usr/bin/env node
// ./jitzoo drill: devices tune a model through the suite while its parts fail one after another —
// the gateway restarted (it drains: Goaway, then the sessions resume on the new one), Kafka stopped
// for 30 s, codegen killed with kill -9 and started again. Afterwards every report a device sent
// must be acknowledged and stored once, and every device must have finished; what each device saw
// is listed. Runs against the stack ./jitzoo started (JITZOO_HOME), parts stopped by their pids;
// with --pods, against the chart's pods podman runs (helm/test/pods.test.mjs), the zoo's pod and
// then the gateway's killed and started again.
import "@jitzoo/client/node";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseOptions, wholeNumber } from "./args.js";
import { killPod, stopPart, up } from "./stack.js";
import { feedsFor, runUntilSettled, loadModel } from "@jitzoo/client/internal";
import { zooFetch } from "./zoo.js";

const usage = `usage: drill [--devices N] [--kafka-down S] [--pods] [--models DIR] [--json]
  --devices     devices tuning at once (default 3)
  --kafka-down  seconds Kafka stays stopped (default 30)
  --pods        the services are pods podman runs (JITZOO_PODS: {"zoo": {"pod": NAME, "ready": URL},
                "gateway": {...}}): the zoo's pod, then the gateway's, is killed and started again
  --models      directory of bert_layer.onnx (default: $JITZOO_MODELS, else .jitzoo/models)
  --json        end with one line of JSON`;

/** A short sequence keeps the model small: a device tunes it in seconds, so several run through each fault. */
const SEQ = 8;
/** Tuning time as a share of inference: all of it, to tune fast. */
const BUDGET = 1;
/** The most a device's run may take before it counts as not finished. */
const RUN_SECONDS = 180;
/** Between faults: the stack serves normally for this long. */
const CALM_MS = 8_000;

/** One device's run: a model loaded under a fresh device kind, tuned until settled. */
interface Run {
  device: number;
  fingerprint: string;
  /** The fault under way when it started. */
  during: string;
  settled: boolean;
  reportsSent: number;
  reportsAcked: number;
  reportsStored: number;
  /** Connection changes and failed reports, in order, as the device saw them. */
  saw: string[];
  seconds: number;
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function parse(argv: string[]) {
  const v = parseOptions({ args: argv, strict: true, options: {
    devices: { type: "string", default: "3" },
    "kafka-down": { type: "string", default: "30" },
    pods: { type: "boolean", default: false },
    models: { type: "string", default: process.env.JITZOO_MODELS ?? join(process.cwd(), ".jitzoo/models") },
    json: { type: "boolean", default: false },
  } }, usage);
  const home = process.env.JITZOO_HOME ?? "";
  const pods = v.pods ? JSON.parse(process.env.JITZOO_PODS ?? "null") as Record<"zoo" | "gateway", { pod: string; ready: string }> | null : null;
  if (v.pods && !(pods?.zoo && pods?.gateway)) throw new Error(`--pods needs JITZOO_PODS naming the zoo's and the gateway's pods\n${usage}`);
  if (!v.pods && !home) throw new Error(`JITZOO_HOME is not set: the drill stops parts of a stack ./jitzoo started\n${usage}`);
  return {
    pods,
    devices: wholeNumber("devices", v.devices, usage), kafkaDownS: wholeNumber("kafka-down", v["kafka-down"], usage),
    model: join(v.models, "bert_layer.onnx"), json: v.json, home,
    root: process.env.JITZOO_ROOT ?? resolve(process.cwd()),
    gateway: process.env.JITZOO_GATEWAY_URL ?? "ws://127.0.0.1:8080/v1/session",
    zoo: process.env.JITZOO_ZOO_HTTP ?? "http://127.0.0.1:8083",
  };
}

type Options = ReturnType<typeof parse>;

/** The reports the zoo stored for a device kind: one per session and op, however many kernels each ranks. */
async function stored(o: Options, fingerprint: string): Promise<number> {
  // bounded: a zoo that hangs fails the drill with a reason instead of holding it until the caller's timeout
  const response = await zooFetch(`${o.zoo}/api/v1/export/measurements?format=jsonl&fingerprint=${encodeURIComponent(fingerprint)}`,
    { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`the zoo's export answered HTTP ${response.status}`);
  const reports = new Set<string>();
  for (const line of (await response.text()).split("\n")) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { sessionId: string; key: string };
    reports.add(`${row.sessionId}|${row.key}`);
  }
  return reports.size;
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const bytes = readFileSync(o.model);
  const run = randomUUID().slice(0, 8);
  let phase = "before the faults";
  let over = false;
  const runs: Run[] = [];

  /** One device: runs one after another, each a new device kind, until the faults are over. */
  async function device(index: number): Promise<void> {
    for (let k = 0; !over; k++) {
      const r: Run = { device: index, fingerprint: `drill-${run}-d${index}-r${k}`, during: phase, settled: false,
        reportsSent: 0, reportsAcked: 0, reportsStored: 0, saw: [], seconds: 0 };
      runs.push(r);
      const started = performance.now();
      const model = await loadModel(bytes, { gateway: o.gateway, fingerprint: r.fingerprint, tuning: { budget: BUDGET },
        reconnect: { attempts: 30, baseDelayMs: 250, maxDelayMs: 4_000 } });
      model.on("connection", (e) => r.saw.push(`${phase}: ${e.state}${e.detail ? ` (${e.detail})` : ""}`));
      model.on("report-acked", () => {
        r.reportsSent++;
        r.reportsAcked++;
      });
      model.on("report-failed", (e) => {
        r.reportsSent++;
        r.saw.push(`${phase}: report of ${e.op} failed (${e.why})`);
      });
      const stats = await runUntilSettled(model, feedsFor(model, SEQ), { maxSeconds: RUN_SECONDS });
      r.settled = stats.settled;
      r.seconds = Math.round((performance.now() - started) / 100) / 10;
      stats.notes.forEach((note) => r.saw.push(`note: ${note}`));
    }
  }

  say(`drill: ${o.devices} devices tune ${o.model} (sequence ${SEQ}) while the suite's parts fail`);
  const devices = Array.from({ length: o.devices }, (_, i) => device(i));
  const faults: { name: string; seconds: number }[] = [];
  const fault = async (name: string, body: () => Promise<void>) => {
    await sleep(CALM_MS);
    phase = name;
    say(`  ${name}`);
    const started = performance.now();
    await body();
    faults.push({ name, seconds: Math.round((performance.now() - started) / 100) / 10 });
    phase = `after ${name}`;
  };
  if (o.pods) {
    const pods = o.pods;
    await fault(`zoo pod ${pods.zoo.pod} killed (SIGKILL) and started again`, () => killPod(pods.zoo.pod, pods.zoo.ready));
    await fault(`gateway pod ${pods.gateway.pod} killed (SIGKILL) and started again`, () => killPod(pods.gateway.pod, pods.gateway.ready));
  } else {
    await fault("gateway restarted (SIGTERM: drain, then ./jitzoo up)", async () => {
      await stopPart(o.home, "gateway", "SIGTERM");
      await up(o.root);
    });
    await fault(`Kafka stopped for ${o.kafkaDownS} s`, async () => {
      await stopPart(o.home, "kafka", "SIGTERM");
      await sleep(o.kafkaDownS * 1000);
      await up(o.root);
    });
    await fault("codegen killed (kill -9) and started again", async () => {
      await stopPart(o.home, "codegen", "SIGKILL");
      await up(o.root);
    });
  }
  await sleep(CALM_MS);
  over = true;
  say("  faults over: each device finishes its run");
  await Promise.all(devices);

  say("  reading what the zoo stored");
  // reports reach the zoo through Kafka, asynchronously; a zoo killed holds its partitions until its consumer
  // group's session times out (45 s), so its reports of the meantime are read after that
  for (const deadline = Date.now() + 120_000; ;) {
    for (const r of runs) r.reportsStored = await stored(o, r.fingerprint);
    if (runs.every((r) => r.reportsStored >= r.reportsAcked) || Date.now() > deadline) break;
    await sleep(1000);
  }
  const total = (k: "reportsSent" | "reportsAcked" | "reportsStored") => runs.reduce((n, r) => n + r[k], 0);
  const figures = {
    drill: o.pods ? "pods" : "suite", devices: o.devices, runs: runs.length, runs_finished: runs.filter((r) => r.settled).length,
    reports_sent: total("reportsSent"), reports_acked: total("reportsAcked"), reports_stored: total("reportsStored"),
    faults, all_finished: runs.every((r) => r.settled),
    reports_whole: total("reportsSent") === total("reportsAcked") && total("reportsAcked") === total("reportsStored"),
  };
  console.log(`drill: ${figures.runs} runs on ${o.devices} devices; ${figures.runs_finished} finished (settled)`);
  console.log(`  reports: ${figures.reports_sent} sent, ${figures.reports_acked} acknowledged, ${figures.reports_stored} stored${figures.reports_whole ? "" : "  <-- NOT WHOLE"}`);
  for (const f of faults) console.log(`  fault: ${f.name}, ${f.seconds} s`);
  for (const r of runs) {
    console.log(`  device ${r.device} ${r.fingerprint} (started ${r.during}): ${r.settled ? "settled" : "NOT settled"} in ${r.seconds} s, `
      + `reports ${r.reportsSent}/${r.reportsAcked}/${r.reportsStored} sent/acked/stored`);
    for (const line of r.saw) console.log(`      ${line}`);
  }
  if (o.json) console.log(JSON.stringify({ ...figures, run_details: runs }));
  if (!figures.all_finished || !figures.reports_whole) process.exitCode = 1;
}

main().catch((e: Error) => {
  console.error(`drill failed: ${e.message}`);
  process.exitCode = 1;
});
