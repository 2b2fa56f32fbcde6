import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionClosed, GatewayError } from "../src/errors.js";
import { ErrorCode } from "../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, KernelArtifactSchema, OpKind } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { tune } from "../src/tuner.js";
import { matmul, type Workload } from "../src/workloads.js";
import { FakeGateway, type FakeGatewayOptions } from "./support/fake-gateway.js";
import { naiveMatmulArtifact } from "./support/wasm.js";

const SHAPE: [number, number, number] = [8, 16, 12];
const WORKLOAD: Workload = { name: "small", backend: Backend.WASM, ops: [matmul(...SHAPE)] };
const FAST_TIMING = { warmupMs: 1, samples: 3, sampleMs: 0.5 };

const garbage = create(KernelArtifactSchema, {
  ref: { kernelId: "kgarbage", op: { kind: OpKind.MATMUL, shape: SHAPE } },
  code: { case: "wasm", value: new Uint8Array([0, 1, 2, 3]) },
  metadataJson: "{}",
});

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

async function start(options: Partial<FakeGatewayOptions> = {}): Promise<FakeGateway> {
  gateway = await FakeGateway.start({
    initial: () => ({ artifact: naiveMatmulArtifact("kinit", SHAPE), fromZoo: false }),
    offers: [1, 2, 3, 4, 5, 6].map((i) => naiveMatmulArtifact(`k${i}`, SHAPE)),
    ...options,
  });
  return gateway;
}

describe("tune", () => {
  it("checks, times and reports every offer, granting credit as it goes", async () => {
    const offers = [
      naiveMatmulArtifact("k1", SHAPE), naiveMatmulArtifact("kwrong", SHAPE, 1.5), garbage,
      ...[2, 3, 4, 5, 6].map((i) => naiveMatmulArtifact(`k${i}`, SHAPE)),
    ];
    const g = await start({ offers });
    const lines: string[] = [];
    const result = await tune(g.url, WORKLOAD, { fingerprint: "unit", credits: 2, timing: FAST_TIMING, log: (l) => lines.push(l) });

    expect(result).toMatchObject({
      workload: "small", fingerprint: "unit", sessionId: "fake-session", rounds: 1,
      kernelsReceived: 8, kernelsValidated: 7, kernelsInvalid: 2, kernelsTimed: 7, reportsAcked: 1, initialFromZoo: false,
    });
    const op = result.ops[0];
    expect(op).toMatchObject({ op: "matmul", shape: SHAPE, initialKernelId: "kinit", initialFromZoo: false });
    expect(op.gflops).toBeCloseTo((2 * 8 * 16 * 12) / (op.bestMs / 1000) / 1e9, 6);
    expect(op.timeToBestMs).toBeGreaterThan(0);

    const credits = g.received.filter((f) => f.frame.case === "credit");
    expect(credits).toHaveLength(8);
    const hello = g.received[0].frame;
    expect(hello.case === "hello" && hello.value).toMatchObject({ protocolVersion: 1, backend: Backend.WASM, credits: 2 });

    const ranked = g.acked[0].ranked;
    expect(ranked).toHaveLength(5);
    expect(ranked[0].kernelId).toBe(op.bestKernelId);
    expect(ranked.map((r) => r.medianMs)).toEqual([...ranked.map((r) => r.medianMs)].sort((x, y) => x - y));
    expect(ranked.every((r) => !["kwrong", "kgarbage"].includes(r.kernelId) && r.maxRelError <= 1e-4 && r.samples === 3)).toBe(true);
    expect(lines.some((l) => l.includes("kwrong") && l.includes("refused"))).toBe(true);
  });

  it("passes on the zoo's initial kernel", async () => {
    const g = await start({ initial: () => ({ artifact: naiveMatmulArtifact("kzoo", SHAPE), fromZoo: true }), offers: [] });
    const result = await tune(g.url, WORKLOAD, { fingerprint: "unit", timing: FAST_TIMING });
    expect(result.initialFromZoo).toBe(true);
    expect(result.ops[0]).toMatchObject({ initialKernelId: "kzoo", bestKernelId: "kzoo", initialFromZoo: true });
    expect(result.kernelsReceived).toBe(0);
  });

  it("fails with the gateway's error when a report is refused", async () => {
    const g = await start({ refuseReports: true, offers: [] });
    const failure = await tune(g.url, WORKLOAD, { fingerprint: "unit", timing: FAST_TIMING }).catch((e) => e);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure.code).toBe("gateway_refused");
    expect(failure.gatewayCode).toBe(ErrorCode.INVALID_REPORT);
  });

  it("stops when aborted: the session closes and the abort's reason is thrown", async () => {
    const g = await start();
    const controller = new AbortController();
    let kernels = 0;
    const failure = await tune(g.url, WORKLOAD, {
      fingerprint: "unit", timing: FAST_TIMING, signal: controller.signal,
      log: (line) => { if (/^  offer #\d+ k\d/.test(line) && ++kernels === 2) controller.abort(); },
    }).catch((e) => e);
    expect(failure).toBeInstanceOf(DOMException);
    expect(failure.name).toBe("AbortError");
    expect(g.received.some((f) => f.frame.case === "report")).toBe(false); // stopped before reporting

    const before = new AbortController();
    before.abort();
    await expect(tune(g.url, WORKLOAD, { signal: before.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("resumes the session when its connection drops, and is offered what it missed", async () => {
    const g = await start({ dropAfterOffers: 2 });
    const result = await tune(g.url, WORKLOAD, { fingerprint: "unit", timing: FAST_TIMING, reconnect: { baseDelayMs: 10 } });
    expect(g.connections).toBe(2);
    expect(g.received.filter((f) => f.frame.case === "resume")).toHaveLength(1);
    expect(result).toMatchObject({ kernelsReceived: 6, offersSent: 6, kernelsInvalid: 0, reportsAcked: 1 });
    expect(g.acked).toHaveLength(1);
  });

  it("fails with the close when the gateway hangs up and reconnecting is off", async () => {
    const g = await start({ closeAfterOffers: 2 });
    const failure = await tune(g.url, WORKLOAD, { fingerprint: "unit", timing: FAST_TIMING, reconnect: { attempts: 0 } }).catch((e) => e);
    expect(failure).toBeInstanceOf(ConnectionClosed);
    expect(failure).toMatchObject({ closeCode: 1011, reason: "the fake gateway gives up" });
  });
});
