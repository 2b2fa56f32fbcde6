// Starts a kernel thread of a worker pool (threads/pool.ts) in a browser. At the package's root on
// purpose, like worker-start.ts: `./thread.js` beside this module is dist/thread.js in the package
// and dist/browser/thread.js beside the single-file build, and bundlers see the URL and bundle it.
import type { FromHelper } from "./threads/control.js";
import type { ThreadHandle } from "./threads/pool.js";

/** The kernel thread's module Worker (thread.ts), not yet told how to talk. */
export function startThreadWorker(): Worker {
  return new Worker(new URL("./thread.js", import.meta.url), { type: "module", name: "jitzoo-kernels" });
}

/** A kernel thread this thread starts and talks to directly (where no page starts them for it). */
export function startThread(): ThreadHandle {
  const worker = startThreadWorker();
  return {
    post: (message) => worker.postMessage(message),
    listen: (handler, onError) => {
      worker.onmessage = (event: MessageEvent<FromHelper>) => handler(event.data);
      worker.onerror = (event) => onError(new Error(event.message || "the kernel thread's script failed to load"));
    },
    terminate: () => worker.terminate(),
  };
}
