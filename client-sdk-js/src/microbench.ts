// The primitive microbenchmark (nnJIT section 5.1): kernel pairs that differ in one primitive, off
// and on, timed side by side on this device. The space service pools every device's results and
// fixes the primitives whose winner is the same everywhere.
import { Primitive, type KernelArtifact } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { OpBench } from "./op-bench.js";
import { TOLERANCE } from "./reference.js";
import { median, time } from "./timing.js";
import { readMetadata, type LoadedKernel } from "./wasm/executor.js";
import { matmul } from "./workloads.js";

export { measurePeakGflops } from "./peak.js";

/** One primitive's two kernels: the same op and schedule but for that primitive. */
export interface PrimitivePair {
  primitive: string;
  off: KernelArtifact;
  on: KernelArtifact;
}

/** One primitive measured on this device. */
export interface PrimitiveMeasurement {
  primitive: string;
  /** Median milliseconds of one call with the primitive off, and on. */
  offMs: number;
  onMs: number;
  /** offMs / onMs: above 1 the primitive pays here. */
  speedup: number;
}

/** How {@link runMicrobench} measures. */
export interface MicrobenchOptions {
  /** Rounds of one sample per kernel, taken in turn (default 7). */
  rounds?: number;
  /** Length of one sample (default 40 ms; at least one call). */
  sampleMs?: number;
  /** Largest accepted error against the reference (default {@link TOLERANCE}). */
  tolerance?: number;
  /** Called after each round. */
  onProgress?(round: number, rounds: number): void;
}

/**
 * Checks every kernel of the pairs against the float64 reference, then times them all side by
 * side, round after round (one sample per kernel per round, so a noisy neighbour slows them alike),
 * and returns each primitive's medians and speedup. Throws, naming the kernel, when one is wrong,
 * does not load, or the pairs are not all of one op.
 */
export async function runMicrobench(pairs: PrimitivePair[], options: MicrobenchOptions = {}): Promise<PrimitiveMeasurement[]> {
  const { rounds = 7, sampleMs = 40, tolerance = TOLERANCE, onProgress } = options;
  if (pairs.length === 0) throw new Error("no primitive pairs to measure");
  const shape = readMetadata(pairs[0].off).shape;
  if (shape.length !== 3) throw new Error(`the microbenchmark is a matmul, got shape [${shape}]`);
  const bench = new OpBench(matmul(shape[0], shape[1], shape[2]), 11, tolerance);
  const kernels: { primitive: string; off: LoadedKernel; on: LoadedKernel }[] = [];
  for (const pair of pairs) {
    const loaded: Record<string, LoadedKernel> = {};
    for (const setting of ["off", "on"] as const) {
      const checked = await bench.check(pair[setting]).catch((e: Error) => {
        throw new Error(`${pair.primitive} ${setting}: ${e.message}`);
      });
      loaded[setting] = checked.kernel;
    }
    kernels.push({ primitive: pair.primitive, off: loaded.off, on: loaded.on });
  }
  const samples = kernels.map(() => ({ off: [] as number[], on: [] as number[] }));
  for (let round = 0; round < rounds; round++) {
    kernels.forEach((kernel, i) => {
      for (const setting of ["off", "on"] as const) {
        // one unmeasured call first: it sizes the sample and brings the kernel's data back into cache
        samples[i][setting].push(time(kernel[setting].run, { warmups: 1, warmupMs: 0, samples: 1, sampleMs }).medianMs);
      }
    });
    onProgress?.(round + 1, rounds);
  }
  return kernels.map((kernel, i) => {
    const offMs = median(samples[i].off);
    const onMs = median(samples[i].on);
    return { primitive: kernel.primitive, offMs, onMs, speedup: offMs / onMs };
  });
}

/** A microbenchmark result to send to the gateway: each primitive's speedup, the device's peak, and what ran it. */
export interface MicrobenchSummary {
  /** Primitive name (`vectorize`, `loop_order`, …) → speedup, time off over time on. */
  speedups: Record<string, number>;
  /** A user agent, or "node 20.20.2". */
  engine: string;
  /**
   * The device's single-thread Wasm SIMD peak in GFLOP/s ({@link measurePeakGflops}); the zoo
   * refuses a latency its device kind cannot reach. Absent: not measured.
   */
  peakGflops?: number;
}

/** A primitive helps on a device when turning it on makes the microbenchmark at least this much faster. */
export const PRIMITIVE_HELPS = 1.05;

/**
 * The device's primitive vector (the paper's rho, part of the zoo key): one character per
 * primitive in the protocol's order, `1` when it helps (speedup of at least {@link PRIMITIVE_HELPS}),
 * `0` when it does not, `-` when it was not measured; empty without a microbenchmark.
 */
export function primitiveVector(summary?: MicrobenchSummary): string {
  if (!summary) return "";
  const measured = new Map(microbenchSpeedups(summary).map((s) => [s.primitive, s.speedup]));
  const primitives = Object.values(Primitive).filter((v): v is Primitive => typeof v === "number" && v !== Primitive.UNSPECIFIED)
    .sort((a, b) => a - b);
  return primitives.map((p) => {
    const speedup = measured.get(p);
    return speedup === undefined ? "-" : speedup >= PRIMITIVE_HELPS ? "1" : "0";
  }).join("");
}

/** The Microbench frame's speedups; throws on a primitive name the protocol does not know. */
export function microbenchSpeedups(summary: MicrobenchSummary): { primitive: Primitive; speedup: number }[] {
  return Object.entries(summary.speedups).map(([name, speedup]) => {
    const primitive = Primitive[name.toUpperCase() as keyof typeof Primitive];
    if (typeof primitive !== "number" || primitive === Primitive.UNSPECIFIED) {
      throw new Error(`unknown primitive "${name}" (known: ${Object.keys(Primitive).filter((k) => isNaN(Number(k)) && k !== "UNSPECIFIED").map((k) => k.toLowerCase()).join(", ")})`);
    }
    return { primitive, speedup };
  });
}
