import type { MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type ClientOptions, type JitzooClient } from "../client.js";
import { ConnectionClosed, GatewayError } from "../errors.js";
import {
  ErrorCode, PlanLimit, ProtocolVersion, SessionLimit, type DynamicPlan, type InitialKernel, type KernelOffer, type MicrobenchSchema, type RankedKernelSchema,
} from "../gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, type DeviceProfile, type OpSpec } from "../gen/jitzoo/kernel/v1/kernel_pb.js";
import { flopsOf, opKey } from "../ops.js";
import type { ConnectionState } from "./events.js";

/**
 * Offers the gateway may send ahead of what the model has tried: two per op (at least 4, at most
 * 32), so an op that tunes slowly, with offers waiting in its queue, does not hold back the others.
 */
const credits = (ops: number) => Math.min(32, Math.max(4, 2 * ops));

/** How a session reconnects after its connection drops: attempts, and the backoff between them (doubling, with jitter). */
export interface ReconnectOptions {
  /** Attempts before the session gives up (default 10; 0 never reconnects). */
  attempts?: number;
  /** The first wait (default 250 ms); each attempt doubles it, up to `maxDelayMs`, then waits a random 50–100 % of it. */
  baseDelayMs?: number;
  /** The longest wait (default 8 000 ms). */
  maxDelayMs?: number;
}

export const DEFAULT_RECONNECT: Required<ReconnectOptions> = { attempts: 10, baseDelayMs: 250, maxDelayMs: 8_000 };

/** Report refusals that say "not now": the report is sent again after a backoff. */
const RETRIED_REPORT_ERRORS = new Set([ErrorCode.UNAVAILABLE, ErrorCode.QUOTA_EXCEEDED]);

/** Close codes after which reconnecting cannot help: a normal close, and the gateway refusing what this client sent. */
const FINAL_CLOSE_CODES = new Set([1000, 1003, 1007, 1008, 1009]);

/** Options of a {@link ModelSession}. */
export interface ModelSessionOptions {
  client?: ClientOptions;
  reconnect?: ReconnectOptions;
  log?: (line: string) => void;
  /** Told each change of the connection, with a detail (why it dropped, the attempt). */
  onConnection?: (state: ConnectionState, detail: string) => void;
  /** The kernels' backend (default Wasm; WGSL needs the device's webgpu adapter). */
  backend?: Backend;
  /** Offers the gateway may send ahead of those taken (default two per op, at least 4, at most 32). */
  credits?: number;
}

/**
 * One gateway session for a set of a model's ops: Hello, the Welcome's initial kernels, the
 * offers queued per op until the model's tuning takes them (each one taken grants a credit),
 * and a Report per op once it settles. When the connection drops (a network change, a gateway
 * restart) it reconnects with backoff and jitter and resumes the session with the Welcome's
 * token: the kernels it was issued stay reportable, the offers it missed come again, and a report
 * whose acknowledgement was lost is sent again (the gateway stores it once). Errors never reach
 * the model's `run()`: a session that fails leaves its ops on the kernels they have, and says why.
 */
/**
 * A model's ops as gateway sessions, one Hello each (at most gateway.proto's ops per Hello): the
 * ops that take the most time first, by flops times the instances of the op in the model, since
 * the gateway offers candidates op by op in Hello order. Both backends open their sessions so.
 */
export function sessionGroups<T extends { op: OpSpec; instances: number }>(slots: readonly T[]): T[][] {
  const ordered = [...slots].sort((a, b) => flopsOf(b.op) * b.instances - flopsOf(a.op) * a.instances);
  const groups: T[][] = [];
  for (let i = 0; i < ordered.length; i += SessionLimit.OPS_PER_HELLO) groups.push(ordered.slice(i, i + SessionLimit.OPS_PER_HELLO));
  return groups;
}

export class ModelSession {
  /** The Welcome's kernels by op key; rejects when the session cannot start. */
  readonly welcome: Promise<Map<string, InitialKernel>>;
  /** Why the session ended early, if it did. */
  failure?: string;
  /** The gateway's id of the session (empty before the Welcome). */
  sessionId = "";
  /** What the gateway's OffersDone said it sent (0 until then). */
  offersSent = 0;
  /** The error that ended the session early (the close, the gateway's refusal). */
  private cause?: Error;
  /** Wakes {@link nextOffer}'s wait: an offer arrived, or no more will. */
  private wake?: () => void;
  private client: JitzooClient;
  /** The open connection; while reconnecting, a promise of the next one (rejected when the session fails). */
  private link: Promise<JitzooClient>;
  private token = "";
  private readonly queues = new Map<string, KernelOffer[]>();
  /** Kernels the model queued for an op itself (the Welcome's, behind a kernel kept on the device): no credit to grant. */
  private readonly local = new Map<string, KernelOffer[]>();
  private done = false;
  /** Closed by the model: nothing more is sent (a model may close before its Hello went out). */
  private closed = false;
  /** Credits granted so far (the Hello's and one per offer taken), and offers received: a resumed session asks for the difference. */
  private granted: number;
  private received = 0;
  /** Kernel ids offered so far: a resumed session may be offered one again. */
  private readonly offered = new Set<string>();
  private reportsLeft: number;
  private cancels: (() => void)[] = [];
  /** Reports go one at a time: each waits for its acknowledgement. */
  private reporting: Promise<void> = Promise.resolve();
  private readonly reconnect: Required<ReconnectOptions>;
  private readonly log: (line: string) => void;

  constructor(private readonly url: string, device: DeviceProfile, readonly ops: readonly OpSpec[], private readonly options: ModelSessionOptions = {}) {
    this.log = options.log ?? (() => undefined);
    this.reconnect = { ...DEFAULT_RECONNECT, ...options.reconnect };
    this.client = createClient(url, options.client);
    this.link = Promise.resolve(this.client);
    ops.forEach((op) => this.queues.set(opKey(op), []));
    this.reportsLeft = ops.length;
    this.granted = options.credits ?? credits(ops.length);
    this.cancels.push(...this.listen(this.client), this.client.on("close", (c) => this.dropped(c)));
    this.welcome = this.start(device);
    this.welcome.catch((e: Error) => this.fail(e.message, e));
  }

  /** Takes a connection's offers; returns the functions that stop it. */
  private listen(client: JitzooClient): (() => void)[] {
    return [
      client.on("offer", (offer) => {
        this.received++;
        const op = offer.artifact?.ref?.op;
        const queue = op && this.queues.get(opKey(op));
        const id = offer.artifact?.ref?.kernelId ?? "";
        if (queue && this.offered.has(id)) {
          this.grantCredit(); // offered again after a resume: already queued or tried
          return;
        }
        this.offered.add(id);
        if (queue) {
          queue.push(offer);
          this.wake?.();
          return;
        }
        // its credit comes back, or stray offers would use up the credits the asked-for ops need
        this.log(`  offer ${id} is for an op this session did not ask for (${op ? opKey(op) : "none"}); ignored`);
        this.grantCredit();
      }),
      client.on("offersDone", (d) => {
        if (d.cutShort) this.log(`  offers cut short after ${d.offersSent}: ${d.cutShort}`);
        this.offersSent = d.offersSent;
        this.done = true;
        this.wake?.();
      }),
      client.on("error", (e) => this.log(`  gateway: ${e.message}`)),
      client.on("goaway", (g) => this.log(`  gateway: ${g.reason}`)), // its close (1001) starts the resume
    ];
  }

  private async start(device: DeviceProfile): Promise<Map<string, InitialKernel>> {
    await this.client.ready();
    if (this.closed) throw new Error("the model closed before its session started");
    const welcomed = this.client.next("welcome");
    this.client.send({ frame: { case: "hello", value: { protocolVersion: ProtocolVersion.CURRENT, device, backend: this.options.backend ?? Backend.WASM, ops: [...this.ops], credits: this.granted } } });
    const welcome = await welcomed;
    if (welcome.initial.length !== this.ops.length) throw new Error(`the Welcome has ${welcome.initial.length} initial kernels for ${this.ops.length} ops`);
    this.token = welcome.resumeToken;
    this.sessionId = welcome.sessionId;
    this.log(`session ${welcome.sessionId}: ${this.ops.length} ops${this.token ? "" : " (the gateway keeps no sessions: it cannot be resumed)"}`);
    return new Map(welcome.initial.map((k, i) => [opKey(this.ops[i]), k]));
  }

  /** The connection closed: the end, or a drop to reconnect from (after the Welcome, with a token, and reports still to make). */
  private dropped(closed: ConnectionClosed): void {
    if (this.closed || this.failure) return;
    const resumable = this.token && this.reportsLeft > 0 && this.reconnect.attempts > 0 && !FINAL_CLOSE_CODES.has(closed.closeCode);
    if (!resumable) {
      if (this.reportsLeft > 0) this.fail(closed.message, closed);
      return;
    }
    this.cancels.splice(0).forEach((cancel) => cancel());
    let settle!: { resolve: (c: JitzooClient) => void; reject: (e: Error) => void };
    this.link = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    this.link.catch(() => undefined);
    this.log(`  session dropped (${closed.message}); reconnecting`);
    this.options.onConnection?.("reconnecting", closed.message);
    void this.resume().then(settle.resolve, (e: Error) => {
      settle.reject(e);
      this.fail(e.message, e);
    });
  }

  /** Reconnects with backoff and jitter and resumes the session; rejects when the gateway refuses the token or the attempts run out. */
  private async resume(): Promise<JitzooClient> {
    let why = "";
    for (let attempt = 0; attempt < this.reconnect.attempts; attempt++) {
      await this.backoff(attempt);
      if (this.closed) throw new Error("the model closed while reconnecting");
      const client = createClient(this.url, this.options.client);
      // offers may follow Resumed in the same read: listen before asking
      const listening = this.listen(client);
      try {
        await client.ready();
        const resumed = client.next("resumed");
        client.send({ frame: { case: "resume", value: { token: this.token, credits: Math.max(0, this.granted - this.received) } } });
        const answer = await resumed;
        if (client.state === "closed") throw new ConnectionClosed(1006, "closed as it resumed");
        this.client = client;
        this.cancels.push(...listening, client.on("close", (c) => this.dropped(c)));
        this.log(`  session ${answer.sessionId} resumed after ${attempt + 1} attempt${attempt ? "s" : ""}`);
        this.options.onConnection?.("resumed", `attempt ${attempt + 1}`);
        return client;
      } catch (e) {
        listening.forEach((cancel) => cancel());
        client.close();
        if (e instanceof GatewayError) throw new Error(`the session could not be resumed: ${e.detail}`);
        why = (e as Error).message;
      }
    }
    throw new Error(`gave up reconnecting after ${this.reconnect.attempts} attempts (${why})`);
  }

  private fail(why: string, cause?: Error): void {
    if (this.failure) return;
    this.failure = why;
    this.cause = cause;
    this.done = true;
    this.wake?.();
    if (this.token) this.options.onConnection?.("failed", why);
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

  /** One more credit; while reconnecting it is counted, and the Resume asks for it. */
  private grantCredit(): void {
    if (this.failure || this.closed) return;
    this.granted++;
    if (this.client.state === "open") this.client.send({ frame: { case: "credit", value: { credits: 1 } } });
  }

  /**
   * The next offer for any op, in the ops' order, once one has arrived (taking it grants a
   * credit); undefined once no more will come. Rejects with what ended the session early, or
   * when nothing arrives for `idleMs`.
   */
  async nextOffer(idleMs: number): Promise<{ key: string; offer: KernelOffer } | undefined> {
    for (;;) {
      for (const key of this.queues.keys()) {
        const offer = this.take(key);
        if (offer) return { key, offer };
      }
      if (this.failure) throw this.cause ?? new Error(this.failure);
      if (this.closed) throw new Error("the session was closed");
      if (this.done) return undefined;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no offer for ${idleMs} ms`)), idleMs);
        this.wake = () => { clearTimeout(timer); this.wake = undefined; resolve(); };
      });
    }
  }

  /** Sends the device's microbenchmark for the fleet's primitive table; resolves when the gateway stored it. */
  async microbench(result: MessageInitShape<typeof MicrobenchSchema>): Promise<void> {
    const client = await this.link;
    const acked = client.next("microbenchAck");
    client.send({ frame: { case: "microbench", value: result } });
    await acked;
  }

  /** Whether no more offers will come for an op (every planned offer sent, or the session ended). */
  exhausted(key: string): boolean {
    return this.done && (this.queues.get(key)?.length ?? 0) === 0 && (this.local.get(key)?.length ?? 0) === 0;
  }

  /** Waits before the `attempt`-th try again: the base delay doubled per attempt, up to the most, then a random 50–100 % of it. */
  private backoff(attempt: number): Promise<void> {
    const ceiling = Math.min(this.reconnect.maxDelayMs, this.reconnect.baseDelayMs * 2 ** attempt);
    return new Promise((r) => setTimeout(r, ceiling * (0.5 + Math.random() / 2)));
  }

  /**
   * Sends an op's report; resolves when acknowledged, rejects with the gateway's reason. A report
   * whose connection drops before its acknowledgement is sent again once the session resumed; one
   * the gateway could not store now (`UNAVAILABLE`: the broker did not take it; `QUOTA_EXCEEDED`)
   * is sent again after a backoff, as many times as a reconnect is tried. Closes the session
   * after the last one.
   */
  report(op: OpSpec, ranked: MessageInitShape<typeof RankedKernelSchema>[],
    initial?: { kernel: MessageInitShape<typeof RankedKernelSchema>; fromZoo: boolean }): Promise<void> {
    const sent = this.reporting.then(async () => {
      try {
        for (let refusals = 0; ; ) {
          if (this.failure) throw new Error(this.failure);
          const client = await this.link;
          try {
            const acked = client.next("reportAck");
            client.send({ frame: { case: "report", value: { op, ranked, initial: initial?.kernel, initialFromZoo: initial?.fromZoo ?? false } } });
            await acked;
            return;
          } catch (e) {
            if (e instanceof GatewayError && RETRIED_REPORT_ERRORS.has(e.gatewayCode) && refusals < this.reconnect.attempts && !this.closed) {
              this.log(`  report of ${opKey(op)} not stored (${e.detail}); sending it again`);
              await this.backoff(refusals++);
              continue;
            }
            if (!(e instanceof ConnectionClosed) || this.failure) throw e;
          }
        }
      } finally {
        if (--this.reportsLeft === 0) this.close();
      }
    });
    this.reporting = sent.catch(() => undefined);
    return sent;
  }

  close(): void {
    this.closed = true;
    this.wake?.();
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

/**
 * Asks the gateway for the uKernel plan of each dynamic MatMul, one at a time, over as few
 * connections as its limit allows. An op the gateway cannot plan (refused, or the space down) is
 * left out of the map, with the reason logged; an unreachable gateway leaves the map empty, and
 * so does `signal` aborted before the answers (its connection closed).
 */
export async function requestPlans(url: string, device: DeviceProfile, matmuls: readonly DynamicMatmul[], options: ClientOptions = {},
  log: (line: string) => void = () => undefined, signal?: AbortSignal): Promise<Map<DynamicMatmul, DynamicPlan>> {
  const plans = new Map<DynamicMatmul, DynamicPlan>();
  for (let i = 0; i < matmuls.length && !signal?.aborted; i += PlanLimit.REQUESTS_PER_CONNECTION) {
    const client = createClient(url, options);
    const abort = () => client.close();
    signal?.addEventListener("abort", abort);
    try {
      await client.ready();
      for (const m of matmuls.slice(i, i + PlanLimit.REQUESTS_PER_CONNECTION)) {
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
      log(`  uKernel plans not served (${signal?.aborted ? "no longer asked for" : (e as Error).message})`);
      break;
    } finally {
      signal?.removeEventListener("abort", abort);
      client.close();
    }
  }
  return plans;
}
