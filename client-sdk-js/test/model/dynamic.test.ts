import { afterEach, describe, expect, it, vi } from "vitest";
import type { PlanRequest } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { loadModel } from "../../src/load.js";
import { type Model } from "../../src/model/model.js";
import { referenceMatMul, seededFloats } from "../../src/reference.js";
import { FakeGateway, type FakeGatewayOptions } from "../support/fake-gateway.js";
import { matmulModel } from "../support/onnx.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const [K, N] = [32, 24];
const UKERNEL_ROWS = [4, 8];

/** FTuner's shape of plan: 8-row calls, then 4-row calls over the rest (the last one padded). */
function plan(request: PlanRequest) {
  const plans = [];
  for (let extent = request.lo; extent <= request.hi; extent++) {
    const eights = Math.floor(extent / 8), fours = Math.ceil((extent - 8 * eights) / 4);
    const pieces = [...(eights ? [{ rows: 8, count: eights }] : []), ...(fours ? [{ rows: 4, count: fours }] : [])];
    plans.push({ extent, pieces, paddedExtent: 8 * eights + 4 * fours });
  }
  return { op: request.op, lo: request.lo, hi: request.hi, kernels: UKERNEL_ROWS.map((rows) => ({ rows })), plans };
}

/** A gateway that welcomes every op with a naive kernel of its rows and plans as {@link plan} does (unless told otherwise). */
const planningGateway = (options: Partial<FakeGatewayOptions> = {}) => FakeGateway.start({
  initial: (op) => ({ artifact: naiveMatmulArtifact(`k-${op.shape[0]}`, op.shape as [number, number, number]), fromZoo: false }),
  offers: [],
  plan,
  ...options,
});

const expected = (x: Float32Array, m: number) => referenceMatMul({ batch: 1, m, k: K, n: N }, x, seededFloats(K * N, 3));

async function runChecked(model: Model, m: number): Promise<void> {
  const x = seededFloats(m * K, 100 + m);
  const { y } = await model.run({ x: { data: x, dims: [m, K] } });
  const want = expected(x, m);
  expect(y.dims).toEqual([m, N]);
  (y.data as Float32Array).forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThan(1e-4));
}

describe("a MatMul whose rows change between runs", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => { await gateway?.stop(); gateway = undefined; });

  it("runs the gateway's uKernel plan over row slices (padding included), asking for it once, with one kernel per uKernel", async () => {
    gateway = await planningGateway();
    const model = await loadModel(matmulModel("rows", K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", dynamicRows: 64 });
    await runChecked(model, 16); // the first plan: a kernel for 16 rows (the generic one until the Welcome's is checked)
    await vi.waitFor(() => expect(model.stats().ops[0].source).toBe("wasm"), { timeout: 10_000 });
    expect(model.stats().dynamicSteps).toBe(0);
    // the first new length asks for the plan and runs its generic kernel meanwhile; once answered, 8+4 (one padded row)
    await runChecked(model, 11);
    await vi.waitFor(async () => {
      await runChecked(model, 11);
      expect(model.stats().dynamicSteps).toBe(1);
    }, { timeout: 10_000 });
    // 4 (one), the first plan again (its own kernel), 8·3+4·2 (three)
    for (const [m, dynamicSteps] of [[3, 1], [16, 0], [29, 1]]) {
      await runChecked(model, m);
      expect(model.stats().dynamicSteps, `${m} rows`).toBe(dynamicSteps);
    }
    const stats = model.stats();
    expect(stats.plans).toBe(4);
    expect(stats.dynamicSteps).toBe(1);
    expect(stats.ops.map((o) => o.key).sort()).toEqual(["matmul|16x32x24", "matmul|4x32x24", "matmul|8x32x24"]);
    await vi.waitFor(() => expect(model.stats().ops.every((o) => o.source === "wasm")).toBe(true), { timeout: 10_000 });
    expect(gateway.received.filter((f) => f.frame.case === "planRequest")).toHaveLength(1);
    const request = gateway.received.find((f) => f.frame.case === "planRequest")!.frame.value as PlanRequest;
    expect([request.lo, request.hi, request.op?.shape]).toEqual([1, 64, [64, K, N]]);
    await model.close();
  });

  it("keeps a kernel per length, and says why, when the gateway plans nothing", async () => {
    gateway = await planningGateway({ plan: undefined });
    const lines: string[] = [];
    const model = await loadModel(matmulModel("rows", K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", log: (l) => lines.push(l) });
    for (const m of [16, 11]) await runChecked(model, m);
    await vi.waitFor(() => expect(model.stats().notes).toHaveLength(1), { timeout: 10_000 });
    for (const m of [11, 7]) await runChecked(model, m);
    expect(model.stats().dynamicSteps).toBe(0);
    expect(model.stats().ops.map((o) => o.key).sort()).toEqual(["matmul|11x32x24", "matmul|16x32x24", "matmul|7x32x24"]);
    expect(lines.join("\n")).toMatch(/no uKernel plan for matmul\|512x32x24 over 1\.\.512: .*the fake gateway plans nothing/);
    expect(model.stats().notes).toEqual(["1 MatMul whose rows change runs a kernel per length: the gateway served no uKernel plan for it"]);
    expect(gateway.received.filter((f) => f.frame.case === "planRequest")).toHaveLength(1);
    await model.close();
  });

  it("never waits for the uKernel plan: new lengths run the generic kernel, with no op of their own, until it comes", async () => {
    gateway = await planningGateway({ holdPlans: true });
    const model = await loadModel(matmulModel("rows", K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", dynamicRows: 64 });
    await runChecked(model, 16);
    for (const m of [11, 29, 11]) {
      await runChecked(model, m);
      expect([model.stats().dynamicSteps, model.stats().interimSteps], `${m} rows`).toEqual([0, 1]);
    }
    await vi.waitFor(() => expect(gateway!.received.filter((f) => f.frame.case === "planRequest")).toHaveLength(1));
    expect(model.stats().settled).toBe(false); // a uKernel plan asked for still has uKernels to tune
    expect(model.stats().ops.map((o) => o.key)).toEqual(["matmul|16x32x24"]);
    gateway.releasePlans();
    // the plans compiled meanwhile are compiled again at their next run, on the uKernels
    await vi.waitFor(async () => {
      await runChecked(model, 11);
      expect([model.stats().dynamicSteps, model.stats().interimSteps]).toEqual([1, 0]);
    }, { timeout: 10_000 });
    await runChecked(model, 29);
    expect([model.stats().dynamicSteps, model.stats().interimSteps]).toEqual([1, 0]);
    expect(model.stats().ops.map((o) => o.key).sort()).toEqual(["matmul|16x32x24", "matmul|4x32x24", "matmul|8x32x24"]);
    expect(gateway.received.filter((f) => f.frame.case === "planRequest")).toHaveLength(1);
    await model.close();
  });

  it("closes without waiting for a uKernel plan the gateway never answers", async () => {
    gateway = await planningGateway({ holdPlans: true });
    const lines: string[] = [];
    const model = await loadModel(matmulModel("rows", K, N), { gateway: gateway.url, threads: 1, fingerprint: "test-device", log: (l) => lines.push(l) });
    for (const m of [16, 11]) await runChecked(model, m);
    await vi.waitFor(() => expect(gateway!.received.filter((f) => f.frame.case === "planRequest")).toHaveLength(1));
    await model.close();
    expect(lines.join("\n")).toMatch(/uKernel plans not served \(no longer asked for\)/);
  });
});
