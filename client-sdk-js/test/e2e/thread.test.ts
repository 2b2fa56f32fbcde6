import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ClientFrameSchema, ErrorCode, ServerFrameSchema, type ServerFrame } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { tune } from "../../src/tuner.js";
import { WORKLOADS } from "../../src/workloads.js";

// Runs against a real suite: `./jitzoo test` starts one on private ports and sets these.
const GATEWAY = process.env.JITZOO_GATEWAY_URL;
const ZOO = process.env.JITZOO_ZOO_HTTP;
const SKELETON = WORKLOADS.skeleton;

async function zooGet(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${ZOO}${path}`);
  return { status: response.status, body: response.status === 200 ? await response.json() : {} };
}

async function awaitElected(fingerprint: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const best = await zooGet(`/api/v1/best?fingerprint=${fingerprint}&backend=wasm&op=matmul&shape=128,256,96`);
    if (best.status === 200) return best.body;
    if (Date.now() > deadline) throw new Error(`the zoo elected nothing for ${fingerprint} within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A raw connection: send frames as bytes, collect server frames and the close. */
class RawSession {
  readonly frames: ServerFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: WebSocket;
  private readonly opened: Promise<void>;

  constructor() {
    this.ws = new WebSocket(GATEWAY!);
    this.opened = new Promise((resolve, reject) => { this.ws.once("open", () => resolve()); this.ws.once("error", reject); });
    this.ws.on("message", (data: Buffer) => this.frames.push(fromBinary(ServerFrameSchema, new Uint8Array(data))));
    this.closed = new Promise((resolve) => this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  async send(data: Uint8Array | string): Promise<void> {
    await this.opened;
    this.ws.send(data);
  }

  async next(kind: ServerFrame["frame"]["case"], timeoutMs = 20_000): Promise<ServerFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f) => f.frame.case === kind);
      if (i >= 0) return this.frames.splice(i, 1)[0];
      if (Date.now() > deadline) throw new Error(`no ${kind} frame; got ${this.frames.map((f) => f.frame.case)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.ws.close();
  }
}

const hello = (fingerprint: string, shape = [128, 256, 96]) => toBinary(ClientFrameSchema, create(ClientFrameSchema, {
  frame: { case: "hello", value: {
    protocolVersion: 1, backend: Backend.WASM, credits: 100,
    device: { fingerprint, wasm: { simd: true } }, ops: [{ kind: OpKind.MATMUL, shape }],
  } },
}));

const report = (kernelId: string, shape = [128, 256, 96]) => toBinary(ClientFrameSchema, create(ClientFrameSchema, {
  frame: { case: "report", value: { op: { kind: OpKind.MATMUL, shape }, ranked: [{ kernelId, medianMs: 0.5, samples: 3 }] } },
}));

/** After each bad session, a fresh valid one must still be served. */
async function stillServing(): Promise<void> {
  const s = new RawSession();
  await s.send(hello(`probe-${randomUUID()}`, [4, 4, 4]));
  const welcome = await s.next("welcome");
  expect(welcome.frame.case).toBe("welcome");
  s.close();
}

describe.skipIf(!GATEWAY || !ZOO)("the thread through every part", () => {
  it("tunes, reports, and hands the elected kernel to the next device of the same kind", async () => {
    const fingerprint = `e2e-${randomUUID()}`;
    const first = await tune(GATEWAY!, SKELETON, { fingerprint });
    expect(first.initialFromZoo).toBe(false);
    expect(first.kernelsReceived).toBeGreaterThan(3);
    expect(first.kernelsInvalid).toBe(0);
    expect(first.kernelsValidated).toBe(first.kernelsReceived + 1); // every offer and the initial kernel
    expect(first.kernelsTimed).toBe(first.kernelsValidated);
    expect(first.reportsAcked).toBe(1);
    expect(first.ops[0].gflops).toBeGreaterThan(0);

    const elected = await awaitElected(fingerprint);
    const second = await tune(GATEWAY!, SKELETON, { fingerprint });
    expect(second.initialFromZoo).toBe(true);
    expect(second.ops[0].initialKernelId).toBe(elected.kernelId);
  });
});

describe.skipIf(!GATEWAY || !ZOO)("bad input on the WebSocket", () => {
  const badFingerprints: string[] = [];

  it("garbage bytes: MALFORMED_FRAME, close 1007", async () => {
    const s = new RawSession();
    await s.send(new Uint8Array([0xff, 0x00, 0x13, 0x37, 0x99]));
    const error = await s.next("error");
    expect(error.frame.value).toMatchObject({ code: ErrorCode.MALFORMED_FRAME });
    expect((await s.closed).code).toBe(1007);
    await stillServing();
  });

  it("a truncated Hello: close 1007", async () => {
    const fingerprint = `bad-${randomUUID()}`;
    badFingerprints.push(fingerprint);
    const bytes = hello(fingerprint);
    const s = new RawSession();
    await s.send(bytes.slice(0, Math.floor(bytes.length / 2)));
    const closed = await s.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a text message: close 1007 with a reason", async () => {
    const s = new RawSession();
    await s.send("hello?");
    const closed = await s.closed;
    expect([1003, 1007]).toContain(closed.code);
    expect(closed.reason).not.toBe("");
  });

  it("a Hello without a fingerprint: INVALID_HELLO, close 1008", async () => {
    const s = new RawSession();
    await s.send(hello(""));
    expect((await s.next("error")).frame.value).toMatchObject({ code: ErrorCode.INVALID_HELLO });
    expect(await s.closed).toMatchObject({ code: 1008, reason: "device.fingerprint is required" });
    await stillServing();
  });

  it("a Report before Hello: close 1008", async () => {
    const s = new RawSession();
    await s.send(report("k1whatever"));
    expect((await s.closed).code).toBe(1008);
  });

  it("forged kernel ids and ops never offered are refused, the session stays open", async () => {
    const fingerprint = `bad-${randomUUID()}`;
    badFingerprints.push(fingerprint);
    const s = new RawSession();
    await s.send(hello(fingerprint));
    const welcome = await s.next("welcome");
    if (welcome.frame.case !== "welcome") throw new Error("no welcome");
    const issued = welcome.frame.value.initial[0].artifact!.ref!.kernelId;

    await s.send(report("k1forgedforgedforgedforgedforged0"));
    expect((await s.next("error")).frame.value).toMatchObject({ code: ErrorCode.INVALID_REPORT });
    await s.send(report(issued, [7, 7, 7]));
    const neverOffered = await s.next("error");
    expect(neverOffered.frame.value).toMatchObject({ code: ErrorCode.INVALID_REPORT });
    expect(neverOffered.frame.case === "error" && neverOffered.frame.value.message).toMatch(/never offered/);
    s.close();
  });

  it("stored nothing from the refused sessions", async () => {
    await new Promise((r) => setTimeout(r, 1000)); // give a wrongly published report time to land
    for (const fingerprint of badFingerprints) {
      expect((await zooGet(`/api/v1/reports/count?fingerprint=${fingerprint}`)).body).toMatchObject({ count: 0 });
    }
  });
});
