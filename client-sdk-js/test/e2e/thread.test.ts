// (a) The thread through every part: tune, report, elect, and hand the elected kernel on.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { tune } from "../../src/tuner.js";
import { WORKLOADS } from "../../src/workloads.js";
import { awaitElected, GATEWAY, zooGet } from "./support.js";

describe.skipIf(!GATEWAY)("the thread through every part", () => {
  it("tunes, reports, and hands the elected kernel to the next device of the same kind", async () => {
    const fingerprint = `e2e-${randomUUID()}`;
    const first = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint });
    expect(first.initialFromZoo).toBe(false);
    expect(first.offersSent).toBeGreaterThan(0);
    expect(first.kernelsReceived).toBe(first.offersSent);
    expect(first.kernelsInvalid).toBe(0);
    expect(first.kernelsValidated).toBe(first.kernelsReceived + 1); // every offer and the initial kernel
    expect(first.kernelsTimed).toBe(first.kernelsValidated);
    expect(first.reportsAcked).toBe(1);
    expect(first.ops[0].gflops).toBeGreaterThan(0);

    const elected = await awaitElected(fingerprint);
    expect(typeof elected.kernelId).toBe("string");
    expect(typeof elected.medianMs).toBe("number");
    expect(elected.reports).toBeGreaterThanOrEqual(1);
    // the report carried the safe default's timing: the zoo says how much faster its election is
    const [election] = (await zooGet(`/api/v1/kinds/${fingerprint}/elections`)).body as unknown as { speedupVsSafeDefault: number }[];
    expect(election.speedupVsSafeDefault).toBeCloseTo(first.ops[0].initialMs / (elected.medianMs as number), 6);

    const second = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint });
    expect(second.initialFromZoo).toBe(true);
    expect(second.ops[0].initialFromZoo).toBe(true);
    expect(second.ops[0].initialKernelId).toBe(elected.kernelId);
  });
});
