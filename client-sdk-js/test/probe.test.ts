import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { engineOf, fingerprintOf, probeDevice, probeFeatures, simdRegistersOf } from "../src/probe.js";

describe("probe", () => {
  it("finds SIMD and the cores of this machine", async () => {
    const features = await probeFeatures();
    expect(features.simd).toBe(true); // on by default since Node 16
    expect(features.threads).toBe(true);
    expect(features.logicalCores).toBe(availableParallelism());
    expect(features.userAgent).toBe(`node/${process.version} ${process.platform}-${process.arch}`);
    expect(features.engine).toBe(`node ${process.versions.node.split(".")[0]}`);
  });

  it("names the engine and its major version, not the rest of the user agent", () => {
    const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.7391.2 Safari/537.36";
    expect(engineOf(chrome)).toBe("chromium 156");
    expect(engineOf(chrome.replace("X11; Linux x86_64", "Windows NT 10.0; Win64; x64").replace("156.0.7391.2", "156.0.7400.9")))
      .toBe("chromium 156");
    expect(engineOf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"))
      .toBe("chromium 156");
    expect(engineOf(chrome + " Edg/155.0.1")).toBe("chromium 156");
    expect(engineOf("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")).toBe("firefox 133");
    expect(engineOf("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"))
      .toBe("safari 18");
    expect(engineOf("node/v20.19.2 linux-x64")).toBe("node 20");
    expect(engineOf("curl/8")).toBe("unknown");
  });

  it("gives two devices of one kind one fingerprint, whatever else their user agents say", async () => {
    const features = await probeFeatures();
    const as = (userAgent: string) => ({ ...features, userAgent, engine: engineOf(userAgent) });
    const a = as("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/156.0.1.2 Safari/537.36");
    const b = as("Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.9.9 Safari/537.36");
    expect(await fingerprintOf(a)).toBe(await fingerprintOf(b));
    expect(await fingerprintOf({ ...features, engine: "chromium 157" })).not.toBe(await fingerprintOf({ ...features, engine: "chromium 156" }));
    expect(await fingerprintOf({ ...features, simdRegisters: 32 })).not.toBe(await fingerprintOf({ ...features, simdRegisters: 16 }));
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
    expect(device.userAgent).toBe(`node ${process.versions.node.split(".")[0]}`); // the engine, not the user agent
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
