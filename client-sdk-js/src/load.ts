import type { DeviceProfile } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { externalLocations, graphOf, ModelError, parseModel, type ExternalFiles } from "./graph/onnx.js";
import { withoutInt8Kernels } from "./graph/lower.js";
import type { LoadOptions, Model } from "./model/model.js";
import { WorkerModel } from "./model/worker-model.js";
import { probeDevice } from "./probe.js";
import { probeThreads, WorkerPool } from "./threads/pool.js";
import { SHARED_MAX_PAGES } from "./wasm/arena.js";
import { WasmModel } from "./wasm/model.js";
import { GpuContext } from "./webgpu/context.js";
import { GpuModel } from "./webgpu/model.js";

// loadModel: an ONNX file in, a model out, on the backend this device runs best (WebGPU on a
// hardware adapter with a gateway, else Wasm on the kernel threads), in a worker on a page.

/** Whether this is a page's main thread that can start a module Worker. */
const inPage = () => typeof Worker !== "undefined" && typeof document !== "undefined";

/**
 * Loads an ONNX model (bytes, or a URL to fetch) and prepares it to run on jitzoo kernels.
 * @throws ModelError naming the node and op type when the model uses something unsupported
 */
export async function loadModel(source: Uint8Array | ArrayBuffer | string | URL, options: LoadOptions = {}): Promise<Model> {
  options.signal?.throwIfAborted();
  const worker = options.worker ?? inPage();
  if (worker) return WorkerModel.start(source, options, worker === true ? undefined : worker.url);
  const bytes = await bytesOf(source, options.signal);
  const proto = parseModel(bytes);
  const graph = graphOf(proto, await externalFiles(externalLocations(proto), source, options));
  options.log?.(`model ${graph.name || "(unnamed)"}: ${graph.nodes.length} nodes, opset ${graph.opset}, inputs ${graph.inputs.map((i) => i.name).join(", ")}`);
  const backend = await openBackend(options);
  if ("gpu" in backend) {
    options.log?.(`WebGPU: ${backend.gpu.profile.vendor || "?"} ${backend.gpu.profile.architecture || "?"}${backend.gpu.profile.software ? " (software)" : ""}`);
    return new GpuModel(withoutInt8Kernels(graph), options, backend.gpu, backend.device); // WebGPU has no int8 kernels: those products in float
  }
  if (typeof WebAssembly !== "object") {
    // nothing the gateway serves could run: the reference kernels, and no session
    return new WasmModel(graph, { ...options, gateway: undefined, backend: "wasm" },
      `WebAssembly is unavailable here: every op runs its reference kernel (correct, slow)${options.gateway ? "; the gateway is not asked" : ""}`);
  }
  const threads = await kernelThreads(options.threads, options.log);
  if (threads.pool) options.log?.(`kernels run on ${threads.pool.threads} threads`);
  return new WasmModel(graph, { ...options, backend: "wasm" }, [backend.why, threads.note].filter((n) => n).join("; ") || undefined,
    threads.pool);
}

/** Threads kernels run on unless the app says otherwise: a few cores speed a model up, all of them would starve the page. */
const DEFAULT_THREADS = 4;

/** A worker pool for `cap` threads (the probe's count, at most `cap`), or why kernels run on one. */
async function kernelThreads(cap = DEFAULT_THREADS, log?: (line: string) => void): Promise<{ pool?: WorkerPool; note?: string }> {
  if (!(Number.isInteger(cap) && cap >= 1)) throw new ModelError(`threads must be a whole number of at least 1, got ${cap}`);
  if (cap === 1) return {};
  const probe = probeThreads(cap);
  if (probe.threads === 1) return { note: probe.reason && `kernels run on one thread: ${probe.reason}` };
  try {
    new WebAssembly.Memory({ initial: 1, maximum: SHARED_MAX_PAGES, shared: true }); // the arena's reservation fits here
    return { pool: await WorkerPool.start({ threads: probe.threads, log }) };
  } catch (e) {
    return { note: `kernels run on one thread: the kernel threads did not start (${(e as Error).message})` };
  }
}

/** The external data files a model names: given in the options, else fetched from beside the model's URL. */
async function externalFiles(locations: readonly string[], source: Uint8Array | ArrayBuffer | string | URL, options: LoadOptions): Promise<ExternalFiles> {
  const files = new Map<string, Uint8Array>();
  for (const location of locations) {
    const given = options.externalData?.[location];
    if (given) {
      files.set(location, given instanceof Uint8Array ? given : new Uint8Array(given));
    } else if (typeof source === "string" || source instanceof URL) {
      const url = new URL(location, new URL(String(source), (globalThis as { location?: { href: string } }).location?.href));
      options.log?.(`fetching external data ${url}`);
      files.set(location, await bytesOf(url, options.signal));
    } else {
      throw new ModelError(`the model keeps tensors in ${location}: pass it in externalData (${locations.join(", ")})`);
    }
  }
  return files;
}

async function bytesOf(source: Uint8Array | ArrayBuffer | string | URL, signal?: AbortSignal): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  const response = await fetch(source, { signal });
  if (!response.ok) throw new ModelError(`cannot fetch ${String(source)}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * The backend a model loads on: `wasm`; `webgpu` (needs a gateway and an adapter: throws a
 * ModelError naming what is missing); `auto` (the default): WebGPU where a gateway is given and
 * the adapter is a hardware GPU, else Wasm (a software adapter is slower than Wasm SIMD). Returns
 * the GPU context and device profile for WebGPU, the reason for Wasm otherwise.
 */
export async function openBackend(options: LoadOptions): Promise<{ gpu: GpuContext; device: DeviceProfile } | { why?: string }> {
  const asked = options.backend ?? "auto";
  if (asked === "wasm") return {};
  if (!options.gateway) {
    if (asked === "webgpu") throw new ModelError("backend webgpu needs a gateway: WGSL kernels come from the suite");
    return {};
  }
  let gpu: GpuContext;
  try {
    gpu = await GpuContext.open({ log: options.log });
  } catch (e) {
    if (asked === "webgpu") throw new ModelError(`backend webgpu: ${(e as Error).message}`);
    return {}; // no WebGPU here: Wasm, as everywhere
  }
  if (asked === "auto" && gpu.profile.software) {
    gpu.close();
    return { why: "WebGPU's adapter is a software one: the model runs on Wasm, which is faster here" };
  }
  const device = await probeDevice(options.fingerprint, undefined, gpu.profile);
  return { gpu, device };
}
