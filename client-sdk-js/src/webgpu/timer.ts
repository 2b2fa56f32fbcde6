import type { GpuContext } from "./context.js";

/** One dispatch ready to encode: a pipeline, its bind group, its grid. */
export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly grid: readonly [number, number, number];
}

/** A timed batch lasts at least this long (ms) of GPU time, and spans at least {@link MIN_QUANTA} quanta of the timestamps. */
const TARGET_MS = 1;
const MIN_QUANTA = 20;
/** Most dispatches in one timed batch. */
const MAX_REPS = 4096;
/** Passes of empty work whose timestamps measure the quantum. */
const QUANTUM_PROBES = 16;

/**
 * Times kernels on the GPU, a candidate beside the incumbent. With `timestamp-query`, each is a
 * compute pass of `reps` dispatches between two timestamps, both passes in one submit. Browsers
 * quantize timestamps (Chrome: to 100 µs unless the page is trusted), so the quantum is measured
 * (the greatest common step of the timestamps read) and every batch spans at least 20 of them:
 * a batch that read shorter is timed again with more dispatches. Without the feature, each batch
 * is its own submit, timed from the host to `onSubmittedWorkDone()` (submit overhead included, so
 * batches last at least a millisecond).
 */
export class GpuTimer {
  /** The timestamps' quantum, ns (0 until measured; 1 when they are not quantized). */
  quantumNs = 0;
  private querySet?: { device: GPUDevice; set: GPUQuerySet; resolve: GPUBuffer; read: GPUBuffer };

  constructor(private readonly context: GpuContext) {}

  get mode(): "timestamp-query" | "submit" {
    return this.context.timestamps ? "timestamp-query" : "submit";
  }

  /**
   * Milliseconds per dispatch of `a` and of `b`, timed side by side; `estimateMs` (the incumbent's
   * latest) sizes the batches.
   */
  async pair(a: Dispatch, b: Dispatch, estimateMs: number): Promise<[number, number]> {
    let reps = this.repsFor(estimateMs);
    if (this.mode === "submit") return [await this.bySubmit(a, reps), await this.bySubmit(b, reps)];
    this.queries(); // a new device (after a loss) has its quantum measured again
    if (!this.quantumNs) await this.measureQuantum();
    for (;;) {
      const [ta, tb] = await this.byTimestamps([a, b], reps);
      const shortest = Math.min(ta, tb);
      if (shortest >= MIN_QUANTA * this.quantumNs || reps >= MAX_REPS) return [ta / reps / 1e6, tb / reps / 1e6];
      reps = Math.min(MAX_REPS, reps * Math.max(2, Math.ceil((MIN_QUANTA * this.quantumNs) / Math.max(shortest, this.quantumNs))));
    }
  }

  private repsFor(estimateMs: number): number {
    const target = Math.max(TARGET_MS, (MIN_QUANTA * this.quantumNs) / 1e6);
    return Math.max(1, Math.min(MAX_REPS, Math.ceil(target / Math.max(estimateMs, 1e-3))));
  }

  /** Durations (ns) of passes of `reps` dispatches each, in one submit. */
  private async byTimestamps(dispatches: readonly Dispatch[], reps: number): Promise<number[]> {
    const q = this.queries();
    const encoder = q.device.createCommandEncoder();
    dispatches.forEach((d, i) => {
      const pass = encoder.beginComputePass({ timestampWrites: { querySet: q.set, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
      encode(pass, d, reps);
      pass.end();
    });
    const stamps = await this.readStamps(encoder, 2 * dispatches.length);
    return dispatches.map((_, i) => Number(stamps[2 * i + 1] - stamps[2 * i]));
  }

  /**
   * The quantum: the greatest common divisor of the timestamps of empty passes (quantized ones are
   * all multiples of it; 64 raw ones share no divisor above the GPU's own tick).
   */
  private async measureQuantum(): Promise<void> {
    const q = this.queries();
    let gcd = 0n;
    for (let probe = 0; probe < QUANTUM_PROBES; probe++) {
      const encoder = q.device.createCommandEncoder();
      for (let i = 0; i < 2; i++) {
        encoder.beginComputePass({ timestampWrites: { querySet: q.set, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } }).end();
      }
      for (const s of await this.readStamps(encoder, 4)) gcd = gcdOf(gcd, s < 0n ? -s : s);
    }
    this.quantumNs = Math.max(1, Number(gcd));
  }

  private async readStamps(encoder: GPUCommandEncoder, count: number): Promise<BigInt64Array> {
    const q = this.querySet!;
    encoder.resolveQuerySet(q.set, 0, count, q.resolve, 0);
    encoder.copyBufferToBuffer(q.resolve, 0, q.read, 0, count * 8);
    q.device.queue.submit([encoder.finish()]);
    await q.read.mapAsync(GPUMapMode.READ, 0, count * 8);
    const stamps = new BigInt64Array(q.read.getMappedRange(0, count * 8).slice(0));
    q.read.unmap();
    return stamps;
  }

  private queries(): NonNullable<GpuTimer["querySet"]> {
    const device = this.context.device;
    if (this.querySet?.device !== device) {
      this.querySet = {
        device,
        set: device.createQuerySet({ type: "timestamp", count: 4 }),
        resolve: device.createBuffer({ size: 32, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }),
        read: device.createBuffer({ size: 32, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
      };
      this.quantumNs = 0;
    }
    return this.querySet;
  }

  /** Milliseconds per dispatch of one submitted batch, host clock to completion. */
  private async bySubmit(d: Dispatch, reps: number): Promise<number> {
    const device = this.context.device;
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    encode(pass, d, reps);
    pass.end();
    const t0 = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) / reps;
  }
}

function encode(pass: GPUComputePassEncoder, d: Dispatch, reps: number): void {
  pass.setPipeline(d.pipeline);
  pass.setBindGroup(0, d.bindGroup);
  for (let r = 0; r < reps; r++) pass.dispatchWorkgroups(d.grid[0], d.grid[1], d.grid[2]);
}

function gcdOf(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}
