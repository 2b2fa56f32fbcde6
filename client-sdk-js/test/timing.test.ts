import { describe, expect, it } from "vitest";
import { median, time } from "../src/timing.js";

describe("timing", () => {
  it("takes the median", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
  });

  it("warms up, then repeats calls to fill each sample", () => {
    let calls = 0;
    const t = time(() => { calls++; }, { warmups: 2, warmupMs: 0, samples: 5, sampleMs: 1 });
    expect(t.samples).toBe(5);
    expect(t.repetitions).toBeGreaterThanOrEqual(1);
    expect(calls).toBe(2 + 5 * t.repetitions);
    expect(t.medianMs).toBeGreaterThanOrEqual(0);
  });

  it("keeps warming up for warmupMs", () => {
    let calls = 0;
    const start = performance.now();
    time(() => { calls++; }, { warmups: 1, warmupMs: 10, samples: 1, sampleMs: 0 });
    expect(performance.now() - start).toBeGreaterThanOrEqual(10);
    expect(calls).toBeGreaterThan(2);
  });

  it("measures a slow call at about its duration", () => {
    const busy = () => { const end = performance.now() + 2; while (performance.now() < end); };
    const t = time(busy, { warmups: 1, warmupMs: 0, samples: 3, sampleMs: 1 });
    expect(t.repetitions).toBe(1);
    expect(t.medianMs).toBeGreaterThanOrEqual(2);
    expect(t.medianMs).toBeLessThan(20);
  });
});
