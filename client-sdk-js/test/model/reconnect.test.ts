// A session whose connection drops: it reconnects with backoff, resumes with the Welcome's token,
// keeps its kernels reportable, is offered what it missed, and sends again a report whose
// acknowledgement was lost (stored once); a session the gateway forgot fails and says why.
import { afterEach, describe, expect, it } from "vitest";
import { loadModel } from "../../src/load.js";
import { type Model } from "../../src/model/model.js";
import { FakeGateway, type FakeGatewayOptions } from "../support/fake-gateway.js";
import { K, M, N, runUntilSettled, smallMatmul } from "../support/small-matmul.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const FAST = { attempts: 5, baseDelayMs: 5, maxDelayMs: 20 };

describe("reconnecting and resuming a session", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => { await gateway?.stop(); gateway = undefined; });

  async function tuned(options: Partial<FakeGatewayOptions>): Promise<{ model: Model; states: string[] }> {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [1, 2, 3, 4].map((i) => naiveMatmulArtifact(`k${i}`, [M, K, N])),
      ...options,
    });
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 }, reconnect: FAST });
    const states: string[] = [];
    model.on("connection", (e) => states.push(e.state));
    await runUntilSettled(model);
    await model.close();
    return { model, states };
  }

  it("reconnects after a drop mid-tuning, resumes, and is offered the kernels it missed", async () => {
    const { model, states } = await tuned({ dropAfterOffers: 2 });
    expect(states).toEqual(["open", "reconnecting", "resumed"]);
    expect(gateway!.connections).toBe(2);
    expect(gateway!.received.filter((f) => f.frame.case === "resume")).toHaveLength(1);
    expect(model.stats().settled).toBe(true);
    expect(model.stats().notes).toEqual([]);
    // the offers of the second connection reached the op, and its report (naming them) is stored
    expect(model.stats().ops[0].refused).toBe(0);
    expect(gateway!.acked).toHaveLength(1);
    expect(gateway!.acked[0].ranked.map((r) => r.kernelId)).toEqual(expect.arrayContaining(["k3", "k4"]));
  });

  it("sends a report again when its acknowledgement was lost, and the gateway stores it once", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [naiveMatmulArtifact("k1", [M, K, N])], dropOnFirstReport: true,
    });
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 }, reconnect: FAST });
    const acked: string[] = [];
    model.on("report-acked", (e) => acked.push(e.op));
    await runUntilSettled(model);
    await model.close();
    expect(gateway.received.filter((f) => f.frame.case === "report")).toHaveLength(2);
    expect(gateway.acked).toHaveLength(1);
    expect(acked).toHaveLength(1);
  });

  it("sends a report again after a backoff while the gateway cannot store it", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [naiveMatmulArtifact("k1", [M, K, N])], unavailableReports: 2,
    });
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 }, reconnect: FAST });
    const acked: string[] = [];
    const failed: string[] = [];
    model.on("report-acked", (e) => acked.push(e.op));
    model.on("report-failed", (e) => failed.push(e.why));
    await runUntilSettled(model);
    await model.close();
    expect(gateway.received.filter((f) => f.frame.case === "report")).toHaveLength(3);
    expect(gateway.acked).toHaveLength(1);
    expect(acked).toHaveLength(1);
    expect(failed).toEqual([]);
  });

  it("gives up when the gateway forgot the session: the op keeps its kernel, and the model says why", async () => {
    const { model, states } = await tuned({ dropAfterOffers: 1, forgetSessions: true });
    expect(states).toEqual(["open", "reconnecting", "failed"]);
    const [op] = model.stats().ops;
    expect(op.source).toBe("wasm");
    expect(model.stats().notes.join(" ")).toMatch(/could not be resumed: unknown or expired resume token/);
    expect(gateway!.acked).toHaveLength(0);
  });
});
