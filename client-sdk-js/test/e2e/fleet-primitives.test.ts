// (d) Fleet microbenchmarks through every part: a device's result goes gateway → Kafka → zoo, the
// space service reads the fleet's results and reopens a primitive one device disagrees on; bad
// results are refused with the reason and the session stays open.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Primitive } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { tune } from "../../src/tuner.js";
import { WORKLOADS } from "../../src/workloads.js";
import { GATEWAY, hello, microbench, RawSession, zooGet } from "./support.js";

/** Polls `check` until it holds. */
async function eventually<T>(what: string, probe: () => Promise<T>, check: (t: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const explored = (r: { offersSent: number; offersFromZoo: number }) => r.offersSent - r.offersFromZoo;

describe.skipIf(!GATEWAY)("fleet microbenchmarks", () => {
  it("reach the zoo, and one device where packing B costs reopens it in every device's space", async () => {
    type Row = { fingerprint: string; primitive: string; speedup: number; reports: number };
    const fleet = async () => (await zooGet("/api/v1/primitives")).body as unknown as Row[];
    // an earlier run against the same suite may have reopened it already; a fresh suite (./jitzoo test) has not
    const reopened = (await fleet()).some((r) => r.primitive === "cache_read" && r.speedup < 0.95);
    const before = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint: `e2e-mb-${randomUUID()}` });
    const phone = `e2e-phone-${randomUUID()}`;
    const sent = await tune(GATEWAY!, WORKLOADS.skeleton, {
      fingerprint: phone, microbench: { speedups: { cache_read: 0.5, vectorize: 1.8 }, engine: "e2e phone", peakGflops: 40 },
    });
    expect(sent.microbenchAcked).toBe(true);

    const rows = await eventually("the zoo storing the microbenchmark",
      async () => (await fleet()).filter((r) => r.fingerprint === phone), (r) => r.length === 2);
    expect(rows.map((r) => [r.primitive, r.speedup, r.reports])).toEqual([["cache_read", 0.5, 1], ["vectorize", 1.8, 1]]);
    // its measured peak bounds what the kind may report: twice the peak
    const peak = await eventually("the zoo storing the measured peak",
      async () => (await zooGet(`/api/v1/kinds/${phone}/peak`)).body, (b) => b.peakGflops !== null);
    expect(peak).toEqual({ fingerprint: phone, peakGflops: 40, ceilingGflops: 80 });

    if (reopened) return;
    // the test stack reads the fleet every second (JITZOO_SPACE_FLEET_REFRESH=PT1S): B is now tried packed and in place
    const after = await eventually("the space pooling the fleet",
      () => tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint: `e2e-mb-${randomUUID()}` }),
      (r) => explored(r) > explored(before));
    expect(after.kernelsInvalid).toBe(0);
  });

  it("refuses bad results with the reason, and the session stays open", async () => {
    const early = new RawSession();
    await early.send(microbench(Primitive.VECTORIZE, 1.5));
    expect((await early.next("error")).code).toBe(ErrorCode.PROTOCOL);
    expect((await early.closed).code).toBe(1008);

    const s = new RawSession();
    await s.send(hello(`bad-mb-${randomUUID()}`));
    await s.next("welcome");
    await s.send(microbench(Primitive.VECTORIZE, Number.NaN));
    const nan = await s.next("error");
    expect(nan.code).toBe(ErrorCode.INVALID_MICROBENCH);
    expect(nan.message).toMatch(/speedup of PRIMITIVE_VECTORIZE must be in \(0, 1000\), got NaN/);
    await s.send(microbench(99 as Primitive, 1.2));
    expect((await s.next("error")).message).toBe("unknown primitive 99");
    await s.send(microbench(Primitive.UNROLL, 0.7));
    await s.next("microbenchAck"); // still open, and a good result is taken
    await s.send(microbench(Primitive.UNROLL, 0.7));
    expect((await s.next("error")).message).toBe("a session sends one microbenchmark result");
    s.close();
  });
});
