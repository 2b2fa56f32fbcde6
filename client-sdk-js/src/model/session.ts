import type { MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type ClientOptions, type JitzooClient } from "../client.js";
import { GatewayError } from "../errors.js";
import type { DynamicPlan, InitialKernel, KernelOffer, RankedKernelSchema } from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, type DeviceProfile, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { opKey } from "../ops.js";

/**
 * Offers the gateway may send ahead of what the model has tried: two per op (at least 4, at most
 * 32), so an op that tunes slowly, with offers waiting in its queue, does not hold back the others.
 */
const credits = (ops: number) => Math.min(32, Math.max(4, 2 * ops));

/**
 * One gateway session for a set of a model's ops: Hello, the Welcome's initial kernels, the
 * offers queued per op until the model's tuning takes them (each one taken grants a credit),
 * and a Report per op once it settles. Errors never reach the model's `run()`: a session that
 * fails leaves its ops on the kernels they have, and says why.
 */
export class ModelSession {
  /** The Welcome's kernels by op key; rejects when the session cannot start. */
  readonly welcome: Promise<Map<string, InitialKernel>>;
  /** Why the session ended early, if it did. */
  failure?: string;
  private readonly client: JitzooClient;
  private readonly queues = new Map<string, KernelOffer[]>();
  /** Kernels the model queued for an op itself (the Welcome's, behind a kernel kept on the device): no credit to grant. */
  private readonly local = new Map<string, KernelOffer[]>();
  private done = false;
  /** Closed by the model: nothing more is sent (a model may close before its Hello went out). */
  private closed = false;
  private reportsLeft: number;
  private readonly cancels: (() => void)[] = [];
  /** Reports go one at a time: each waits for its acknowledgement. */
  private reporting: Promise<void> = Promise.resolve();

  constructor(url: string, device: DeviceProfile, readonly ops: readonly OpSpec[], options: ClientOptions = {}, private readonly log: (line: string) => void = () => undefined) {
    this.client = createClient(url, options);
    ops.forEach((op) => this.queues.set(opKey(op), []));
    this.reportsLeft = ops.length;
    this.cancels.push(
      this.client.on("offer", (offer) => {
        const op = offer.artifact?.ref?.op;
        const queue = op && this.queues.get(opKey(op));
        if (queue) {
          queue.push(offer);
          return;
        }
        // its credit comes back, or stray offers would use up the credits the asked-for ops need
        this.log(`  offer ${offer.artifact?.ref?.kernelId} is for an op this session did not ask for (${op ? opKey(op) : "none"}); ignored`);
        this.grantCredit();
      }),
      this.client.on("offersDone", () => { this.done = true; }),
      this.client.on("error", (e) => this.log(`  gateway: ${e.message}`)),
      this.client.on("close", (c) => {
        if (this.reportsLeft > 0) this.failure ??= c.message;
        this.done = true;
      }),
    );
    this.welcome = this.start(device);
    this.welcome.catch((e: Error) => { this.failure ??= e.message; });
  }

  private async start(device: DeviceProfile): Promise<Map<string, InitialKernel>> {
    await this.client.ready();
    if (this.closed) throw new Error("the model closed before its session started");
    const welcomed = this.client.next("welcome");
    this.client.send({ frame: { case: "hello", value: { protocolVersion: 1, device, backend: Backend.WASM, ops: [...this.ops], credits: credits(this.ops.length) } } });
    const welcome = await welcomed;
    if (welcome.initial.length !== this.ops.length) throw new Error(`the Welcome has ${welcome.initial.length} initial kernels for ${this.ops.length} ops`);
    this.log(`session ${welcome.sessionId}: ${this.ops.length} ops`);
    return new Map(welcome.initial.map((k, i) => [opKey(this.ops[i]), k]));
  }

  /** Queues a kernel for an op ahead of the gateway's offers, without a credit for it. */
  enqueueLocal(key: string, offer: KernelOffer): void {
    const queue = this.local.get(key) ?? [];
    queue.push(offer);
    this.local.set(key, queue);
  }

  /** The next offer for an op, if one has arrived; taking one of the gateway's grants it one more credit. */
  take(key: string): KernelOffer | undefined {
    const local = this.local.get(key)?.shift();
    if (local) return local;
    const offer = this.queues.get(key)?.shift();
    if (offer) this.grantCredit();
    return offer;
  }

  private grantCredit(): void {
    if (!this.failure && !this.closed) this.client.send({ frame: { case: "credit", value: { credits: 1 } } });
  }

  /** Whether no more offers will come for an op (every planned offer sent, or the session ended). */
  exhausted(key: string): boolean {
    return this.done && (this.queues.get(key)?.length ?? 0) === 0 && (this.local.get(key)?.length ?? 0) === 0;
  }

  /** Sends an op's report; resolves when acknowledged, rejects with the gateway's reason. Closes the session after the last one. */
  report(op: OpSpec, ranked: MessageInitShape<typeof RankedKernelSchema>[]): Promise<void> {
    const sent = this.reporting.then(async () => {
      try {
        if (this.failure) throw new Error(this.failure);
        const acked = this.client.next("reportAck");
        this.client.send({ frame: { case: "report", value: { op, ranked } } });
        await acked;
      } finally {
        if (--this.reportsLeft === 0) this.close();
      }
    });
    this.reporting = sent.catch(() => undefined);
    return sent;
  }

  close(): void {
    this.closed = true;
    this.cancels.splice(0).forEach((cancel) => cancel());
    this.client.close();
  }
}

/** A MatMul whose M varies between runs, over lo..hi (M = hi in `op`). */
export interface DynamicMatmul {
  readonly op: OpSpec;
  readonly lo: number;
  readonly hi: number;
}

/** Most PlanRequests one connection may send (the gateway's limit). */
const PLANS_PER_CONNECTION = 16;

/**
 * Asks the gateway for the uKernel plan of each dynamic MatMul, one at a time, over as few
 * connections as its limit allows. An op the gateway cannot plan (refused, or the space down) is
 * left out of the map, with the reason logged; an unreachable gateway leaves the map empty.
 */
export async function requestPlans(url: string, device: DeviceProfile, matmuls: readonly DynamicMatmul[], options: ClientOptions = {},
  log: (line: string) => void = () => undefined): Promise<Map<DynamicMatmul, DynamicPlan>> {
  const plans = new Map<DynamicMatmul, DynamicPlan>();
  for (let i = 0; i < matmuls.length; i += PLANS_PER_CONNECTION) {
    const client = createClient(url, options);
    try {
      await client.ready();
      for (const m of matmuls.slice(i, i + PLANS_PER_CONNECTION)) {
        const answered = client.next("dynamicPlan");
        client.send({ frame: { case: "planRequest", value: { device, op: m.op, lo: m.lo, hi: m.hi } } });
        try {
          plans.set(m, await answered);
        } catch (e) {
          if (!(e instanceof GatewayError)) throw e;
          log(`  no uKernel plan for ${opKey(m.op)} over ${m.lo}..${m.hi}: ${e.message}`);
        }
      }
    } catch (e) {
      log(`  uKernel plans not served (${(e as Error).message})`);
      break;
    } finally {
      client.close();
    }
  }
  return plans;
}
