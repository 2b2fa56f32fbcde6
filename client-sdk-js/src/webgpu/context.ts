import { gpuOf, profileOf, requestAdapter, KERNEL_LIMITS, type GpuAdapterProfile } from "./adapter.js";

/** A WGSL compile error, a pipeline WebGPU refused, or a device that could not be had. */
export class GpuError extends Error {
  override name = "GpuError";
}

/** How long a failed map or submit waits for the device's `lost` before it counts as another error. */
const LOSS_GRACE_MS = 250;

/**
 * The GPU device jitzoo runs on and the compute pipelines built for it, surviving the device's
 * loss: when a device is lost (a driver reset, a GPU taken back, `device.destroy()`), a new one
 * is requested, every pipeline built so far is built again from its kept WGSL source, and each
 * listener ({@link onRestore}) rebuilds what it had on the old device (buffers, bind groups).
 * Callers that failed on the lost device wait for that ({@link recovered}) and go on.
 */
export class GpuContext {
  /** The current device; replaced after a loss. */
  device!: GPUDevice;
  profile!: GpuAdapterProfile;
  /** Whether timestamp queries are enabled on the device (the adapter has `timestamp-query`). */
  timestamps = false;
  /** WebGPU errors no error scope caught (their messages). */
  readonly uncaptured: string[] = [];
  /** Devices lost and recovered from, with why. */
  readonly losses: { reason: string; message: string; atMs: number }[] = [];
  readonly pipelines = new PipelineCache(this);
  /** Why the last loss could not be recovered from (no new device, a pipeline that would not build again). */
  failed?: string;
  private readonly listeners = new Set<() => void | Promise<void>>();
  private restoring?: Promise<void>;
  private closed = false;

  private constructor(private readonly gpu: GPU, private readonly log: (line: string) => void) {}

  /** Requests a device on the host's adapter; throws a GpuError where there is none. */
  static async open(options: { gpu?: GPU; log?: (line: string) => void } = {}): Promise<GpuContext> {
    const gpu = options.gpu ?? gpuOf();
    if (!gpu) throw new GpuError("no WebGPU here (navigator.gpu is missing)");
    const context = new GpuContext(gpu, options.log ?? (() => undefined));
    await context.acquire();
    return context;
  }

  private async acquire(): Promise<void> {
    const adapter = await requestAdapter(this.gpu);
    if (!adapter) throw new GpuError("WebGPU gave no adapter");
    this.profile = profileOf(adapter);
    this.timestamps = adapter.features.has("timestamp-query");
    // the limits the profile reported, so kernels made for them run here (a device has WebGPU's defaults unless asked)
    const requiredLimits = Object.fromEntries(KERNEL_LIMITS.map((name) => [name, adapter.limits[name]]));
    const device = await adapter.requestDevice({ requiredFeatures: this.timestamps ? ["timestamp-query"] : [], requiredLimits });
    device.lost.then((info) => this.lost(device, info));
    // an error no scope caught (a dispatch of a plan WebGPU rejected): logged and counted, never silent
    device.onuncapturederror = (ev: GPUUncapturedErrorEvent) => {
      this.uncaptured.push(ev.error.message);
      this.log(`WebGPU error: ${ev.error.message}`);
    };
    this.device = device;
  }

  /** Called after each loss, once the new device is there and the pipelines are built again. */
  onRestore(listener: () => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Whether `device` was lost, waiting a little for its `lost` to settle, and if so until the
   * new device is ready: what a caller whose submit or map failed asks before trying again.
   */
  async recovered(device: GPUDevice): Promise<boolean> {
    const lost = await Promise.race([device.lost.then(() => true), delay(LOSS_GRACE_MS).then(() => false)]);
    if (!lost) return false;
    await this.ready();
    return !this.failed && this.device !== device;
  }

  /** Resolves once no recovery is under way (whether it succeeded: see {@link failed}). */
  async ready(): Promise<void> {
    while (this.restoring) await this.restoring;
  }

  private lost(device: GPUDevice, info: GPUDeviceLostInfo): void {
    if (this.closed || device !== this.device) return;
    this.losses.push({ reason: info.reason, message: info.message, atMs: performance.now() });
    this.log(`WebGPU device lost (${info.reason}: ${info.message}); requesting a new one`);
    // one recovery at a time: a loss during a recovery (of the new device) recovers after it
    const restoring: Promise<void> = (this.restoring ?? Promise.resolve()).then(async () => {
      try {
        await this.acquire();
        await this.pipelines.rebuild();
        for (const listener of this.listeners) await listener();
        this.failed = undefined;
        this.log("WebGPU device restored: pipelines rebuilt from their kept sources");
      } catch (e) {
        this.failed = (e as Error).message;
        this.log(`WebGPU device not restored: ${this.failed}`);
      } finally {
        if (this.restoring === restoring) this.restoring = undefined;
      }
    });
    this.restoring = restoring;
  }

  /** Releases the device; a closed context does not recover. */
  close(): void {
    this.closed = true;
    this.device?.destroy();
  }
}

/** A pipeline cache entry: the kept WGSL source, and the pipeline built from it on the current device. */
interface PipelineEntry {
  readonly source: string;
  readonly entryPoint: string;
  build: Promise<GPUComputePipeline>;
  pipeline?: GPUComputePipeline;
}

/**
 * Compute pipelines by kernel id, built with `createComputePipelineAsync` (never on the calling
 * path: a build is started, and its user waits for it only where it has nothing else to run),
 * each from a WGSL source kept for rebuilding after a device loss. The browser's own shader
 * cache makes a rebuild of a source it saw before (another page load) cheap.
 */
export class PipelineCache {
  private readonly entries = new Map<string, PipelineEntry>();
  /** Pipelines built, and the time from asking to having them (ms, summed). */
  built = 0;
  buildMs = 0;
  /** Set while a run infers (and waits for what it needs): builds started then are on its critical path. */
  onCriticalPath = false;
  /** Builds started on a run's critical path. */
  builtOnCriticalPath = 0;

  constructor(private readonly context: GpuContext) {}

  /** Starts building a kernel's pipeline (once per id); resolves to it, or rejects with the compiler's messages. */
  prepare(id: string, source: string, entryPoint = "main"): Promise<GPUComputePipeline> {
    const known = this.entries.get(id);
    if (known) return known.build;
    if (this.onCriticalPath) this.builtOnCriticalPath++;
    const entry: PipelineEntry = { source, entryPoint, build: Promise.resolve(undefined as never) };
    entry.build = this.build(id, entry);
    this.entries.set(id, entry);
    entry.build.catch(() => this.entries.delete(id)); // a failed build is not kept: asking again retries
    return entry.build;
  }

  /** The pipeline of a kernel, if built on the current device. */
  get(id: string): GPUComputePipeline | undefined {
    return this.entries.get(id)?.pipeline;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** Drops a kernel's pipeline (a refused or replaced candidate). */
  forget(id: string): void {
    this.entries.delete(id);
  }

  /** Builds every kept source again on the current device (after a loss). */
  async rebuild(): Promise<void> {
    const all = [...this.entries];
    for (const [id, entry] of all) {
      entry.pipeline = undefined;
      entry.build = this.build(id, entry);
    }
    const built = await Promise.allSettled(all.map(([, e]) => e.build));
    // one that no longer builds is dropped (asking for it again retries); a kernel in use that fails is the caller's failure
    built.forEach((b, i) => { if (b.status === "rejected") this.entries.delete(all[i][0]); });
    const failed = built.find((b): b is PromiseRejectedResult => b.status === "rejected");
    if (failed) throw failed.reason;
  }

  private async build(id: string, entry: PipelineEntry): Promise<GPUComputePipeline> {
    const device = this.context.device;
    const start = performance.now();
    const module = device.createShaderModule({ code: entry.source, label: id });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === "error");
    if (errors.length) {
      throw new GpuError(`kernel ${id} does not compile: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join("; ")}`);
    }
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: entry.entryPoint }, label: id });
    } catch (e) {
      throw new GpuError(`WebGPU refused the pipeline of ${id}: ${(e as Error).message}`);
    }
    this.built++;
    this.buildMs += performance.now() - start;
    if (device === this.context.device) entry.pipeline = pipeline;
    return pipeline;
  }
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
