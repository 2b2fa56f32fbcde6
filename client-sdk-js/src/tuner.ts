import { createClient } from "./client.js";
import type { KernelOffer } from "./gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { probeDevice } from "./probe.js";
import { dimsOf, flopsOf, maxRelativeError, referenceMatMul, seededFloats } from "./reference.js";
import { time } from "./timing.js";
import { loadKernel, OperandMemory, type LoadedKernel } from "./wasm-executor.js";
import type { Workload } from "./workloads.js";

/** Kernels whose output differs from the reference by more than this are refused. */
export const TOLERANCE = 1e-4;
/** How many kernels a report ranks. */
export const REPORT_TOP_N = 5;
/** Offers the client lets the gateway send ahead of what it has consumed. */
const CREDIT_WINDOW = 4;

/** What tuning one op achieved. */
export interface OpResult {
  op: string;
  shape: number[];
  bestKernelId: string;
  bestMs: number;
  gflops: number;
  /** Milliseconds from connecting to the moment the final best kernel was found. */
  timeToBestMs: number;
  initialFromZoo: boolean;
  initialKernelId: string;
  initialMs: number;
}

/** What a tuning session did. */
export interface TuneResult {
  workload: string;
  fingerprint: string;
  rounds: number;
  kernelsReceived: number;
  kernelsValidated: number;
  kernelsInvalid: number;
  kernelsTimed: number;
  inferences: number;
  reportsAcked: number;
  initialFromZoo: boolean;
  ops: OpResult[];
}

export interface TuneOptions {
  /** Overrides the probed fingerprint. */
  fingerprint?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** One op's tuning state: its operands, reference output, incumbent and every timing. */
class OpTuner {
  readonly operands: OperandMemory;
  readonly expected: Float32Array;
  readonly timings = new Map<string, { ms: number; samples: number; error: number }>();
  incumbent!: LoadedKernel;
  incumbentMs = Infinity;
  bestFoundAt = 0;

  constructor(readonly op: OpSpec, seed: number) {
    const d = dimsOf(op);
    const a = seededFloats(d.batch * d.m * d.k, seed);
    const b = seededFloats(d.batch * d.k * d.n, seed + 1);
    this.operands = new OperandMemory(d, a, b);
    this.expected = referenceMatMul(d, a, b);
  }

  /** Runs the kernel once against the reference; returns it timed, or null when it is wrong. */
  async tryKernel(artifact: KernelArtifact, at: number): Promise<{ kernel: LoadedKernel; error: number } | null> {
    const kernel = await loadKernel(artifact, this.operands);
    this.operands.poisonOutput();
    kernel.run();
    const error = maxRelativeError(this.operands.readOutput(), this.expected);
    if (!(error <= TOLERANCE)) return null;
    const t = time(kernel.run);
    this.timings.set(kernel.kernelId, { ms: t.medianMs, samples: t.samples, error });
    if (t.medianMs < this.incumbentMs) {
      this.incumbent = kernel;
      this.incumbentMs = t.medianMs;
      this.bestFoundAt = at;
    }
    return { kernel, error };
  }

  ranked() {
    return [...this.timings.entries()]
      .sort((x, y) => x[1].ms - y[1].ms)
      .slice(0, REPORT_TOP_N)
      .map(([kernelId, t]) => ({ kernelId, medianMs: t.ms, samples: t.samples, maxRelError: t.error }));
  }
}

/**
 * The JIT loop: Hello; run the Welcome's initial kernels; for every offer, check it against the
 * reference, time it, swap it in when faster, and run one inference with the incumbent, as a
 * page would between frames; then report each op's top kernels.
 */
export async function tune(url: string, workload: Workload, options: TuneOptions = {}): Promise<TuneResult> {
  const log = options.log ?? (() => undefined);
  const start = performance.now();
  const since = () => performance.now() - start;
  const device = await probeDevice(options.fingerprint);
  const client = createClient(url);
  const tuners = workload.ops.map((op, i) => new OpTuner(op, 1000 + i));
  const result: TuneResult = {
    workload: workload.name, fingerprint: device.fingerprint, rounds: 1, kernelsReceived: 0,
    kernelsValidated: 0, kernelsInvalid: 0, kernelsTimed: 0, inferences: 0, reportsAcked: 0,
    initialFromZoo: true, ops: [],
  };

  const offers: KernelOffer[] = [];
  let wake: () => void = () => undefined;
  let offersDone = false;
  client.on("offer", (offer) => { offers.push(offer); result.kernelsReceived++; wake(); });
  client.on("offersDone", () => { offersDone = true; wake(); });
  const errors: Error[] = [];
  client.on("error", (e) => { errors.push(e); wake(); });
  client.on("close", () => wake());

  try {
    await client.ready();
    const welcomed = client.once("welcome");
    client.send({ frame: { case: "hello", value: {
      protocolVersion: 1, device, backend: workload.backend, ops: workload.ops, credits: CREDIT_WINDOW,
    } } });
    const welcome = await Promise.race([welcomed, client.once("error").then((e) => { throw e; })]);
    log(`session ${welcome.sessionId}: ${welcome.initial.length} initial kernels`);

    const initial: { id: string; fromZoo: boolean; ms: number }[] = [];
    for (const [i, k] of welcome.initial.entries()) {
      const artifact = k.artifact!;
      const tried = await tuners[i].tryKernel(artifact, since());
      if (!tried) throw new Error(`initial kernel ${artifact.ref?.kernelId} is wrong`);
      result.kernelsValidated++;
      result.kernelsTimed++;
      initial.push({ id: tried.kernel.kernelId, fromZoo: k.fromZoo, ms: tuners[i].incumbentMs });
      log(`  initial ${tried.kernel.kernelId} (${k.fromZoo ? "from the zoo" : "default"}): ${tuners[i].incumbentMs.toFixed(3)} ms`);
    }

    while (!offersDone || offers.length > 0) {
      if (errors.length) throw errors[0];
      const offer = offers.shift();
      if (!offer) {
        await new Promise<void>((r) => { wake = r; });
        continue;
      }
      const artifact = offer.artifact!;
      const tuner = tuners.find((t) => sameOp(t.op, artifact.ref!.op!));
      if (!tuner) throw new Error(`offer ${artifact.ref?.kernelId} is for an op this session did not ask for`);
      const tried = await tuner.tryKernel(artifact, since());
      if (tried) {
        result.kernelsValidated++;
        result.kernelsTimed++;
        log(`  offer #${offer.rank} ${tried.kernel.kernelId}: ${tuner.timings.get(tried.kernel.kernelId)!.ms.toFixed(3)} ms`);
      } else {
        result.kernelsInvalid++;
        log(`  offer #${offer.rank} ${artifact.ref?.kernelId}: WRONG OUTPUT, refused`);
      }
      tuner.incumbent.run(); // the page's next inference, on the best kernel so far
      result.inferences++;
      client.send({ frame: { case: "credit", value: { credits: 1 } } });
    }

    for (const tuner of tuners) {
      const acked = client.once("reportAck");
      const refused = client.once("error");
      client.send({ frame: { case: "report", value: { op: tuner.op, ranked: tuner.ranked() } } });
      await Promise.race([acked, refused.then((e) => { throw e; })]);
      result.reportsAcked++;
    }

    result.ops = tuners.map((t, i) => ({
      op: dimsOf(t.op).batch > 1 || t.op.shape.length === 4 ? "batch_matmul" : "matmul",
      shape: [...t.op.shape],
      bestKernelId: t.incumbent.kernelId,
      bestMs: t.incumbentMs,
      gflops: flopsOf(t.op) / (t.incumbentMs / 1000) / 1e9,
      timeToBestMs: t.bestFoundAt,
      initialFromZoo: initial[i].fromZoo,
      initialKernelId: initial[i].id,
      initialMs: initial[i].ms,
    }));
    result.initialFromZoo = result.ops.every((o) => o.initialFromZoo);
    return result;
  } finally {
    client.close();
  }
}

function sameOp(a: OpSpec, b: OpSpec): boolean {
  return a.kind === b.kind && a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}
