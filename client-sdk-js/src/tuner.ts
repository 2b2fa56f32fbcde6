import { createClient, type ClientOptions, type JitzooClient } from "./client.js";
import { ProtocolVersion, SessionLimit, type KernelOffer } from "./gen/jitzoo/gateway/v1/gateway_pb.js";
import type { OpSpec } from "./gen/jitzoo/kernel/v1/kernel_pb.js";
import { microbenchSpeedups, type MicrobenchSummary } from "./microbench.js";
import { OpBench } from "./op-bench.js";
import { probeDevice } from "./probe.js";
import { flopsOf, opName } from "./ops.js";
import type { TimingOptions } from "./timing.js";
import type { Workload } from "./workloads.js";

import { TOLERANCE } from "./reference.js";

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
  const client = createClient(url, options.client);
  const result: TuneResult = {
    workload: workload.name, fingerprint: device.fingerprint, sessionId: "", rounds: 1,
    offersSent: 0, kernelsReceived: 0, offersFromZoo: 0, kernelsValidated: 0, kernelsInvalid: 0, kernelsTimed: 0,
    inferences: 0, reportsAcked: 0, microbenchAcked: false, initialFromZoo: false, ops: [],
  };

  const inbox = new OfferInbox(client, options.idleTimeoutMs ?? 120_000, log);
  const start = performance.now();
  // an abort closes the connection: whatever the loop awaits then fails, and the abort's reason is thrown instead
  const abort = () => client.close(1000, "aborted");
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    await client.ready();
    const welcomed = client.next("welcome");
    client.send({ frame: { case: "hello", value: {
      protocolVersion: ProtocolVersion.CURRENT, device, backend: workload.backend, ops: workload.ops, credits: options.credits ?? DEFAULT_CREDITS,
    } } });
    const welcome = await welcomed;
    result.sessionId = welcome.sessionId;
    log(`session ${welcome.sessionId}: ${welcome.initial.length} initial kernels`);
    if (welcome.initial.length !== benches.length) {
      throw new Error(`the Welcome has ${welcome.initial.length} initial kernels for ${benches.length} ops`);
    }
    if (options.microbench) {
      const acked = client.next("microbenchAck");
      client.send({ frame: { case: "microbench", value: {
        speedups: microbenchSpeedups(options.microbench), engine: options.microbench.engine,
        peakGflops: options.microbench.peakGflops ?? 0,
      } } });
      await acked;
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
    for (const [i, k] of welcome.initial.entries()) {
      await tryOn(benches[i], k, `initial (${k.fromZoo ? "from the zoo" : "default"})`);
      const id = k.artifact?.ref?.kernelId ?? "";
      initial.push({ fromZoo: k.fromZoo, id, ms: benches[i].timingOf(id)?.medianMs ?? NaN });
    }

    const zooKernels = new Map(benches.map((b) => [b, [] as string[]]));
    for (let offer = await inbox.take(); offer; offer = await inbox.take()) {
      result.kernelsReceived++;
      const op = offer.artifact?.ref?.op;
      const bench = op && benches.find((b) => sameOp(b.op, op));
      if (offer.fromZoo) result.offersFromZoo++;
      if (bench) {
        if (offer.fromZoo) zooKernels.get(bench)!.push(offer.artifact?.ref?.kernelId ?? "");
        await tryOn(bench, offer, `offer #${offer.rank}${offer.fromZoo ? " (a similar device's best)" : ""}`);
      } else {
        result.kernelsInvalid++;
        log(`  offer #${offer.rank} ${offer.artifact?.ref?.kernelId}: refused (an op this session did not ask for)`);
      }
      for (const b of benches) {
        b.incumbent?.run(); // the page's next inference, on the best kernel so far
        result.inferences++;
      }
      client.send({ frame: { case: "credit", value: { credits: 1 } } });
    }

    result.offersSent = inbox.offersSent;
    log(`offers done: ${inbox.offersSent} sent, ${result.kernelsReceived} received`);

    for (const [i, bench] of benches.entries()) {
      const ranked = bench.ranked(REPORT_TOP_N);
      if (ranked.length === 0) throw new Error(`no correct kernel for ${opName(bench.op.kind)} [${bench.op.shape}]`);
      const started = bench.timingOf(initial[i].id);
      const acked = client.next("reportAck");
      client.send({ frame: { case: "report", value: {
        op: bench.op, ranked, initial: started && { kernelId: initial[i].id, ...started }, initialFromZoo: initial[i].fromZoo,
      } } });
      await acked;
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
    inbox.dispose();
    client.close();
  }
}

/** Queues offers as they arrive; `take` yields them in order and undefined after OffersDone. */
class OfferInbox {
  private readonly offers: KernelOffer[] = [];
  private done = false;
  /** What OffersDone said. */
  offersSent = 0;
  private failure?: Error;
  private wake: () => void = () => undefined;
  private readonly cancels: (() => void)[];

  constructor(client: JitzooClient, private readonly idleTimeoutMs: number, log: (line: string) => void) {
    const notify = () => this.wake();
    this.cancels = [
      client.on("offer", (offer) => { this.offers.push(offer); notify(); }),
      client.on("offersDone", (d) => {
        this.offersSent = d.offersSent;
        if (d.cutShort) log(`  offers cut short after ${d.offersSent}: ${d.cutShort}`);
        this.done = true;
        notify();
      }),
      // Errors while offers flow are logged: a fatal one is followed by a close, which ends the loop.
      client.on("error", (e) => log(`  ${e.message}`)),
      client.on("close", (c) => { this.failure = c; notify(); }),
    ];
  }

  async take(): Promise<KernelOffer | undefined> {
    for (;;) {
      const offer = this.offers.shift();
      if (offer) return offer;
      if (this.done) return undefined;
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no offer for ${this.idleTimeoutMs} ms`)), this.idleTimeoutMs);
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
    }
  }

  dispose(): void {
    this.cancels.forEach((cancel) => cancel());
  }
}

function sameOp(a: OpSpec, b: OpSpec): boolean {
  return a.kind === b.kind && a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}
