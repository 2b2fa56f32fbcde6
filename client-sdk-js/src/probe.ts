import { create } from "@bufbuild/protobuf";
import { DeviceProfileSchema, type DeviceProfile } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { primitiveVector, type MicrobenchSummary } from "./microbench.js";
import { platform } from "./platform.js";
import { adapterMessage, gpuFingerprintOf, type GpuAdapterProfile } from "./webgpu/adapter.js";

// The smallest modules that use one feature each: WebAssembly.validate tells whether the engine has it.
const WASM_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const V128_ZERO = [0xfd, 0x0c, ...new Array<number>(16).fill(0x00)];
// One function type () -> v128, one function of that type.
const V128_FUNC_HEADER = [0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00];

/** (func (result v128) v128.const 0) */
const SIMD_PROBE = new Uint8Array([...WASM_HEADER, ...V128_FUNC_HEADER, 0x0a, 0x16, 0x01, 0x14, 0x00, ...V128_ZERO, 0x0b]);

/** (func (result v128) v128.const 0 v128.const 0 v128.const 0 f32x4.relaxed_madd) */
const RELAXED_SIMD_PROBE = new Uint8Array([
  ...WASM_HEADER, ...V128_FUNC_HEADER, 0x0a, 0x3d, 0x01, 0x3b, 0x00,
  ...V128_ZERO, ...V128_ZERO, ...V128_ZERO, 0xfd, 0x85, 0x02, 0x0b,
]);

/** (memory 1 1 shared) */
const THREADS_PROBE = new Uint8Array([...WASM_HEADER, 0x05, 0x04, 0x01, 0x03, 0x01, 0x01]);

/** What the probe learned about the engine and the machine. */
export interface DeviceFeatures {
  /** Wasm SIMD128. */
  simd: boolean;
  /** Wasm relaxed SIMD (`f32x4.relaxed_madd` and friends). */
  relaxedSimd: boolean;
  /** Wasm threads (shared memories and atomics). */
  threads: boolean;
  /** Logical cores the page or process may use. */
  logicalCores: number;
  /** The browser's user agent, or `node/<version> <platform>-<arch>` in Node; stays on the device. */
  userAgent: string;
  /** The engine and its major version, from the user agent: `chromium 156`, `firefox 133`, `safari 18`, `node 20`. */
  engine: string;
  /** SIMD registers the engine can allocate: 32 on arm64, 16 on x86-64 (and when unsure). */
  simdRegisters: number;
}

/**
 * arm64 has 32 SIMD registers, x86-64 16. Node's process.arch tells; in a browser, a user agent that
 * names an ARM CPU or a phone or tablet OS (all ARM in practice). Desktop user agents are frozen
 * (an ARM Mac says "Intel"): those count 16, the safe side.
 */
export function simdRegistersOf(arch: string): number {
  return /\b(arm64|aarch64|armv8|arm|Android|iPhone|iPad)\b/i.test(arch) ? 32 : 16;
}

interface NavigatorLike {
  hardwareConcurrency?: number;
  userAgent?: string;
}

/** Detects Wasm features, the core count and the user agent, in a browser or in Node. */
export async function probeFeatures(): Promise<DeviceFeatures> {
  const nav = (globalThis as { navigator?: NavigatorLike }).navigator;
  const host = platform();
  // Node 21+ has a navigator too; its user agent ("Node.js/21") says less than the engine the Node entry reports.
  const engine = host.engine?.();
  const cores = nav?.hardwareConcurrency ?? host.logicalCores?.() ?? 1;
  const has = (probe: Uint8Array<ArrayBuffer>) => typeof WebAssembly === "object" && WebAssembly.validate(probe);
  return {
    simd: has(SIMD_PROBE),
    relaxedSimd: has(RELAXED_SIMD_PROBE),
    threads: has(THREADS_PROBE),
    logicalCores: Math.max(1, cores),
    userAgent: engine?.userAgent ?? nav?.userAgent ?? "unknown",
    engine: engineOf(engine?.userAgent ?? nav?.userAgent ?? ""),
    simdRegisters: simdRegistersOf(engine?.arch ?? nav?.userAgent ?? ""),
  };
}

/**
 * The engine family and major version a user agent names, what decides how Wasm is compiled: Chrome,
 * Edge and other Chromium browsers share V8 and count as `chromium N`; then `firefox N`, `safari N`
 * (its Version/N), `node N`; anything else `unknown`.
 */
export function engineOf(userAgent: string): string {
  const patterns: [RegExp, string][] = [
    [/\bFirefox\/(\d+)/, "firefox"], [/\b(?:Chrome|Chromium|HeadlessChrome|Edg)\/(\d+)/, "chromium"],
    [/\bVersion\/(\d+)[^ ]* .*Safari\//, "safari"], [/^node\/v(\d+)/, "node"],
  ];
  for (const [pattern, name] of patterns) {
    const major = pattern.exec(userAgent)?.[1];
    if (major) return `${name} ${major}`;
  }
  return "unknown";
}

/**
 * The id of a device kind: the first 32 hex digits of SHA-256 (WebCrypto) over what decides which
 * kernel is fastest, and nothing else: SIMD, relaxed SIMD, threads, logical cores, the SIMD
 * register budget, and the engine with its major version. Every device with the same hardware
 * class and engine shares one id. Left out on purpose: the full user agent (OS and its version,
 * minor browser versions, device model), screen, locale, time zone, and anything else that would
 * tell users apart rather than device kinds.
 */
export async function fingerprintOf(features: DeviceFeatures, threadsUsed = 1): Promise<string> {
  const parts: unknown[] = [features.simd, features.relaxedSimd, features.threads, features.logicalCores,
    features.simdRegisters, features.engine];
  // kernels split for T threads are another device kind's (the zoo keeps them apart); one thread keeps the old ids
  if (threadsUsed > 1) parts.push({ threadsUsed });
  const text = JSON.stringify(parts);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32);
}

/**
 * Probes the device and builds the profile sent in Hello. `fingerprint` overrides the derived
 * one (tests, or fleets that name their device kinds themselves); a microbenchmark of this device,
 * when there is one, gives its primitive vector. With a WebGPU adapter's profile (a WGSL session),
 * the profile carries it and the derived fingerprint is the GPU's device kind. `threadsUsed`: the
 * threads the session's Wasm kernels run on (split for them above 1, a device kind of its own).
 */
export async function probeDevice(fingerprint?: string, microbench?: MicrobenchSummary, gpu?: GpuAdapterProfile,
  threadsUsed = 1): Promise<DeviceProfile> {
  const features = await probeFeatures();
  return create(DeviceProfileSchema, {
    fingerprint: fingerprint ?? (gpu ? await gpuFingerprintOf(features.engine, gpu) : await fingerprintOf(features, threadsUsed)),
    webgpu: gpu ? adapterMessage(gpu) : undefined,
    primitiveVector: primitiveVector(microbench),
    // the L1 size stays 0 (unknown): the space service then assumes a safe 32 KiB
    wasm: {
      simd: features.simd, relaxedSimd: features.relaxedSimd, threads: features.threads, simdRegisters: features.simdRegisters,
      threadsUsed: threadsUsed > 1 ? threadsUsed : 0,
    },
    // the engine, not the full user agent: what the server needs, and no more
    userAgent: features.engine,
    logicalCores: features.logicalCores,
  });
}
