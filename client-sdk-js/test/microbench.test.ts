import { describe, expect, it } from "vitest";
import { measurePeakGflops, primitiveVector, runMicrobench } from "../src/microbench.js";
import { peakLoop } from "../src/peak.js";
import { probeDevice } from "../src/probe.js";
import { naiveMatmulArtifact } from "./support/wasm.js";

describe("runMicrobench", () => {
  const shape: [number, number, number] = [8, 16, 12];
  const right = (id: string) => naiveMatmulArtifact(id, shape);

  it("checks each pair against the reference and reports off / on for every primitive", async () => {
    const rounds: number[] = [];
    const results = await runMicrobench(
      [
        { primitive: "unroll", off: right("a"), on: right("b") },
        { primitive: "passes", off: right("c"), on: right("d") },
      ],
      { rounds: 3, sampleMs: 1, onProgress: (r) => rounds.push(r) },
    );
    expect(results.map((r) => r.primitive)).toEqual(["unroll", "passes"]);
    for (const r of results) {
      expect(r.offMs).toBeGreaterThan(0);
      expect(r.onMs).toBeGreaterThan(0);
      expect(r.speedup).toBeCloseTo(r.offMs / r.onMs, 12);
    }
    expect(rounds).toEqual([1, 2, 3]);
  });

  it("refuses a wrong kernel, naming its primitive and setting, before timing anything", async () => {
    const wrong = naiveMatmulArtifact("w", shape, 2); // C = 2·A·B
    await expect(runMicrobench([{ primitive: "cache_read", off: right("a"), on: wrong }])).rejects.toThrow(
      /^cache_read on: max relative error/,
    );
  });

  it("refuses an empty suite and pairs of another shape", async () => {
    await expect(runMicrobench([])).rejects.toThrow("no primitive pairs");
    await expect(
      runMicrobench([{ primitive: "unroll", off: right("a"), on: naiveMatmulArtifact("x", [4, 16, 12]) }]),
    ).rejects.toThrow(/^unroll on: kernel shape \[4,16,12\] does not match/);
  });
});

describe("primitiveVector (the paper's rho)", () => {
  it("has one character per primitive in the protocol's order: helps, does not, not measured", () => {
    // vectorize, unroll, loop_order, relaxed_simd, cache_read, passes
    expect(primitiveVector({ engine: "node 20", speedups: { vectorize: 3.2, unroll: 1.01, cache_read: 0.9, passes: 1.05 } }))
      .toBe("10--01");
    expect(primitiveVector(undefined)).toBe("");
  });

  it("refuses a primitive the protocol does not know, and fills the probe's profile", async () => {
    expect(() => primitiveVector({ engine: "node 20", speedups: { warp_drive: 2 } })).toThrow(/unknown primitive "warp_drive"/);
    const device = await probeDevice("rho-kind", { engine: "node 20", speedups: { vectorize: 2 } });
    expect(device.primitiveVector).toBe("1-----");
    expect((await probeDevice("rho-kind")).primitiveVector).toBe("");
  });
});

describe("measurePeakGflops", () => {
  it("runs both multiply-add loops this engine has and reports the faster in GFLOP/s", () => {
    const madd = peakLoop(false, 1000)!;
    expect(madd.flops).toBe(1000 * 12 * 4 * 2); // twelve chains of four lanes, a multiply and an add each
    madd.call();
    const peak = measurePeakGflops({ sampleMs: 2 });
    // any CPU that runs Wasm SIMD does more than 0.1 GFLOP/s on one thread, and none reaches the zoo's ceiling
    expect(peak).toBeGreaterThan(0.1);
    expect(peak).toBeLessThan(1000);
  });
});
