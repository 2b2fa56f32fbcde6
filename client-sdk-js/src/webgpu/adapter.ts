import type { MessageInitShape } from "@bufbuild/protobuf";
import type { WebGpuAdapterSchema } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { platform } from "../platform.js";

// What WebGPU tells about the GPU: the adapter's info, limits, features and subgroup sizes, as the
// Hello's DeviceProfile.webgpu carries them, and the device kind (fingerprint) of a WGSL session.

/** The features that decide how kernels run or are timed (the others are left out of the profile). */
export const PROBED_FEATURES = ["shader-f16", "subgroups", "timestamp-query"] as const;

/** The limits a WGSL kernel is made for (DeviceProfile.webgpu.limits), named as in GPUSupportedLimits. */
export const KERNEL_LIMITS = [
  "maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupStorageSize", "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY", "maxComputeWorkgroupsPerDimension", "maxStorageBufferBindingSize",
] as const;

export type KernelLimits = Record<(typeof KERNEL_LIMITS)[number], number>;

/** What the probe learned about a WebGPU adapter. */
export interface GpuAdapterProfile {
  /** GPUAdapterInfo.vendor and .architecture ("nvidia" / "ampere"); empty where the browser hides them. */
  vendor: string;
  architecture: string;
  /** GPUAdapterInfo.description where given (stays on the device: never sent). */
  description: string;
  /** The probed features it has, sorted: a subset of {@link PROBED_FEATURES}. */
  features: string[];
  limits: KernelLimits;
  /** GPUAdapterInfo.subgroupMinSize / subgroupMaxSize; 0 where not exposed. */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  /** A software adapter (SwiftShader, a fallback adapter): right answers, CPU speed. */
  software: boolean;
}

/** The host's WebGPU: `navigator.gpu` in browsers (and their workers), else what the platform installed. */
export function gpuOf(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  return nav?.gpu ?? platform().gpu?.();
}

/** The adapter jitzoo runs on: high-performance where there is a choice; undefined where there is none. */
export async function requestAdapter(gpu: GPU | undefined = gpuOf()): Promise<GPUAdapter | undefined> {
  if (!gpu) return undefined;
  try {
    return (await gpu.requestAdapter({ powerPreference: "high-performance" })) ?? undefined;
  } catch {
    return undefined; // a browser that blocks WebGPU (policy, blocklisted driver) has none to give
  }
}

/** The profile of an adapter. */
export function profileOf(adapter: GPUAdapter): GpuAdapterProfile {
  // GPUAdapter.info (Chrome 114+, Dawn) is newer than these typings
  const info = ((adapter as { info?: GPUAdapterInfo }).info ?? {}) as Partial<GPUAdapterInfo> & { subgroupMinSize?: number; subgroupMaxSize?: number; isFallbackAdapter?: boolean };
  const limits = Object.fromEntries(KERNEL_LIMITS.map((name) => [name, Number(adapter.limits[name])])) as KernelLimits;
  const vendor = (info.vendor ?? "").toLowerCase(), architecture = (info.architecture ?? "").toLowerCase();
  return {
    vendor, architecture, description: info.description ?? "",
    features: PROBED_FEATURES.filter((f) => adapter.features.has(f)),
    limits,
    subgroupMinSize: info.subgroupMinSize ?? 0,
    subgroupMaxSize: info.subgroupMaxSize ?? 0,
    software: Boolean(info.isFallbackAdapter) || /swiftshader|llvmpipe|lavapipe|software/i.test(`${vendor} ${architecture} ${info.description ?? ""}`),
  };
}

/** Probes the host's WebGPU adapter; undefined where there is none. */
export async function probeWebGpu(gpu: GPU | undefined = gpuOf()): Promise<GpuAdapterProfile | undefined> {
  const adapter = await requestAdapter(gpu);
  return adapter ? profileOf(adapter) : undefined;
}

/** The profile as the Hello carries it (DeviceProfile.webgpu). */
export function adapterMessage(p: GpuAdapterProfile): MessageInitShape<typeof WebGpuAdapterSchema> {
  return {
    vendor: p.vendor, architecture: p.architecture, features: [...p.features],
    subgroupMinSize: p.subgroupMinSize, subgroupMaxSize: p.subgroupMaxSize,
    limits: {
      maxComputeInvocationsPerWorkgroup: p.limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupStorageSize: p.limits.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupSizeX: p.limits.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupSizeY: p.limits.maxComputeWorkgroupSizeY,
      maxComputeWorkgroupsPerDimension: p.limits.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: BigInt(p.limits.maxStorageBufferBindingSize),
    },
  };
}

/**
 * The device kind of a WGSL session: the first 32 hex digits of SHA-256 over what decides which
 * WGSL kernel is fastest: the adapter's vendor and architecture, its kernel limits, probed
 * features and subgroup sizes, and the engine (Dawn's version comes with the browser's). Not the
 * description (it names the exact GPU model and driver), nothing about the user.
 */
export async function gpuFingerprintOf(engine: string, p: GpuAdapterProfile): Promise<string> {
  const text = JSON.stringify(["webgpu", engine, p.vendor, p.architecture, p.features, KERNEL_LIMITS.map((n) => p.limits[n]),
    p.subgroupMinSize, p.subgroupMaxSize, p.software]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32);
}
