import { describe, expect, it } from "vitest";
import { batchSize, clockInfo, MIN_TICKS, SLICE_MS, timeBatch } from "../src/clock.js";
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

  it("times a call faster than its batch was sized for in a bigger batch, never as 0, and keeps the size", () => {
    // a 5 µs call on a 100 µs clock, its batch sized for 100 µs a call (20 calls: 0.1 ms, one tick or none)
    let t = 0;
    const coarse = () => Math.floor(t / 0.1) * 0.1;
    const call = () => { t += 0.005; };
    const batch = { calls: batchSize(0.1, 0.5, 0.1) };
    const ms = timeBatch(call, batch, 0.1, coarse);
    expect(ms).toBeGreaterThan(0.005 * 0.9);
    expect(ms).toBeLessThan(0.005 * 1.1);
    expect(batch.calls * 0.005).toBeGreaterThanOrEqual(MIN_TICKS * 0.1); // 20 ticks at least
    const size = batch.calls;
    timeBatch(call, batch, 0.1, coarse);
    expect(batch.calls).toBe(size); // the next batch starts at the size found
    // on a 1 ms clock, a 0.5 ms call is not repeated beyond a slice to reach 20 ticks
    t = 0;
    const slow = { calls: 1 };
    expect(timeBatch(() => { t += 0.5; }, slow, 1, () => Math.floor(t))).toBe(0.5);
    expect(slow.calls).toBe(8);
    expect(slow.calls * 0.5).toBeLessThanOrEqual(SLICE_MS);
  });
});
