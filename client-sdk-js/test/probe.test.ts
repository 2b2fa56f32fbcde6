import { describe, expect, it } from "vitest";
import { fingerprintOf, probeDevice, probeFeatures } from "../src/probe.js";

describe("probe", () => {
  it("finds SIMD in this engine and derives a stable 32-hex fingerprint", async () => {
    const features = probeFeatures();
    expect(features.simd).toBe(true);
    expect(features.logicalCores).toBeGreaterThan(0);
    const fp = await fingerprintOf(features);
    expect(fp).toMatch(/^[0-9a-f]{32}$/);
    expect(await fingerprintOf(probeFeatures())).toBe(fp);
  });

  it("lets a caller override the fingerprint", async () => {
    expect((await probeDevice("fleet-a")).fingerprint).toBe("fleet-a");
  });
});
