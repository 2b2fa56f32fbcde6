// Starts a kernel thread of a worker pool (threads/pool.ts) in a browser. At the package's root on
// purpose, like worker-start.ts: `./thread.js` beside this module is dist/thread.js in the package
// and dist/browser/thread.js beside the single-file build, and bundlers see the URL and bundle it.
// A kernel thread talks over a MessagePort only, whoever started it: the model's worker itself, or
// the page for it (worker-model.ts).
import type { FromHelper } from "./threads/control.js";
import type { ThreadHandle } from "./threads/pool.js";

/** A kernel thread's module Worker (thread.ts), given its end of the channel it talks over. */
export function startThreadWorker(port: MessagePort): Worker {
  const worker = new Worker(new URL("./thread.js", import.meta.url), { type: "module", name: "jitzoo-kernels" });
  worker.postMessage(port, [port]);
  return worker;
}

/**
 * The pool's handle on a kernel thread, over this side's end of its channel: `stop` ends the
 * thread, `onFailure` is given what to call when the thread fails.
 */
export function threadOverPort(port: MessagePort, stop: () => void, onFailure: (failed: (error: Error) => void) => void): ThreadHandle {
  return {
    post: (message) => port.postMessage(message),
    listen: (handler, onError) => {
      port.onmessage = (event: MessageEvent<FromHelper>) => handler(event.data);
      onFailure(onError);
    },
    terminate: () => {
      port.close();
      stop();
    },
  };
}

/** A kernel thread this thread starts itself (where no page starts them for it). */
export function startThread(): ThreadHandle {
  const { port1, port2 } = new MessageChannel();
  const worker = startThreadWorker(port2);
  return threadOverPort(port1, () => worker.terminate(), (failed) => {
    worker.onerror = (event) => failed(new Error(event.message || "the kernel thread's script failed to load"));
  });
}
