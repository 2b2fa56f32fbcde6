// (b) Bad input on the WebSocket: each on its own connection, each followed by a check that a
// fresh valid session is still served, and nothing from the refused sessions reaches the zoo.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { GATEWAY, hello, RawSession, report, zooGet } from "./support.js";

/** A fresh valid session must still get a Welcome. */
async function stillServing(): Promise<void> {
  const s = new RawSession();
  await s.send(hello(`probe-${randomUUID()}`, [4, 4, 4]));
  expect((await s.next("welcome")).sessionId).not.toBe("");
  s.close();
}

describe.skipIf(!GATEWAY)("bad input on the WebSocket", () => {
  /** Fingerprints used only in sessions that sent nothing valid to store. */
  const badFingerprints: string[] = [];
  const badFingerprint = () => {
    const fingerprint = `bad-${randomUUID()}`;
    badFingerprints.push(fingerprint);
    return fingerprint;
  };

  it("garbage bytes: MALFORMED_FRAME, close 1007", async () => {
    const s = new RawSession();
    await s.send(new Uint8Array([0xff, 0x00, 0x13, 0x37, 0x99, 0xff, 0xff]));
    expect((await s.next("error")).code).toBe(ErrorCode.MALFORMED_FRAME);
    const closed = await s.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a truncated Hello: close 1007", async () => {
    const bytes = hello(badFingerprint());
    const s = new RawSession();
    await s.send(bytes.slice(0, Math.floor(bytes.length / 2)));
    const closed = await s.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a text message: close 1007 or 1003, with a reason", async () => {
    const s = new RawSession();
    await s.send("hello?");
    const closed = await s.closed;
    expect([1003, 1007]).toContain(closed.code);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a Hello without a fingerprint: INVALID_HELLO, close 1008", async () => {
    const s = new RawSession();
    await s.send(hello(""));
    expect((await s.next("error")).code).toBe(ErrorCode.INVALID_HELLO);
    const closed = await s.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a Report before Hello: close 1008", async () => {
    const s = new RawSession();
    await s.send(report("k1whatever"));
    const closed = await s.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).not.toBe("");
    await stillServing();
  });

  it("a Report naming an unknown kernel: INVALID_REPORT, and the session stays open", async () => {
    const s = new RawSession();
    await s.send(hello(`forged-${randomUUID()}`));
    const welcome = await s.next("welcome");
    const issued = welcome.initial[0].artifact!.ref!.kernelId;

    await s.send(report("k1forgedforgedforgedforgedforged0"));
    expect((await s.next("error")).code).toBe(ErrorCode.INVALID_REPORT);
    await s.send(report(issued));
    expect((await s.next("reportAck")).op?.shape).toEqual([128, 256, 96]);
    s.close();
    await stillServing();
  });

  it("a Report for an op never requested: INVALID_REPORT", async () => {
    const s = new RawSession();
    await s.send(hello(badFingerprint()));
    const welcome = await s.next("welcome");
    const issued = welcome.initial[0].artifact!.ref!.kernelId;

    await s.send(report(issued, [7, 7, 7]));
    expect((await s.next("error")).code).toBe(ErrorCode.INVALID_REPORT);
    s.close();
    await stillServing();
  });

  it("stored nothing from the refused sessions", async () => {
    expect(badFingerprints).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 1000)); // give a wrongly published report time to land
    for (const fingerprint of badFingerprints) {
      const count = await zooGet(`/api/v1/reports/count?fingerprint=${encodeURIComponent(fingerprint)}`);
      expect(count.status).toBe(200);
      expect(count.body).toMatchObject({ count: 0 });
    }
  });
});
