// WebGPU in Node for the tests: Dawn (npm `webgpu`) on SwiftShader, a software Vulkan GPU that
// ships with Debian's Chromium (`apt-get install chromium libvulkan1`). The tests that need it skip
// where it is missing, unless VK_ICD_FILENAMES is set (./jitzoo test sets it): then it must work.
import { existsSync } from "node:fs";
import { create, globals } from "webgpu";
import { usePlatform } from "../../src/platform.js";

const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

/** Whether WebGPU can run here. */
export const noWebGpu = !process.env.VK_ICD_FILENAMES && !existsSync(SWIFTSHADER_ICD);

let gpu: GPU | undefined;

/** Installs Dawn on SwiftShader as the SDK's WebGPU (once per test file) and returns it. */
export function useSwiftShader(): GPU {
  if (!gpu) {
    Object.assign(globalThis, globals);
    process.env.VK_ICD_FILENAMES ??= SWIFTSHADER_ICD;
    // one instance for the whole file: Dawn tears devices down when its GPU object is collected
    gpu = create(["backend=vulkan"]) as GPU;
    usePlatform({ gpu: () => gpu });
  }
  return gpu;
}
