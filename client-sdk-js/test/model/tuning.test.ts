import { afterEach, describe, expect, it, vi } from "vitest";
import { runUntilSettled as drive } from "../../src/model/drive.js";
import { loadModel } from "../../src/load.js";
import { reportSettled, type Measured } from "../../src/model/tuning.js";
import type { ModelSession } from "../../src/model/session.js";
import { FakeGateway } from "../support/fake-gateway.js";
import { K, M, N, runUntilSettled, x } from "../support/small-matmul.js";
import { matmulModel } from "../support/onnx.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

describe("tuning during the app's own inference", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => { await gateway?.stop(); gateway = undefined; });

  it("never makes a wrong candidate the incumbent, and reports only kernels it checked", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      // off by 1%: a kernel that would look fine to a loose check, and is no slower than the others
      offers: [naiveMatmulArtifact("k-wrong", [M, K, N], 1.01), naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 } });
    const events: string[] = [];
    model.on("connection", (e) => events.push(`connection ${e.state} ${e.ops}`));
    model.on("kernel-refused", (e) => events.push(`refused ${e.kernelId}`));
    model.on("kernel-timed", (e) => events.push(`timed ${e.kernelId} against ${e.incumbentId}`));
    model.on("op-settled", (e) => events.push(`settled ${e.op}`));
    model.on("report-acked", (e) => events.push(`acked ${e.op}`));
    await runUntilSettled(model);
    await model.close();
    const [op] = model.stats().ops;
    expect(events).toEqual(["connection open 1", "refused k-wrong", "timed k-right against k-initial",
      `settled ${op.key}`, `acked ${op.key}`]);
    expect(model.stats().settled).toBe(true);
    expect(op.history.map((h) => h.kernelId)).not.toContain("k-wrong");
    expect(op.kernelId).not.toBe("k-wrong");
    expect(op.refused).toBe(1);
    expect(gateway.acked).toHaveLength(1);
    const ranked = gateway.acked[0].ranked.map((r) => r.kernelId);
    expect(ranked).not.toContain("k-wrong");
    expect(ranked).toContain("k-initial");
  });

  it("stops driving the model when aborted, closes it, and throws the abort's reason", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 } });
    const controller = new AbortController();
    const failure = await drive(model, { x }, { signal: controller.signal, onRun: (r) => { if (r === 2) controller.abort(); } })
      .catch((e) => e);
    expect(failure).toMatchObject({ name: "AbortError" });
    expect(model.stats().runs).toBe(3); // the run under way finished; no other started
  });

  it("gives back the credit of an offer for an op it did not ask for, so the ops it asked for still get theirs", async () => {
    // more strays than the session's credits (4 for one op): without their credits back the right offer never comes
    const strays = Array.from({ length: 6 }, (_, i) => naiveMatmulArtifact(`k-stray-${i}`, [M, K, N + 4]));
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [...strays, naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 } });
    await runUntilSettled(model);
    await model.close();
    expect(model.stats().settled).toBe(true);
    expect(gateway.acked).toHaveLength(1);
    expect(gateway.acked[0].ranked.map((r) => r.kernelId)).toContain("k-right");
  });

  it("refuses a wrong Welcome kernel (tried on seeded inputs) and keeps the generic kernel", async () => {
    gateway = await FakeGateway.start({ initial: () => ({ artifact: naiveMatmulArtifact("k-bad-default", [M, K, N], 2), fromZoo: true }), offers: [] });
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device" });
    await vi.waitFor(async () => {
      await runUntilSettled(model, 1);
      expect(model.stats().ops[0].refused).toBe(1);
    }, { timeout: 10_000 });
    await runUntilSettled(model, 5);
    expect(model.stats().ops[0].kernelId).toBe("generic");
    await model.close();
  });

  it("starts a first inference at once on the generic kernels, and takes the Welcome's once it is checked", async () => {
    gateway = await FakeGateway.start({ initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }), offers: [], holdWelcomes: true });
    const lines: string[] = [];
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", log: (l) => lines.push(l) });
    await runUntilSettled(model, 3); // the gateway holds its Welcome: nothing waits for it
    expect(model.stats().ops[0]).toMatchObject({ kernelId: "generic", source: "generic" });
    expect(model.stats().runs).toBe(3);
    expect(model.stats().settled).toBe(false);
    expect(lines.some((l) => /warmed/.test(l))).toBe(false);
    gateway.releaseWelcomes();
    await vi.waitFor(() => expect(model.stats().ops[0].kernelId).toBe("k-initial"), { timeout: 10_000 });
    await runUntilSettled(model);
    expect(model.stats().settled).toBe(true);
    await model.close();

    const alone: string[] = [];
    const offline = await loadModel(matmulModel(M, K, N), { log: (l) => alone.push(l) });
    await runUntilSettled(offline, 1);
    expect(alone.some((l) => /warmed/.test(l))).toBe(false);
  });

  it("keeps inferring on the generic kernels, and says why, when the gateway cannot be reached", async () => {
    const model = await loadModel(matmulModel(M, K, N), { gateway: "ws://127.0.0.1:1/v1/session", client: { connectTimeoutMs: 2000 } });
    await runUntilSettled(model, 2);
    expect(model.stats().ops[0].source).toBe("generic");
    await vi.waitFor(async () => {
      await runUntilSettled(model, 1);
      expect(model.stats().notes.join(" ")).toMatch(/the gateway did not answer .*cannot connect/);
    }, { timeout: 10_000 });
    expect(model.stats().settled).toBe(true);
  });

  it("reports only kernels timed above 0 (the gateway refuses the whole report otherwise), and nothing when none was", async () => {
    const sent: unknown[] = [];
    const session = { report: (_op: unknown, ranked: unknown, initial: unknown) => { sent.push({ ranked, initial }); return Promise.resolve(); } };
    const timed = (medianMs: number): Measured => ({ medianMs, samples: 5, maxRelError: 0 });
    const report = (measured: Map<string, Measured>) => reportSettled({
      session: session as unknown as ModelSession, op: {} as never, key: "op", kernelId: "fast", measured, localOnly: new Set(),
      welcome: { id: "welcome", fromZoo: false }, log: () => undefined, emit: () => undefined,
    });
    await report(new Map([["fast", timed(0.2)], ["welcome", timed(0)], ["untimed", timed(NaN)], ["slow", timed(0.4)]]));
    expect(sent).toEqual([{ ranked: [{ kernelId: "fast", ...timed(0.2) }, { kernelId: "slow", ...timed(0.4) }], initial: undefined }]);
    expect(report(new Map([["welcome", timed(0)]]))).toBeUndefined();
  });

  it("checks kernels on tensors that carry infinities (an attention mask of −∞), and keeps tuning", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(matmulModel(M, K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", tuning: { budget: 1 } });
    const masked = { data: x.data.map((v, i) => (i === 0 ? -Infinity : v)), dims: x.dims }; // row 0 of C: ±∞ and NaN
    const stats = await drive(model, { x: masked });
    expect(stats.settled).toBe(true);
    expect(stats.ops[0].refused).toBe(0);
    expect(stats.ops[0].kernelId).not.toBe("reference");
  });
});
