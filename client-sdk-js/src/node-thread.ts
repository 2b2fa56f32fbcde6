// A Node kernel thread of a worker pool: threads/helper.ts on worker_threads' parent port.
import { parentPort } from "node:worker_threads";
import type { ToHelper } from "./threads/control.js";
import { serve } from "./threads/helper.js";

if (!parentPort) throw new Error("node-thread.js runs as a worker thread of a jitzoo worker pool");
const port = parentPort;
serve({
  post: (message) => port.postMessage(message),
  listen: (handler) => port.on("message", (message: ToHelper) => handler(message)),
  close: () => port.close(),
});
