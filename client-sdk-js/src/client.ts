import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ClientFrameSchema,
  ErrorCode,
  ServerFrameSchema,
  type KernelOffer,
  type OffersDone,
  type ReportAck,
  type Welcome,
} from "./gen/jitzoo/gateway/v1/gateway_pb.js";

/** An Error frame from the gateway. */
export class GatewayError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(`${ErrorCode[code] ?? code}: ${message}`);
    this.name = "GatewayError";
  }
}

/** The connection closed; `code` is the WebSocket close code. */
export class ConnectionClosed extends Error {
  constructor(readonly code: number, readonly reason: string) {
    super(`connection closed (${code}${reason ? `: ${reason}` : ""})`);
    this.name = "ConnectionClosed";
  }
}

/** Events a client emits, with their payloads. */
export interface ClientEvents {
  welcome: Welcome;
  offer: KernelOffer;
  offersDone: OffersDone;
  reportAck: ReportAck;
  error: GatewayError;
  close: ConnectionClosed;
}

type Listener<T> = (value: T) => void;
type ClientFrameInit = MessageInitShape<typeof ClientFrameSchema>;

/** The minimal WebSocket surface used here: the browser's, or the `ws` package's in Node. */
interface SocketLike {
  binaryType: string;
  readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** A session with the gateway. Create it with {@link createClient}. */
export interface JitzooClient {
  /** Resolves once connected; at once when already connected. */
  ready(): Promise<void>;
  /** Sends one ClientFrame. */
  send(frame: ClientFrameInit): void;
  on<E extends keyof ClientEvents>(event: E, listener: Listener<ClientEvents[E]>): void;
  off<E extends keyof ClientEvents>(event: E, listener: Listener<ClientEvents[E]>): void;
  /** The next `event`; rejects with the connection's close if it comes first. */
  once<E extends keyof ClientEvents>(event: E): Promise<ClientEvents[E]>;
  close(): void;
}

async function openSocket(url: string): Promise<SocketLike> {
  const native = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (native) return new native(url);
  const { default: WebSocket } = await import("ws");
  return new WebSocket(url) as unknown as SocketLike;
}

/** Creates a client for the gateway at `url` (e.g. ws://127.0.0.1:8080/v1/session). Connects lazily. */
export function createClient(url: string): JitzooClient {
  const listeners = new Map<keyof ClientEvents, Set<Listener<never>>>();
  let closed: ConnectionClosed | undefined;
  let socket: Promise<SocketLike> | undefined;

  const emit = <E extends keyof ClientEvents>(event: E, value: ClientEvents[E]) => {
    for (const l of [...(listeners.get(event) ?? [])]) (l as Listener<ClientEvents[E]>)(value);
  };

  const connect = () =>
    (socket ??= openSocket(url).then(
      (ws) =>
        new Promise<SocketLike>((resolve, reject) => {
          ws.binaryType = "arraybuffer";
          ws.onopen = () => resolve(ws);
          ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
          ws.onclose = (ev) => {
            closed = new ConnectionClosed(ev.code, ev.reason);
            reject(closed);
            emit("close", closed);
          };
          ws.onmessage = (ev) => {
            const frame = fromBinary(ServerFrameSchema, new Uint8Array(ev.data as ArrayBuffer));
            switch (frame.frame.case) {
              case "welcome": return emit("welcome", frame.frame.value);
              case "offer": return emit("offer", frame.frame.value);
              case "offersDone": return emit("offersDone", frame.frame.value);
              case "reportAck": return emit("reportAck", frame.frame.value);
              case "error": return emit("error", new GatewayError(frame.frame.value.code, frame.frame.value.message));
            }
          };
        }),
    ));

  const client: JitzooClient = {
    ready: () => connect().then(() => undefined),
    send(frame) {
      void connect().then((ws) => ws.send(toBinary(ClientFrameSchema, create(ClientFrameSchema, frame))));
    },
    on(event, listener) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(listener as Listener<never>);
    },
    off(event, listener) {
      listeners.get(event)?.delete(listener as Listener<never>);
    },
    once(event) {
      return new Promise((resolve, reject) => {
        if (closed && event !== "close") return reject(closed);
        const done = (value: ClientEvents[typeof event]) => {
          client.off(event, done);
          client.off("close", fail);
          resolve(value);
        };
        const fail = (c: ConnectionClosed) => {
          client.off(event, done);
          client.off("close", fail);
          reject(c);
        };
        client.on(event, done);
        if (event !== "close") client.on("close", fail);
      });
    },
    close() {
      void socket?.then((ws) => ws.close(1000, "done"), () => undefined);
    },
  };
  return client;
}
