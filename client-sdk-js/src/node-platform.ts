// Installs what Node gives the SDK that a browser has built in: a WebSocket (the `ws` package), the
// core count and the engine. Imported for its effect by the Node entry (node.ts) and the CLIs.
import { availableParallelism, cpus } from "node:os";
import WebSocket from "ws";
import type { SocketConstructor } from "./client.js";
import { usePlatform } from "./platform.js";

usePlatform({
  webSocket: () => WebSocket as unknown as SocketConstructor,
  logicalCores: () => (typeof availableParallelism === "function" ? availableParallelism() : cpus().length),
  engine: () => ({ userAgent: `node/${process.version} ${process.platform}-${process.arch}`, arch: process.arch }),
});
