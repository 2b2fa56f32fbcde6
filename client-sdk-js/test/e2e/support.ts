// Helpers for the end-to-end tests: raw WebSocket sessions and the zoo's HTTP API.
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { stopPart as stopProcess, up, type Part } from "../../tools/src/stack.js";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { ClientFrameSchema, ServerFrameSchema, type ServerFrame } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind, Primitive } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";

/** The gateway under test; the e2e tests skip when it is not set. */
export const GATEWAY = process.env.JITZOO_GATEWAY_URL;
/** The zoo's HTTP base. */
export const ZOO = process.env.JITZOO_ZOO_HTTP ?? "http://127.0.0.1:8083";

export const SKELETON_SHAPE = [128, 256, 96];

/** The zoo's admin token (its /api/v1 and dashboard answer no one else), as the stack under test was given it. */
export const ZOO_ADMIN = process.env.JITZOO_ADMIN_TOKEN ?? "";

/** Fetches a zoo admin path with the admin token. */
export function zooFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${ZOO}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${ZOO_ADMIN}` } });
}

/** GETs a zoo path; the body is parsed only for 200. */
export async function zooGet(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await zooFetch(path);
  return { status: response.status, body: response.status === 200 ? await response.json() : {} };
}

/** Polls the zoo until `fingerprint` has `atLeast` measurements, then returns how many it has. */
export async function awaitMeasurements(fingerprint: string, atLeast: number, timeoutMs = 30_000): Promise<number> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const count = Number((await zooGet(`/api/v1/reports/count?fingerprint=${encodeURIComponent(fingerprint)}`)).body.count ?? 0);
    if (count >= atLeast || Date.now() > deadline) return count;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A part of the stack under test, as `./jitzoo up` names its pid file. */
export type { Part } from "../../tools/src/stack.js";

/**
 * Stops one part of the stack under test (the private stack `./jitzoo test` runs) with `signal`,
 * and returns once its process is gone; the rest keeps running.
 */
export async function stopPart(part: Part, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  const home = process.env.JITZOO_HOME;
  if (!home) throw new Error(`JITZOO_HOME is not set: ${part} can be stopped only in a stack ./jitzoo started`);
  await stopProcess(home, part, signal, 30_000);
}

/**
 * `./jitzoo up` on the stack under test: starts what is not running, and resolves when all is
 * ready. The test's own work (sessions, probes) goes on meanwhile.
 */
export function startMissingParts(): Promise<void> {
  return up(ROOT, 180_000);
}

/** The repository's root, where `./jitzoo` is. */
export const ROOT = process.env.JITZOO_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Restarts the gateway of the stack under test; returns when the new one is ready. */
export async function restartGateway(): Promise<void> {
  await stopPart("gateway");
  await startMissingParts();
}

/** Polls the zoo until it has elected a best MatMul kernel of `shape` for `fingerprint` (404 means not yet). */
export async function awaitElected(fingerprint: string, shape = SKELETON_SHAPE, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  const path = `/api/v1/best?fingerprint=${encodeURIComponent(fingerprint)}&backend=wasm&op=matmul&shape=${shape.join(",")}`;
  for (;;) {
    const best = await zooGet(path);
    if (best.status === 200) return best.body;
    if (best.status !== 404) throw new Error(`GET ${path}: HTTP ${best.status}`);
    if (Date.now() > deadline) throw new Error(`the zoo elected nothing for ${fingerprint} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

type FrameCase = NonNullable<ServerFrame["frame"]["case"]>;
type FrameValue<K extends FrameCase> = Extract<ServerFrame["frame"], { case: K }>["value"];

/** A raw connection: sends any bytes, collects every server frame and the close. */
export class RawSession {
  readonly frames: ServerFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: WebSocket;
  private readonly opened: Promise<void>;

  /** A connection to `url` (the suite's gateway), with these headers on its upgrade (an Origin, as a browser's). */
  constructor(url = GATEWAY!, headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
    });
    this.ws.on("message", (data: Buffer) => this.frames.push(fromBinary(ServerFrameSchema, new Uint8Array(data))));
    this.closed = new Promise((resolve) => this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  async send(data: Uint8Array | string): Promise<void> {
    await this.opened;
    this.ws.send(data);
  }

  /** The first unread frame of `kind`, waiting for it. */
  async next<K extends FrameCase>(kind: K, timeoutMs = 20_000): Promise<FrameValue<K>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f) => f.frame.case === kind);
      if (i >= 0) return this.frames.splice(i, 1)[0].frame.value as unknown as FrameValue<K>;
      if (Date.now() > deadline) throw new Error(`no ${kind} frame within ${timeoutMs} ms; got ${this.frames.map((f) => f.frame.case)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.ws.close();
  }
}

type ClientFrameInit = MessageInitShape<typeof ClientFrameSchema>;
const encode = (frame: ClientFrameInit) => toBinary(ClientFrameSchema, create(ClientFrameSchema, frame));

/** A Hello for one MatMul. */
export const hello = (fingerprint: string, shape = SKELETON_SHAPE, credits = 100) => encode({
  frame: { case: "hello", value: {
    protocolVersion: 1, backend: Backend.WASM, credits,
    device: { fingerprint, wasm: { simd: true }, userAgent: "jitzoo-e2e", logicalCores: 1 },
    ops: [{ kind: OpKind.MATMUL, shape }],
  } },
});

/** A Report ranking one kernel of one MatMul. */
export const report = (kernelId: string, shape = SKELETON_SHAPE) => encode({
  frame: { case: "report", value: {
    op: { kind: OpKind.MATMUL, shape }, ranked: [{ kernelId, medianMs: 0.5, samples: 7, maxRelError: 1e-7 }],
  } },
});

/** A Microbench frame of one primitive. */
export const microbench = (primitive: Primitive, speedup: number) => encode({
  frame: { case: "microbench", value: { engine: "jitzoo-e2e", speedups: [{ primitive, speedup }] } },
});

/** A PlanRequest for a MatMul of M = hi rows whose M varies over lo..hi. */
export const planRequest = (lo: number, hi: number, k = 768, n = 768, kind = OpKind.MATMUL) => encode({
  frame: { case: "planRequest", value: {
    lo, hi, device: { fingerprint: "jitzoo-e2e-plans", wasm: { simd: true }, userAgent: "jitzoo-e2e", logicalCores: 1 },
    op: { kind, shape: kind === OpKind.MATMUL ? [hi, k, n] : [hi, n] },
  } },
});
