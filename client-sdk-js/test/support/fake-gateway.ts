// An in-process stand-in for the gateway: enough of the protocol to drive the tuner in unit tests.
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import {
  ClientFrameSchema, ErrorCode, ServerFrameSchema, type ClientFrame, type DynamicPlanSchema, type PlanRequest, type Report,
} from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import type { KernelArtifact, OpSpec } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";

export interface FakeGatewayOptions {
  /** The Welcome's kernel for each op. */
  initial: (op: OpSpec) => { artifact: KernelArtifact; fromZoo: boolean };
  /** The offers, in order. */
  offers: KernelArtifact[];
  /** How many of the first offers are marked as a similar device's best (the exploitation set); none by default. */
  offersFromZoo?: number;
  /** Close the session (code 1011) after sending this many offers. */
  closeAfterOffers?: number;
  /** Refuse every report with INVALID_REPORT. */
  refuseReports?: boolean;
  /** Drop the connection (no close frame, as a restarted gateway would) after sending this many offers, once. */
  dropAfterOffers?: number;
  /** Answer this many reports with a non-fatal UNAVAILABLE (the broker did not take them) before storing any. */
  unavailableReports?: number;
  /** Drop the connection once, on the first report: stored, its acknowledgement lost. */
  dropOnFirstReport?: boolean;
  /** Refuse every Resume with RESUME_REJECTED. */
  forgetSessions?: boolean;
  /** Hold every Welcome (and what follows it) until {@link FakeGateway.releaseWelcomes}. */
  holdWelcomes?: boolean;
  /** The answer to a PlanRequest; without it every PlanRequest is refused with INVALID_PLAN_REQUEST. */
  plan?: (request: PlanRequest) => MessageInitShape<typeof DynamicPlanSchema>;
  /** Hold every answer to a PlanRequest until {@link FakeGateway.releasePlans}. */
  holdPlans?: boolean;
}

const key = (op: OpSpec | undefined) => `${op?.kind}:${op?.shape.join(",")}`;

/** A session, as the real gateway keeps it across connections (the resume token's). */
interface SessionState {
  credits: number;
  sent: number;
  requested: Set<string>;
  issued: Set<string>;
  reported: Set<string>;
}

export class FakeGateway {
  /** Every frame clients sent, in order. */
  readonly received: ClientFrame[] = [];
  /** Reports stored (a report sent again after a lost acknowledgement is acknowledged, not stored twice). */
  readonly acked: Report[] = [];
  /** Connections opened. */
  connections = 0;
  /** The path and query each connection asked for (its API key included). */
  readonly requested: string[] = [];
  private readonly sessions = new Map<string, SessionState>();
  private dropped = false;
  /** Welcomes held back (see holdWelcomes), to send on release. */
  private held: (() => void)[] | undefined;
  /** Answers to PlanRequests held back (see holdPlans), to send on release. */
  private heldPlans: (() => void)[] | undefined;
  private unavailable = 0;

  private constructor(private readonly server: WebSocketServer, private readonly options: FakeGatewayOptions) {
    if (options.holdWelcomes) this.held = [];
    if (options.holdPlans) this.heldPlans = [];
    server.on("connection", (ws, request) => {
      this.requested.push(request.url ?? "");
      this.serve(ws);
    });
  }

  static async start(options: FakeGatewayOptions): Promise<FakeGateway> {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    return new FakeGateway(server, options);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/session`;
  }

  /** Sends the answers to PlanRequests held so far, and every later one at once. */
  releasePlans(): void {
    const held = this.heldPlans ?? [];
    this.heldPlans = undefined;
    held.forEach((send) => send());
  }

  /** Sends the Welcomes held so far, and every later one at once. */
  releaseWelcomes(): void {
    const held = this.held ?? [];
    this.held = undefined;
    held.forEach((send) => send());
  }

  /** Shuts down as the gateway drains: Goaway to every client, then close 1001. */
  drain(reason: string): void {
    for (const ws of this.server.clients) {
      ws.send(toBinary(ServerFrameSchema, create(ServerFrameSchema, { frame: { case: "goaway", value: { reason } } })));
      ws.close(1001, reason);
    }
  }

  async stop(): Promise<void> {
    for (const ws of this.server.clients) ws.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(ws: WebSocket): void {
    const send = (frame: MessageInitShape<typeof ServerFrameSchema>) =>
      ws.send(toBinary(ServerFrameSchema, create(ServerFrameSchema, frame)));
    const fail = (code: ErrorCode, message: string, close?: number) => {
      send({ frame: { case: "error", value: { code, message } } });
      if (close) ws.close(close, message);
    };
    this.connections++;
    let s: SessionState | undefined;
    const drop = () => {
      this.dropped = true;
      ws.terminate();
    };
    const pump = () => {
      while (s && s.credits > 0 && s.sent < this.options.offers.length) {
        if (s.sent === this.options.closeAfterOffers) return void ws.close(1011, "the fake gateway gives up");
        if (s.sent === this.options.dropAfterOffers && !this.dropped) return drop();
        const artifact = this.options.offers[s.sent];
        s.issued.add(artifact.ref!.kernelId);
        send({ frame: { case: "offer", value: { artifact, rank: s.sent, fromZoo: s.sent < (this.options.offersFromZoo ?? 0) } } });
        s.sent++;
        s.credits--;
        if (s.sent === this.options.offers.length) send({ frame: { case: "offersDone", value: { offersSent: s.sent } } });
      }
    };

    ws.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) return void ws.close(1003, "binary frames only");
      let frame: ClientFrame;
      try {
        frame = fromBinary(ClientFrameSchema, new Uint8Array(data));
      } catch {
        return fail(ErrorCode.MALFORMED_FRAME, "not a ClientFrame", 1007);
      }
      this.received.push(frame);
      const f = frame.frame;
      if (f.case === "hello") {
        if (!f.value.device?.fingerprint) return fail(ErrorCode.INVALID_HELLO, "device.fingerprint is required", 1008);
        const initial = f.value.ops.map((op) => this.options.initial(op));
        s = { credits: f.value.credits, sent: 0, requested: new Set(f.value.ops.map(key)), issued: new Set(), reported: new Set() };
        initial.forEach((k) => s!.issued.add(k.artifact.ref!.kernelId));
        const token = `token-${this.sessions.size}`;
        this.sessions.set(token, s);
        const welcome = () => {
          send({ frame: { case: "welcome", value: { sessionId: "fake-session", initial, resumeToken: token } } });
          if (this.options.offers.length === 0) send({ frame: { case: "offersDone", value: { offersSent: 0 } } });
          pump();
        };
        if (this.held) this.held.push(welcome);
        else welcome();
      } else if (f.case === "resume") {
        const kept = this.options.forgetSessions ? undefined : this.sessions.get(f.value.token);
        if (!kept) return fail(ErrorCode.RESUME_REJECTED, "unknown or expired resume token");
        s = kept;
        s.credits = f.value.credits;
        send({ frame: { case: "resumed", value: { sessionId: "fake-session" } } });
        if (s.sent === this.options.offers.length) send({ frame: { case: "offersDone", value: { offersSent: s.sent } } });
        pump();
      } else if (f.case === "credit" && s) {
        s.credits += f.value.credits;
        pump();
      } else if (f.case === "report" && s) {
        if (this.options.refuseReports) return fail(ErrorCode.INVALID_REPORT, "reports are refused today");
        if (this.unavailable < (this.options.unavailableReports ?? 0)) {
          this.unavailable++;
          return fail(ErrorCode.UNAVAILABLE, "report not stored, try again later");
        }
        if (!s.requested.has(key(f.value.op))) return fail(ErrorCode.INVALID_REPORT, "op never requested");
        const forged = f.value.ranked.find((r) => !s!.issued.has(r.kernelId));
        if (forged) return fail(ErrorCode.INVALID_REPORT, `kernel ${forged.kernelId} was never offered`);
        if (!s.reported.has(key(f.value.op))) this.acked.push(f.value);
        s.reported.add(key(f.value.op));
        if (this.options.dropOnFirstReport && !this.dropped) return drop();
        send({ frame: { case: "reportAck", value: { op: f.value.op } } });
      } else if (f.case === "planRequest") {
        if (!this.options.plan) return fail(ErrorCode.INVALID_PLAN_REQUEST, "the fake gateway plans nothing");
        const answer = () => send({ frame: { case: "dynamicPlan", value: this.options.plan!(f.value) } });
        if (this.heldPlans) this.heldPlans.push(answer);
        else answer();
      } else if (f.case === "microbench") {
        if (f.value.speedups.length === 0) return fail(ErrorCode.INVALID_MICROBENCH, "no primitive measured");
        send({ frame: { case: "microbenchAck", value: {} } });
      } else {
        fail(ErrorCode.PROTOCOL, "empty frame", 1008);
      }
    });
  }
}
