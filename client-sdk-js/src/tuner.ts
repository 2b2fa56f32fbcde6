import type { ClientOptions } from "./client.js";
import { SessionLimit, type KernelOffer } from "./gen/jitzoo/gateway/v1/gateway_pb.js";
import { microbenchSpeedups, type MicrobenchSummary } from "./microbench.js";
import { ModelSession, type ReconnectOptions } from "./model/session.js";
import { OpBench } from "./op-bench.js";
import { flopsOf, opKey, opName } from "./ops.js";
import { probeDevice } from "./probe.js";
import { TOLERANCE } from "./reference.js";
import type { TimingOptions } from "./timing.js";
import type { Workload } from "./workloads.js";

/** Kernels whose output differs from the reference by more than this are refused. */
export { TOLERANCE };
/** How many kernels a report ranks at most (gateway.proto's session limit). */
export const REPORT_TOP_N: number = SessionLimit.REPORT_TOP_N;
/** "Near the best": within 5% of the session's final best latency. */
export const NEAR_BEST = 0.05;
/** Offers the gateway may send ahead of what the client has consumed. */
export const DEFAULT_CREDITS = 4;

/** What tuning one op achieved. */
export interface OpResult {
  /** `matmul` or `batch_matmul`. */
  op: string;
  shape: number[];
  /** The fastest correct kernel. */
  bestKernelId: string;
  bestMs: number;
  /** 2·batch·M·K·N over the best latency, in GFLOP/s. */
  gflops: number;
  /** Milliseconds from connecting to the moment the final best kernel was timed. */
  timeToBestMs: number;
  /** Milliseconds from connecting until the incumbent was within {@link NEAR_BEST} of the final best. */
  timeToNearBestMs: number;
  /** Kernels timed (the initial one included) until the incumbent was within {@link NEAR_BEST} of the final best. */
  kernelsToNearBest: number;
  /** Whether the Welcome's initial kernel came from the zoo. */
  initialFromZoo: boolean;
  initialKernelId: string;
  /** Latency of the initial kernel; NaN when it was wrong. */
  initialMs: number;
  /** Kernels offered as the best of a similar device (the zoo's exploitation set), in offer order. */
  zooKernelIds: string[];
}

/** What a tuning session did. */
export interface TuneResult {
  workload: string;
  fingerprint: string;
  sessionId: string;
  /** Rounds of offers (one per session for now). */
  rounds: number;
  /** Offers the gateway said it sent, in OffersDone. */
  offersSent: number;
  /** Offers received (initial kernels not counted). */
  kernelsReceived: number;
  /** Offers received that were a similar device's best from the zoo (the rest are the lite space's). */
  offersFromZoo: number;
  /** Kernels that matched the reference, initial kernels included. */
  kernelsValidated: number;
  /** Kernels refused: wrong output, or not loadable. */
  kernelsInvalid: number;
  /** Kernels timed (every validated one). */
  kernelsTimed: number;
  /** Inferences run with the incumbent between offers, as a page would. */
  inferences: number;
  reportsAcked: number;
  /** Whether a microbenchmark result was sent and accepted. */
  microbenchAcked: boolean;
  /** True when every op's initial kernel came from the zoo. */
  initialFromZoo: boolean;
  ops: OpResult[];
}

/** Options of {@link tune}. */
export interface TuneOptions {
  /** Overrides the probed fingerprint. */
  fingerprint?: string;
  /** Offers the gateway may send ahead (default {@link DEFAULT_CREDITS}). */
  credits?: number;
  /** Largest accepted relative error (default {@link TOLERANCE}). */
  tolerance?: number;
  /** How kernels are timed. */
  timing?: TimingOptions;
  /** Give up when the gateway sends nothing for this long while offers are due (default 120 000 ms). */
  idleTimeoutMs?: number;
  /** Passed to {@link createClient}. */
  client?: ClientOptions;
  /** How the session reconnects and resumes when its connection drops (see {@link ReconnectOptions}). */
  reconnect?: ReconnectOptions;
  /** Receives progress lines. */
  log?: (line: string) => void;
  /** This device's primitive microbenchmark, sent for the fleet's primitive table right after the Welcome. */
  microbench?: MicrobenchSummary;
  /** Stops the session when aborted: `tune` closes the connection and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The JIT loop for a workload: Hello; check and time the Welcome's initial kernels; for every
 * offer, check it against the reference, time it, keep the fastest, run one inference with the
 * incumbent and grant one more credit; after OffersDone report each op's top kernels and wait
 * for the acknowledgements.
 * @throws GatewayError, ConnectionClosed or ConnectError when the session fails
 */
export async function tune(url: string, workload: Workload, options: TuneOptions = {}): Promise<TuneResult> {
  options.signal?.throwIfAborted();
  const log = options.log ?? (() => undefined);
  const tolerance = options.tolerance ?? TOLERANCE;
  const device = await probeDevice(options.fingerprint, options.microbench);
  const benches = workload.ops.map((op, i) => new OpBench(op, 1000 + i, tolerance, options.timing));
  // every new best of each op: its latency, when, and how many kernels had been timed by then
  const bests = new Map<OpBench, { ms: number; at: number; timed: number }[]>(benches.map((b) => [b, []]));
  const timed = new Map<OpBench, number>(benches.map((b) => [b, 0]));
  const session = new ModelSession(url, device, workload.ops, {
    client: options.client, reconnect: options.reconnect, log, backend: workload.backend, credits: options.credits ?? DEFAULT_CREDITS,
  });
  const result: TuneResult = {
    workload: workload.name, fingerprint: device.fingerprint, sessionId: "", rounds: 1,
    offersSent: 0, kernelsReceived: 0, offersFromZoo: 0, kernelsValidated: 0, kernelsInvalid: 0, kernelsTimed: 0,
    inferences: 0, reportsAcked: 0, microbenchAcked: false, initialFromZoo: false, ops: [],
  };

  const start = performance.now();
  // an abort closes the session: whatever the loop awaits then fails, and the abort's reason is thrown instead
  const abort = () => session.close();
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    const welcome = await session.welcome;
    result.sessionId = session.sessionId;
    if (options.microbench) {
      await session.microbench({
        speedups: microbenchSpeedups(options.microbench), engine: options.microbench.engine, peakGflops: options.microbench.peakGflops ?? 0,
      });
      result.microbenchAcked = true;
      const peak = options.microbench.peakGflops ? `, peak ${options.microbench.peakGflops.toFixed(1)} GFLOP/s` : "";
      log(`microbenchmark sent (${Object.keys(options.microbench.speedups).length} primitives${peak})`);
    }

    const tryOn = async (bench: OpBench, offer: { artifact?: KernelOffer["artifact"] }, label: string) => {
      const verdict = await bench.tryKernel(offer.artifact!);
      if (!verdict.ok) {
        result.kernelsInvalid++;
        log(`  ${label} ${verdict.kernelId}: refused (${verdict.why})`);
        return;
      }
      result.kernelsValidated++;
      result.kernelsTimed++;
      timed.set(bench, timed.get(bench)! + 1);
      if (verdict.isNewBest) bests.get(bench)!.push({ ms: verdict.medianMs, at: performance.now() - start, timed: timed.get(bench)! });
      log(`  ${label} ${verdict.kernelId}: ${verdict.medianMs.toFixed(3)} ms${verdict.isNewBest ? " (new best)" : ""}`);
    };

    const initial: { fromZoo: boolean; id: string; ms: number }[] = [];
    for (const [i, op] of workload.ops.entries()) {
      const k = welcome.get(opKey(op))!;
      await tryOn(benches[i], k, `initial (${k.fromZoo ? "from the zoo" : "default"})`);
      const id = k.artifact?.ref?.kernelId ?? "";
      initial.push({ fromZoo: k.fromZoo, id, ms: benches[i].timingOf(id)?.medianMs ?? NaN });
    }

    const zooKernels = new Map(benches.map((b) => [b, [] as string[]]));
    const idleMs = options.idleTimeoutMs ?? 120_000;
    for (let next = await session.nextOffer(idleMs); next; next = await session.nextOffer(idleMs)) {
      const { key, offer } = next;
      result.kernelsReceived++;
      const bench = benches.find((b) => opKey(b.op) === key)!;
      if (offer.fromZoo) {
        result.offersFromZoo++;
        zooKernels.get(bench)!.push(offer.artifact?.ref?.kernelId ?? "");
      }
      await tryOn(bench, offer, `offer #${offer.rank}${offer.fromZoo ? " (a similar device's best)" : ""}`);
      for (const b of benches) {
        b.incumbent?.run(); // the page's next inference, on the best kernel so far
        result.inferences++;
      }
    }

    result.offersSent = session.offersSent;
    log(`offers done: ${session.offersSent} sent, ${result.kernelsReceived} received`);

    for (const [i, bench] of benches.entries()) {
      const ranked = bench.ranked(REPORT_TOP_N);
      if (ranked.length === 0) throw new Error(`no correct kernel for ${opName(bench.op.kind)} [${bench.op.shape}]`);
      const started = bench.timingOf(initial[i].id);
      await session.report(bench.op, ranked, started && { kernel: { kernelId: initial[i].id, ...started }, fromZoo: initial[i].fromZoo });
      result.reportsAcked++;
    }

    result.ops = benches.map((bench, i) => {
      const best = bench.incumbent!;
      const history = bests.get(bench)!;
      const near = history.find((b) => b.ms <= (1 + NEAR_BEST) * best.medianMs);
      return {
        op: opName(bench.op.kind),
        shape: [...bench.op.shape],
        bestKernelId: best.kernelId,
        bestMs: best.medianMs,
        gflops: flopsOf(bench.op) / (best.medianMs / 1000) / 1e9,
        timeToBestMs: history.at(-1)?.at ?? NaN,
        timeToNearBestMs: near?.at ?? NaN,
        kernelsToNearBest: near?.timed ?? NaN,
        initialFromZoo: initial[i].fromZoo,
        initialKernelId: initial[i].id,
        initialMs: initial[i].ms,
        zooKernelIds: zooKernels.get(bench)!,
      };
    });
    result.initialFromZoo = result.ops.every((o) => o.initialFromZoo);
    options.signal?.throwIfAborted();
    return result;
  } catch (e) {
    options.signal?.throwIfAborted();
    throw e;
  } finally {
    options.signal?.removeEventListener("abort", abort);
    session.close();
  }
}
