// WebGPU through the suite, in Node (Dawn on SwiftShader): a MiniLM-shaped encoder runs on jitzoo's
// WGSL kernels, every op tuned through a WGSL session (gateway → space → codegen, reports → zoo),
// its outputs those of the reference kernels; a device lost mid-run is replaced and the run goes on;
// a second load on the same device kind builds every pipeline while it loads, none in a run.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { feedsFor, runUntilSettled } from "../../src/model/drive.js";
import { MemoryKernelStore } from "../../src/model/kernel-store.js";
import { loadModel } from "../../src/load.js";
import { type Model } from "../../src/model/model.js";
import { maxRelativeError } from "../../src/reference.js";
import type { GpuModel } from "../../src/webgpu/model.js";
import { modelBytes, modelsMissing } from "../support/models.js";
import { noWebGpu, useSwiftShader } from "../support/webgpu.js";
import { GATEWAY, zooGet } from "./support.js";

const SEQ = 8;

async function firstOutput(model: Model, seq = SEQ): Promise<Float32Array> {
  const out = await model.run(feedsFor(model, seq));
  return Object.values(out)[0].data as Float32Array;
}

describe.skipIf(!GATEWAY || modelsMissing || noWebGpu)("a model on WebGPU through the suite (Dawn on SwiftShader)", () => {
  it("tunes every op of the MiniLM-shaped encoder as WGSL, matches the reference, survives a lost device, and reloads without building a pipeline in a run", async () => {
    useSwiftShader();
    const bytes = modelBytes("minilm.onnx");
    const expected = await firstOutput(await loadModel(bytes)); // the reference kernels, on the CPU
    const fingerprint = `e2e-webgpu-${randomUUID()}`;
    const store = new MemoryKernelStore();
    const lines: string[] = [];
    const model = await loadModel(bytes, { gateway: GATEWAY, fingerprint, backend: "webgpu", store, tuning: { budget: 1 }, log: (l) => lines.push(l) });
    const refused: string[] = [];
    model.on("kernel-refused", (e) => refused.push(`${e.op} ${e.kernelId}: ${e.why}`));
    let timed = 0;
    model.on("kernel-timed", () => timed++);
    expect(maxRelativeError(await firstOutput(model), expected)).toBeLessThanOrEqual(1e-4);
    const first = model.stats();
    expect(first.backend, [...first.notes, ...lines].join("\n")).toBe("webgpu");
    expect(first.gpu!.submitsPerRun).toBe(1);
    expect(first.gpu!.errors).toBe(0);
    expect(first.gpu!.dispatchesPerRun).toBeGreaterThan(60); // 6 layers: every kernel and shader in one pass
    expect(first.gpu!.pipelinesBuiltInRuns).toBeGreaterThan(0); // the first load builds the Welcome's pipelines as it starts

    // runs asked for at once (as a worker's page may, while tuning is under way) take turns
    const together = await Promise.all([firstOutput(model), firstOutput(model), firstOutput(model)]);
    for (const out of together) expect(maxRelativeError(out, expected)).toBeLessThanOrEqual(1e-4);

    // the device is lost under a run: it is replaced, and that run and the next give the right answer
    const running = firstOutput(model);
    (model as GpuModel).gpu.device.destroy();
    expect(maxRelativeError(await running, expected)).toBeLessThanOrEqual(1e-4);
    expect(maxRelativeError(await firstOutput(model), expected)).toBeLessThanOrEqual(1e-4);
    expect(model.stats().gpu!.deviceLosses).toBe(1);

    const tuned = await runUntilSettled(model, feedsFor(model, SEQ), { maxSeconds: 240 });
    expect(tuned.notes, lines.join("\n")).toEqual([]);
    expect(tuned.settled).toBe(true);
    expect(tuned.ops.length).toBeGreaterThanOrEqual(8);
    for (const op of tuned.ops) {
      expect(op.source, op.key).toBe("wgsl");
      expect(op.history[0].kernelId, op.key).toMatch(/^k[0-9a-f]{31}$/);
    }
    expect(refused).toEqual([]);
    expect(timed).toBeGreaterThan(tuned.ops.length); // the lite spaces' candidates were timed beside their incumbents
    expect(tuned.ops.some((op) => op.history.length > 1)).toBe(true); // some op found a faster kernel than its first
    expect(maxRelativeError(await firstOutput(model), expected)).toBeLessThanOrEqual(1e-4);
    await model.close();
    const count = await zooGet(`/api/v1/reports/count?fingerprint=${fingerprint}`);
    expect(Number(count.body.count)).toBeGreaterThanOrEqual(tuned.ops.length);

    // the next load on this device kind: every kernel and shader kept, their pipelines built while it loads
    const again = await loadModel(bytes, { gateway: GATEWAY, fingerprint, backend: "webgpu", store, tuning: { budget: 0 } });
    expect(maxRelativeError(await firstOutput(again), expected)).toBeLessThanOrEqual(1e-4);
    const reloaded = again.stats();
    expect(reloaded.ops.every((op) => op.restored)).toBe(true);
    expect(reloaded.gpu!.pipelinesBuiltInRuns).toBe(0);
    await again.close();
    (model as GpuModel).gpu.close();
    (again as GpuModel).gpu.close();
  }, 360_000); // tuning alone may take 240 s (SwiftShader on a slow machine: 116 s here on a good day)
});
