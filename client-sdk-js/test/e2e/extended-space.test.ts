// (c) The extended space through every part: a new device kind is offered the best kernel of a
// similar kind first (zoo → space → gateway), and a settled kind explores no more.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { tune } from "../../src/tuner.js";
import { WORKLOADS } from "../../src/workloads.js";
import { awaitElected, GATEWAY } from "./support.js";

describe.skipIf(!GATEWAY)("the extended space", () => {
  it("offers a similar kind's best first, and only neighbours' bests once a kind is settled", async () => {
    const a = `e2e-a-${randomUUID()}`;
    const first = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint: a });
    expect(first.offersSent).toBeGreaterThan(0);
    const elected = await awaitElected(a);

    // another kind on the same hardware (the same probe): a's best is in its exploitation set, sent first
    const b = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint: `e2e-b-${randomUUID()}` });
    expect(b.initialFromZoo).toBe(false);
    expect(b.offersFromZoo).toBeGreaterThan(0);
    expect(b.ops[0].zooKernelIds).toContain(elected.kernelId);
    expect(b.kernelsInvalid).toBe(0);

    // the test stack settles a kind after one report (JITZOO_SPACE_SETTLED_REPORTS=1): a explores no more
    const again = await tune(GATEWAY!, WORKLOADS.skeleton, { fingerprint: a });
    expect(again.initialFromZoo).toBe(true);
    expect(again.offersSent).toBe(again.offersFromZoo);
    expect(again.offersSent).toBeLessThan(first.offersSent);
    expect(again.ops[0].zooKernelIds).not.toContain(elected.kernelId); // its own best is the incumbent already
  });
});
