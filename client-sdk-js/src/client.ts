import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError, ConnectionClosed, GatewayError } from "./errors.js";
import { platform } from "./platform.js";
import {
  ClientFrameSchema,
  ServerFrameSchema,
  type DynamicPlan,
  type Goaway,
  type KernelOffer,
  type MicrobenchAck,
  type OffersDone,
  type ReportAck,
  type Resumed,
  type Welcome,
} from "./gen/jitzoo/gateway/v1/gateway_pb.js";

/** Events a client emits, with their payloads. */
export interface ClientEvents {
  /** The gateway's answer to Hello. */
  welcome: Welcome;
  /** A candidate kernel. */
  offer: KernelOffer;
  /** Every planned offer has been sent. */
  offersDone: OffersDone;
  /** A report was accepted. */
  reportAck: ReportAck;
  /** The microbenchmark result was accepted. */
  microbenchAck: MicrobenchAck;
  /** The uKernel plan of a dynamic MatMul (the answer to a PlanRequest). */
  dynamicPlan: DynamicPlan;
  /** The gateway's answer to Resume: the session goes on on this connection. */
  resumed: Resumed;
  /** The gateway is shutting down: it closes the connection (1001) soon; a session resumes on a new one. */
  goaway: Goaway;
  /** An Error frame. */
  error: GatewayError;
  /** The connection closed (always the last event). */
  close: ConnectionClosed;
}

/** A name of a {@link ClientEvents} event. */
export type ClientEvent = keyof ClientEvents;

/** A callback for one event. */
export type Listener<E extends ClientEvent> = (value: ClientEvents[E]) => void;

/** What {@link JitzooClient.send} takes: a ClientFrame in protobuf-es init form. */
export type ClientFrameInit = MessageInitShape<typeof ClientFrameSchema>;

/** Where a client stands. */
export type ClientState = "idle" | "connecting" | "open" | "closed";

/** The WebSocket surface the client needs: the browser's, or the `ws` package's in Node. */
export interface SocketLike {
  binaryType: string;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** A WebSocket constructor. */
export type SocketConstructor = new (url: string) => SocketLike;

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The WebSocket implementation; default: the global `WebSocket`, else the `ws` package. */
  WebSocket?: SocketConstructor;
  /** Give up connecting after this long (default 10 000 ms). */
  connectTimeoutMs?: number;
  /**
   * The tenant's API key (`./jitzoo tenant create`), sent as the session URL's `key` parameter:
   * required where the gateway requires keys, and it works only from the tenant's page Origins.
   * Error messages name the gateway's address without it.
   */
  apiKey?: string;
}

/** A session with the gateway. Create it with {@link createClient}. */
export interface JitzooClient {
  /** The gateway address. */
  readonly url: string;
  /** Where the connection stands. */
  readonly state: ClientState;
  /** Connects if not yet connecting; resolves once open (at once when already open). */
  ready(): Promise<void>;
  /**
   * Sends one ClientFrame, connecting first if needed (frames keep their order).
   * @throws ConnectionClosed when the connection has already closed
   */
  send(frame: ClientFrameInit): void;
  /** Calls `listener` on every `event`; returns a function that cancels the subscription. */
  on<E extends ClientEvent>(event: E, listener: Listener<E>): () => void;
  /** Cancels a subscription made with {@link JitzooClient.on}. */
  off<E extends ClientEvent>(event: E, listener: Listener<E>): void;
  /** The next `event`; rejects with {@link ConnectionClosed} if the connection closes first. */
  once<E extends ClientEvent>(event: E): Promise<ClientEvents[E]>;
  /**
   * The next `event`, rejecting with the {@link GatewayError} or {@link ConnectionClosed} that
   * comes first: the way to await the answer to a request.
   */
  next<E extends Exclude<ClientEvent, "error" | "close">>(event: E): Promise<ClientEvents[E]>;
  /** Closes the connection (normal closure unless told otherwise). */
  close(code?: number, reason?: string): void;
}

/** Creates a client for the gateway at `url` (e.g. `ws://127.0.0.1:8080/v1/session`). Connects lazily. */
export function createClient(url: string, options: ClientOptions = {}): JitzooClient {
  return new GatewayClient(url, options);
}

const NORMAL_CLOSURE = 1000;
const INVALID_PAYLOAD = 1007;

async function socketConstructor(url: string, options: ClientOptions): Promise<SocketConstructor> {
  if (options.WebSocket) return options.WebSocket;
  const native = (globalThis as { WebSocket?: SocketConstructor }).WebSocket;
  if (native) return native;
  const installed = platform().webSocket;
  if (installed) return installed();
  throw new ConnectError(url, "no WebSocket here: in Node, import the package as \"@jitzoo/client\" (its node entry brings ws), or pass options.WebSocket");
}

/** The session URL with the API key as its `key` parameter (replacing one it has). */
function withKey(url: string, apiKey: string | undefined): string {
  if (!apiKey) return url;
  const u = new URL(url);
  u.searchParams.set("key", apiKey);
  return u.toString();
}

/** The bytes of a binary message (ArrayBuffer, or a view such as a Node Buffer); null for text. */
function asBytes(data: unknown): Uint8Array | null {
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Object.prototype.toString.call(data) === "[object ArrayBuffer]") return new Uint8Array(data as ArrayBuffer);
  return null;
}

class GatewayClient implements JitzooClient {
  state: ClientState = "idle";
  private readonly listeners = new Map<ClientEvent, Set<Listener<never>>>();
  private socket?: Promise<SocketLike>;
  private closed?: ConnectionClosed;

  constructor(readonly url: string, private readonly options: ClientOptions) {}

  ready(): Promise<void> {
    return this.connect().then(() => undefined);
  }

  send(frame: ClientFrameInit): void {
    if (this.closed) throw this.closed;
    const bytes = toBinary(ClientFrameSchema, create(ClientFrameSchema, frame));
    // A failed connect is reported by ready() and the close event, not here.
    this.connect().then((ws) => ws.send(bytes), () => undefined);
  }

  on<E extends ClientEvent>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<E extends ClientEvent>(event: E, listener: Listener<E>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  once<E extends ClientEvent>(event: E): Promise<ClientEvents[E]> {
    return this.waitFor(event, false);
  }

  next<E extends Exclude<ClientEvent, "error" | "close">>(event: E): Promise<ClientEvents[E]> {
    return this.waitFor(event, true);
  }

  close(code = NORMAL_CLOSURE, reason = "done"): void {
    this.socket?.then((ws) => ws.close(code, reason), () => undefined);
  }

  private waitFor<E extends ClientEvent>(event: E, failOnError: boolean): Promise<ClientEvents[E]> {
    if (this.closed) {
      return event === "close" ? Promise.resolve(this.closed as ClientEvents[E]) : Promise.reject(this.closed);
    }
    return new Promise((resolve, reject) => {
      const cancels: (() => void)[] = [];
      const settle = (fn: () => void) => {
        cancels.forEach((cancel) => cancel());
        fn();
      };
      cancels.push(this.on(event, (value) => settle(() => resolve(value))));
      if (event !== "close") cancels.push(this.on("close", (c) => settle(() => reject(c))));
      if (failOnError) cancels.push(this.on("error", (e) => settle(() => reject(e))));
    });
  }

  private emit<E extends ClientEvent>(event: E, value: ClientEvents[E]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) (listener as Listener<E>)(value);
  }

  private connect(): Promise<SocketLike> {
    if (this.closed) return Promise.reject(this.closed);
    this.socket ??= socketConstructor(this.url, this.options).then((Socket) => this.open(Socket));
    return this.socket;
  }

  private open(Socket: SocketConstructor): Promise<SocketLike> {
    this.state = "connecting";
    return new Promise<SocketLike>((resolve, reject) => {
      let ws: SocketLike;
      try {
        ws = new Socket(withKey(this.url, this.options.apiKey));
      } catch (e) {
        this.finish(new ConnectionClosed(1006, "invalid address"));
        return reject(new ConnectError(this.url, (e as Error).message));
      }
      const timer = setTimeout(() => {
        reject(new ConnectError(this.url, `no answer within ${this.connectTimeoutMs()} ms`));
        ws.close();
      }, this.connectTimeoutMs());
      ws.binaryType = "arraybuffer";
      ws.onopen = () => {
        clearTimeout(timer);
        this.state = "open";
        resolve(ws);
      };
      ws.onerror = (ev) => {
        clearTimeout(timer);
        reject(new ConnectError(this.url, (ev as { message?: string }).message || "connection failed"));
      };
      ws.onclose = (ev) => {
        clearTimeout(timer);
        const closed = new ConnectionClosed(ev.code, ev.reason);
        reject(closed);
        this.finish(closed);
      };
      ws.onmessage = (ev) => this.receive(ws, ev.data);
    });
  }

  private receive(ws: SocketLike, data: unknown): void {
    const bytes = asBytes(data);
    if (!bytes) {
      ws.close(INVALID_PAYLOAD, "the gateway sent a text frame");
      return;
    }
    let frame;
    try {
      frame = fromBinary(ServerFrameSchema, bytes);
    } catch {
      ws.close(INVALID_PAYLOAD, "the gateway sent a malformed frame");
      return;
    }
    const f = frame.frame;
    switch (f.case) {
      case "welcome": return this.emit("welcome", f.value);
      case "offer": return this.emit("offer", f.value);
      case "offersDone": return this.emit("offersDone", f.value);
      case "reportAck": return this.emit("reportAck", f.value);
      case "microbenchAck": return this.emit("microbenchAck", f.value);
      case "dynamicPlan": return this.emit("dynamicPlan", f.value);
      case "resumed": return this.emit("resumed", f.value);
      case "goaway": return this.emit("goaway", f.value);
      case "error": return this.emit("error", new GatewayError(f.value.code, f.value.message));
      default: return; // a frame kind newer than this SDK
    }
  }

  private finish(closed: ConnectionClosed): void {
    if (this.closed) return;
    this.closed = closed;
    this.state = "closed";
    this.emit("close", closed);
  }

  private connectTimeoutMs(): number {
    return this.options.connectTimeoutMs ?? 10_000;
  }
}
