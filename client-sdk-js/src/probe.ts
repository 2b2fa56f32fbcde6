import { create } from "@bufbuild/protobuf";
import { DeviceProfileSchema, type DeviceProfile } from "./gen/jitzoo/kernel/v1/kernel_pb.js";

// Smallest modules that use one feature each; WebAssembly.validate tells whether the engine has it.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03,
  0x02, 0x01, 0x00, 0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b,
]);
// (func (result v128) v128.const 0 v128.const 0 v128.const 0 f32x4.relaxed_madd)
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03,
  0x02, 0x01, 0x00, 0x0a, 0x3d, 0x01, 0x3b, 0x00,
  0xfd, 0x0c, ...new Array(16).fill(0x00),
  0xfd, 0x0c, ...new Array(16).fill(0x00),
  0xfd, 0x0c, ...new Array(16).fill(0x00),
  0xfd, 0x85, 0x02, 0x0b,
]);
// (memory 1 1 shared)
const THREADS_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x04, 0x01, 0x03, 0x01, 0x01,
]);

/** What the probe learned about the engine and machine. */
export interface DeviceFeatures {
  simd: boolean;
  relaxedSimd: boolean;
  threads: boolean;
  logicalCores: number;
  userAgent: string;
}

/** Detects Wasm features and the machine's core count, in a browser or in Node. */
export function probeFeatures(): DeviceFeatures {
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number; userAgent?: string } }).navigator;
  const proc = (globalThis as { process?: { version: string; platform: string; arch: string } }).process;
  return {
    simd: WebAssembly.validate(SIMD_PROBE),
    relaxedSimd: WebAssembly.validate(RELAXED_SIMD_PROBE),
    threads: WebAssembly.validate(THREADS_PROBE),
    logicalCores: nav?.hardwareConcurrency ?? 1,
    userAgent: nav?.userAgent ?? (proc ? `node/${proc.version} ${proc.platform}-${proc.arch}` : "unknown"),
  };
}

/** A stable id of the device kind: the first 32 hex digits of SHA-256 over its features. */
export async function fingerprintOf(features: DeviceFeatures): Promise<string> {
  const text = JSON.stringify([features.simd, features.relaxedSimd, features.threads, features.logicalCores, features.userAgent]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32);
}

/** The device profile sent in Hello. `fingerprint` overrides the derived one (tests, fleets). */
export async function probeDevice(fingerprint?: string): Promise<DeviceProfile> {
  const features = probeFeatures();
  return create(DeviceProfileSchema, {
    fingerprint: fingerprint ?? (await fingerprintOf(features)),
    primitiveVector: "",
    wasm: { simd: features.simd, relaxedSimd: features.relaxedSimd, threads: features.threads },
    userAgent: features.userAgent,
    logicalCores: features.logicalCores,
  });
}
