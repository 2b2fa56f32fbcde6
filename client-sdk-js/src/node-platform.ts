// Installs what Node gives the SDK that a browser has built in: a WebSocket (the `ws` package), the
// core count, the engine and kernel threads (worker_threads). Imported for its effect by the Node entry (node.ts) and the CLIs.
import { availableParallelism, cpus } from "node:os";
import { Worker } from "node:worker_threads";
import WebSocket from "ws";
import type { SocketConstructor } from "./client.js";
import { usePlatform } from "./platform.js";
import type { FromHelper } from "./threads/control.js";
import type { ThreadHandle } from "./threads/pool.js";

/** A kernel thread on worker_threads, running `script` (node-thread.js beside this module). */
export function nodeThread(script: URL = new URL("./node-thread.js", import.meta.url)): ThreadHandle {
  const worker = new Worker(script);
  worker.unref(); // an idle pool never keeps the process alive
  return {
    post: (message) => worker.postMessage(message),
    listen: (handler, onError) => {
      worker.on("message", (message: FromHelper) => handler(message));
      worker.on("error", onError);
    },
    terminate: () => void worker.terminate(),
  };
}

usePlatform({
  webSocket: () => WebSocket as unknown as SocketConstructor,
  logicalCores: () => (typeof availableParallelism === "function" ? availableParallelism() : cpus().length),
  engine: () => ({ userAgent: `node/${process.version} ${process.platform}-${process.arch}`, arch: process.arch }),
  thread: () => nodeThread(),
});
