import type { MessageInitShape } from "@bufbuild/protobuf";
import type { RankedKernelSchema } from "./gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { dimsOf } from "./ops.js";
import { maxRelativeError, referenceMatMul, seededFloats } from "./reference.js";
import { time, type TimingOptions } from "./timing.js";
import { loadKernel, OperandMemory, type LoadedKernel } from "./wasm/executor.js";

/** A correct kernel's measurement. */
export interface KernelTiming {
  /** Median latency of one call, in milliseconds. */
  medianMs: number;
  /** Samples the median was taken over. */
  samples: number;
  /** Its error against the reference (see {@link maxRelativeError}). */
  maxRelError: number;
}

/** How one kernel fared. */
export type KernelVerdict =
  | ({ ok: true; kernelId: string; isNewBest: boolean } & KernelTiming)
  | { ok: false; kernelId: string; why: string };

/**
 * One op's test bench: fixed inputs, the reference output, every kernel's timing and the
 * incumbent (the fastest correct kernel so far).
 */
export class OpBench {
  private readonly operands: OperandMemory;
  private readonly expected: Float32Array;
  private readonly timings = new Map<string, KernelTiming>();
  private best?: { kernel: LoadedKernel; ms: number };

  /**
   * @param op - the op every kernel on this bench computes
   * @param seed - seed of the deterministic inputs
   * @param tolerance - largest accepted {@link maxRelativeError} against the reference
   * @param timing - how kernels are timed
   */
  constructor(readonly op: OpSpec, seed: number, readonly tolerance: number, private readonly timing: TimingOptions = {}) {
    const d = dimsOf(op);
    const a = seededFloats(d.batch * d.m * d.k, seed);
    const b = seededFloats(d.batch * d.k * d.n, seed + 1);
    this.operands = new OperandMemory(d, a, b);
    this.expected = referenceMatMul(d, a, b);
  }

  /** The fastest correct kernel so far, if any. */
  get incumbent(): { kernelId: string; medianMs: number; run(): void } | undefined {
    return this.best && { kernelId: this.best.kernel.kernelId, medianMs: this.best.ms, run: this.best.kernel.run };
  }

  /**
   * Loads a kernel over this bench's operands and checks one run against the reference (C poisoned
   * first). Throws with the reason when it does not load or is wrong.
   */
  async check(artifact: KernelArtifact): Promise<{ kernel: LoadedKernel; maxRelError: number }> {
    const kernel = await loadKernel(artifact, this.operands);
    this.operands.poisonOutput();
    kernel.run();
    const maxRelError = maxRelativeError(this.operands.readOutput(), this.expected);
    if (!(maxRelError <= this.tolerance)) throw new Error(`max relative error ${maxRelError.toExponential(2)} > ${this.tolerance}`);
    return { kernel, maxRelError };
  }

  /** Loads a kernel, checks one run against the reference, then times it. Never throws. */
  async tryKernel(artifact: KernelArtifact): Promise<KernelVerdict> {
    const kernelId = artifact.ref?.kernelId ?? "";
    let kernel: LoadedKernel;
    let maxRelError: number;
    try {
      ({ kernel, maxRelError } = await this.check(artifact));
    } catch (e) {
      return { ok: false, kernelId, why: (e as Error).message };
    }
    const t = time(kernel.run, this.timing);
    this.timings.set(kernelId, { medianMs: t.medianMs, samples: t.samples, maxRelError });
    const isNewBest = !this.best || t.medianMs < this.best.ms;
    if (isNewBest) this.best = { kernel, ms: t.medianMs };
    return { ok: true, kernelId, medianMs: t.medianMs, samples: t.samples, maxRelError, isNewBest };
  }

  /** Timing of a kernel tried on this bench. */
  timingOf(kernelId: string): KernelTiming | undefined {
    return this.timings.get(kernelId);
  }

  /** The `topN` fastest correct kernels, best first, as a Report lists them. */
  ranked(topN: number): MessageInitShape<typeof RankedKernelSchema>[] {
    return [...this.timings.entries()]
      .sort((x, y) => x[1].medianMs - y[1].medianMs)
      .slice(0, topN)
      .map(([kernelId, t]) => ({ kernelId, ...t }));
  }
}
