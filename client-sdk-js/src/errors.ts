import { ErrorCode } from "./gen/jitzoo/gateway/v1/gateway_pb.js";

/**
 * What went wrong, the same in every SDK error, for a `switch` in the app:
 * - `connect_failed`: the gateway could not be reached ({@link ConnectError});
 * - `connection_closed`: the WebSocket closed ({@link ConnectionClosed});
 * - `gateway_refused`: the gateway refused a frame ({@link GatewayError});
 * - `model_invalid`: a model or its inputs cannot be run ({@link ModelError});
 * - `kernel_invalid`: a kernel's bytes or ABI are wrong ({@link KernelError});
 * - `worker_failed`: the model's Worker could not start or died ({@link WorkerError}).
 * An aborted call rejects with its signal's reason (an `AbortError` DOMException unless given another).
 */
export type JitzooErrorCode = "connect_failed" | "connection_closed" | "gateway_refused" | "model_invalid" | "kernel_invalid" | "worker_failed";

/** The base of every error the SDK throws, with a {@link JitzooErrorCode}. */
export class JitzooError extends Error {
  constructor(readonly code: JitzooErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JitzooError";
  }
}

/** An Error frame from the gateway. Fatal ones are followed by a close with the same reason. */
export class GatewayError extends JitzooError {
  /**
   * @param gatewayCode - the gateway's error code (e.g. `ErrorCode.RESUME_REJECTED`)
   * @param detail - the gateway's message
   */
  constructor(readonly gatewayCode: ErrorCode, readonly detail: string) {
    super("gateway_refused", `gateway error ${ErrorCode[gatewayCode] ?? gatewayCode}: ${detail}`);
    this.name = "GatewayError";
  }
}

/** The WebSocket closed. `closeCode` is the close code (1000 normal, 1006 abnormal, 1007/1008 refused frames). */
export class ConnectionClosed extends JitzooError {
  /**
   * @param closeCode - the WebSocket close code
   * @param reason - the close reason, possibly empty
   */
  constructor(readonly closeCode: number, readonly reason: string) {
    super("connection_closed", `connection closed (${closeCode}${reason ? `: ${reason}` : ""})`);
    this.name = "ConnectionClosed";
  }
}

/** The gateway could not be reached (refused, unresolvable, or no answer in time). */
export class ConnectError extends JitzooError {
  /**
   * @param url - the gateway address tried
   * @param why - what went wrong
   */
  constructor(readonly url: string, why: string) {
    super("connect_failed", `cannot connect to ${url}: ${why}`);
    this.name = "ConnectError";
  }
}

/** A kernel that cannot run: not Wasm, no ABI section, wrong exports or operands. */
export class KernelError extends JitzooError {
  constructor(message: string) {
    super("kernel_invalid", message);
    this.name = "KernelError";
  }
}

/** The Worker a model runs in could not start, or failed. */
export class WorkerError extends JitzooError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("worker_failed", message, options);
    this.name = "WorkerError";
  }
}
