import { ErrorCode } from "./gen/jitzoo/gateway/v1/gateway_pb.js";

/** An Error frame from the gateway. Fatal ones are followed by a close with the same reason. */
export class GatewayError extends Error {
  /**
   * @param code - the gateway's error code
   * @param detail - the gateway's message
   */
  constructor(readonly code: ErrorCode, readonly detail: string) {
    super(`gateway error ${ErrorCode[code] ?? code}: ${detail}`);
    this.name = "GatewayError";
  }
}

/** The WebSocket closed. `code` is the close code (1000 normal, 1006 abnormal, 1007/1008 refused frames). */
export class ConnectionClosed extends Error {
  /**
   * @param code - the WebSocket close code
   * @param reason - the close reason, possibly empty
   */
  constructor(readonly code: number, readonly reason: string) {
    super(`connection closed (${code}${reason ? `: ${reason}` : ""})`);
    this.name = "ConnectionClosed";
  }
}

/** The gateway could not be reached (refused, unresolvable, or no answer in time). */
export class ConnectError extends Error {
  /**
   * @param url - the gateway address tried
   * @param why - what went wrong
   */
  constructor(readonly url: string, why: string) {
    super(`cannot connect to ${url}: ${why}`);
    this.name = "ConnectError";
  }
}
