import { describe, expect, it } from "vitest";
import { batchSize, clockInfo, MIN_TICKS, SLICE_MS } from "../src/clock.js";
import { time } from "../src/timing.js";

describe("clock", () => {
  it("measures Node's clock as fine, and Node as isolated", () => {
    const clock = clockInfo();
    expect(clock.name).toBe("performance.now");
    expect(clock.resolutionMs).toBeGreaterThan(0);
    expect(clock.resolutionMs).toBeLessThan(0.1);
    expect(clock.crossOriginIsolated).toBe(true);
  });

  it("sizes a batch to span enough ticks of a coarse browser clock", () => {
    // Chrome without cross-origin isolation: 100 µs ticks. A 20 µs call: 100 calls (2 ms, 20 ticks)
    expect(batchSize(0.02, 0.5, 0.1)).toBe(100);
    // a call that read as no time counts as a whole tick: 20 calls, at most 2 ms
    expect(batchSize(0, 0.5, 0.1)).toBe(MIN_TICKS);
    // a fine clock (Node, isolated pages): the target alone decides
    expect(batchSize(0.02, 0.5, 0.001)).toBe(25);
  });

  it("never sizes a batch longer than a slice, on any clock", () => {
    for (const resolution of [0.001, 0.005, 0.1, 1]) {
      for (const estimate of [0, 0.0001, 0.003, 0.05, 0.4, 2, 7.9, 30]) {
        const calls = batchSize(estimate, 5, resolution);
        const worstPerCall = estimate > 0 ? estimate : resolution;
        expect(calls).toBeGreaterThanOrEqual(1);
        expect(calls * worstPerCall).toBeLessThanOrEqual(Math.max(SLICE_MS, worstPerCall) + 1e-9);
      }
    }
    expect(batchSize(30, 5, 0.1)).toBe(1); // a call longer than a slice runs alone
  });

  it("times a short call in batches that stay within a slice", () => {
    let calls = 0;
    const work = () => { calls++; let x = 0; for (let i = 0; i < 200; i++) x += Math.sqrt(i); return x; };
    const timing = time(work, { samples: 5, sampleMs: 1 });
    expect(timing.medianMs).toBeGreaterThan(0);
    expect(timing.repetitions).toBeGreaterThan(1);
    expect(timing.repetitions * timing.medianMs).toBeLessThan(SLICE_MS * 2);
    expect(calls).toBeGreaterThan(timing.samples * timing.repetitions);
  });
});
