import { afterEach, describe, expect, it, vi } from "vitest";
import { loadModel } from "../../src/load.js";
import { checkedEntry, MemoryKernelStore } from "../../src/model/kernel-store.js";
import { FakeGateway } from "../support/fake-gateway.js";
import { expectedY, M, K, N, runUntilSettled, smallMatmul, x } from "../support/small-matmul.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const FP = "kept-device";

describe("kernels kept on the device", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => { await gateway?.stop(); gateway = undefined; });

  async function tuneOnce(store: MemoryKernelStore): Promise<string> {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      offers: [naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, threads: 1, fingerprint: FP, tuning: { budget: 1 }, store });
    await runUntilSettled(model);
    await model.close();
    await gateway.stop();
    gateway = undefined;
    return model.stats().ops[0].kernelId;
  }

  it("keeps the kernel an op settles on, and the next load runs it once checked, with no gateway answering", async () => {
    const store = new MemoryKernelStore();
    const settledOn = await tuneOnce(store);
    const [key] = [...store.entries.keys()];
    expect(key).toBe(`${FP}|matmul|16x32x24`);
    expect((store.entries.get(key) as { kernelId: string }).kernelId).toBe(settledOn);

    // the gateway is unreachable: the first run is on the generic kernel, the next ones on the kept kernel once checked
    const reloaded = await loadModel(smallMatmul(), {
      gateway: "ws://127.0.0.1:1/v1/session", client: { connectTimeoutMs: 2000 }, fingerprint: FP, store, threads: 1,
    });
    const check = async () => {
      const { y } = await reloaded.run({ x });
      (y.data as Float32Array).forEach((v, i) => expect(Math.abs(v - expectedY[i])).toBeLessThan(1e-4));
    };
    await check();
    expect(reloaded.stats().ops[0].source).toBe("generic");
    await vi.waitFor(async () => {
      await check();
      expect(reloaded.stats().ops[0]).toMatchObject({ kernelId: settledOn, source: "wasm", restored: true });
    }, { timeout: 5_000 });
    await reloaded.close();
  });

  it("times the Welcome's kernel against the kept one, and never reports a kernel this session's gateway did not issue", async () => {
    const store = new MemoryKernelStore();
    const entry = { format: 1, fingerprint: FP, op: "matmul|16x32x24", kernelId: "k-kept", savedAt: 1, ms: 0.01,
      ...(() => { const a = naiveMatmulArtifact("k-kept", [M, K, N]); return { wasm: a.code.value as Uint8Array, metadataJson: a.metadataJson }; })() };
    store.entries.set(`${FP}|matmul|16x32x24`, entry);
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-zoo", [M, K, N]), fromZoo: true }),
      offers: [],
    });
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, threads: 1, fingerprint: FP, tuning: { budget: 1 }, store });
    const timed: string[] = [];
    model.on("kernel-timed", (e) => timed.push(`${e.kernelId} against ${e.incumbentId}`));
    await runUntilSettled(model);
    await model.close();
    expect(model.stats().ops[0]).toMatchObject({ restored: true, fromZoo: true });
    expect(timed).toEqual(["k-zoo against k-kept"]);
    expect(gateway.acked).toHaveLength(1);
    expect(gateway.acked[0].ranked.map((r) => r.kernelId)).not.toContain("k-kept");
  });

  it("ignores a corrupted or foreign entry, and replaces it once the op settles", async () => {
    const store = new MemoryKernelStore();
    const key = `${FP}|matmul|16x32x24`;
    store.entries.set(key, { format: 1, fingerprint: FP, op: "matmul|16x32x24", kernelId: "k-broken", wasm: Uint8Array.of(0, 97, 115, 109, 9),
      metadataJson: "{}", ms: 1, savedAt: 1 });
    expect(await store.get(FP, "matmul|16x32x24")).toBeUndefined(); // not a module
    expect(checkedEntry({ ...(store.entries.get(key) as object), fingerprint: "another-kind" }, FP, "matmul|16x32x24")).toBeUndefined();
    const settledOn = await tuneOnce(store);
    expect(settledOn).not.toBe("k-broken");
    expect((await store.get(FP, "matmul|16x32x24"))?.kernelId).toBe(settledOn);
  });
});
