// Starts a kernel thread of a worker pool (threads/pool.ts) in a browser. At the package's root on
// purpose, like worker-start.ts: `./thread.js` beside this module is dist/thread.js in the package
// and dist/browser/thread.js beside the single-file build, and bundlers see the URL and bundle it.
import type { FromHelper } from "./threads/control.js";
import type { ThreadHandle } from "./threads/pool.js";

export function startThread(): ThreadHandle {
  const worker = new Worker(new URL("./thread.js", import.meta.url), { type: "module", name: "jitzoo-kernels" });
  return {
    post: (message) => worker.postMessage(message),
    listen: (handler, onError) => {
      worker.onmessage = (event: MessageEvent<FromHelper>) => handler(event.data);
      worker.onerror = (event) => onError(new Error(event.message || "the kernel thread's script failed to load"));
    },
    terminate: () => worker.terminate(),
  };
}
