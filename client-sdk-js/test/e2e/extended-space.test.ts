// (c) The extended space through every part: a new device kind is offered the best kernel of a
// similar kind first (zoo → space → gateway), and a settled kind explores no more.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Backend } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { tune } from "../../src/tuner.js";
import { matmul, type Workload } from "../../src/workloads.js";
import { awaitElected, GATEWAY } from "./support.js";

/** An op no other test (nor an earlier run against the same suite) reports on: its only device kinds are this test's. */
const SHAPE = [33 + Math.floor(Math.random() * 128), 192, 32 + 4 * Math.floor(Math.random() * 17)];
const WORKLOAD: Workload = { name: "e2e-extended", backend: Backend.WASM, ops: [matmul(SHAPE[0], SHAPE[1], SHAPE[2])] };

describe.skipIf(!GATEWAY)("the extended space", () => {
  it("offers a similar kind's best first, and only neighbours' bests once a kind is settled", async () => {
    const a = `e2e-a-${randomUUID()}`;
    const first = await tune(GATEWAY!, WORKLOAD, { fingerprint: a });
    expect(first.offersSent).toBeGreaterThan(0);
    const elected = await awaitElected(a, SHAPE);

    // another kind on the same hardware (the same probe): a's best is in its exploitation set, sent first
    const b = await tune(GATEWAY!, WORKLOAD, { fingerprint: `e2e-b-${randomUUID()}` });
    expect(b.initialFromZoo).toBe(false);
    expect(b.offersFromZoo).toBeGreaterThan(0);
    expect(b.ops[0].zooKernelIds[0]).toBe(elected.kernelId); // the only neighbour's best scores 1, its others less
    expect(b.kernelsInvalid).toBe(0);

    // the test stack settles a kind after one origin's report (JITZOO_SPACE_SETTLED_ORIGINS=1): a explores no more
    const again = await tune(GATEWAY!, WORKLOAD, { fingerprint: a });
    expect(again.initialFromZoo).toBe(true);
    expect(again.offersSent).toBe(again.offersFromZoo);
    expect(again.offersSent).toBeLessThan(first.offersSent);
    expect(again.ops[0].zooKernelIds).not.toContain(elected.kernelId); // its own best is the incumbent already
  });
});
