import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { fingerprintOf, probeDevice, probeFeatures, simdRegistersOf } from "../src/probe.js";

describe("probe", () => {
  it("finds SIMD and the cores of this machine", async () => {
    const features = await probeFeatures();
    expect(features.simd).toBe(true); // on by default since Node 16
    expect(features.threads).toBe(true);
    expect(features.logicalCores).toBe(availableParallelism());
    expect(features.userAgent).toBe(`node/${process.version} ${process.platform}-${process.arch}`);
  });

  it("derives a stable 32-hex fingerprint that changes with the features", async () => {
    const features = await probeFeatures();
    const fp = await fingerprintOf(features);
    expect(fp).toMatch(/^[0-9a-f]{32}$/);
    expect(await fingerprintOf(await probeFeatures())).toBe(fp);
    expect(await fingerprintOf({ ...features, logicalCores: features.logicalCores + 1 })).not.toBe(fp);
  });

  it("builds the Hello's device profile, with an optional fingerprint override", async () => {
    const device = await probeDevice();
    expect(device.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(device.wasm?.simd).toBe(true);
    expect(device.primitiveVector).toBe("");
    expect(device.wasm?.simdRegisters).toBe(simdRegistersOf(process.arch));
    expect((await probeDevice("fleet-a")).fingerprint).toBe("fleet-a");
  });

  it("counts 32 SIMD registers on arm64 and 16 elsewhere", () => {
    expect(simdRegistersOf("arm64")).toBe(32);
    expect(simdRegistersOf("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36")).toBe(32);
    expect(simdRegistersOf("x64")).toBe(16);
    expect(simdRegistersOf("Mozilla/5.0 (Windows NT 10.0; Win64; x64)")).toBe(16);
    expect(simdRegistersOf("")).toBe(16);
  });
});
