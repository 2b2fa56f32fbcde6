import type { SocketConstructor } from "./client.js";
import type { ThreadHandle } from "./threads/pool.js";

/**
 * What the SDK needs from its host that browsers and Node give differently. A browser has it all
 * built in (WebSocket, navigator.hardwareConcurrency), so the package root needs nothing here and
 * pulls no Node module into a bundle; the Node entry (node.ts, the package's `node` condition)
 * installs Node's.
 */
export interface Platform {
  /** The WebSocket constructor, where the host has no global one (Node 20: the `ws` package). */
  webSocket?: () => SocketConstructor;
  /** Logical cores, where the host has no navigator.hardwareConcurrency. */
  logicalCores?: () => number;
  /** The engine, where there is no user agent: e.g. `node/v20.19.2 linux-x64`. */
  engine?: () => { userAgent: string; arch: string };
  /** WebGPU, where the host has no `navigator.gpu` (Node: Dawn's `webgpu` package, `create([...])`). */
  gpu?: () => GPU | undefined;
  /** A kernel thread of a worker pool, where the host has no module `Worker` (Node: worker_threads). */
  thread?: () => ThreadHandle;
}

let installed: Platform = {};

/** Installs what a host provides (the Node entry does this once, on import). */
export function usePlatform(platform: Platform): void {
  installed = { ...installed, ...platform };
}

/** What the host provides beyond a browser's built-ins. */
export function platform(): Platform {
  return installed;
}
