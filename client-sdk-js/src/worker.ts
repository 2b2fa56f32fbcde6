// The SDK's worker entry: runs a model (WasmModel) for a page's WorkerModel, so that kernel
// timing, checking and the reference run here and never on the page's thread. Started by
// worker-start.ts; speaks worker-protocol.ts.
import type { WasmModel } from "./wasm/model.js";
import { loadModel } from "./load.js";
import { usePlatform } from "./platform.js";
import { threadOverPort } from "./thread-start.js";
import type { ThreadHandle } from "./threads/pool.js";
import { LOAD, MODEL_EVENTS, postedError, type FromWorker, type ToWorker } from "./model/worker-protocol.js";

const scope = globalThis as unknown as {
  onmessage: ((ev: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  dispatchEvent(event: Event): boolean;
};
const post = (message: FromWorker, transfer: Transferable[] = []) => scope.postMessage(message, transfer);

/** What each kernel thread the page started for this worker does when it fails, by id. */
const threadFailures = new Map<number, (error: Error) => void>();
let nextThread = 1;

/** A kernel thread the page starts (this worker never starts a Worker itself), reached over a MessagePort. */
function threadFromPage(): ThreadHandle {
  const id = nextThread++;
  const { port1, port2 } = new MessageChannel();
  post({ type: "thread", id, port: port2 }, [port2]);
  return threadOverPort(port1, () => {
    threadFailures.delete(id);
    post({ type: "thread-stop", id });
  }, (failed) => threadFailures.set(id, failed));
}
usePlatform({ thread: threadFromPage });

let model: Promise<WasmModel> | undefined;
/** The generations under way, by id: aborted when the page asks. */
const generations = new Map<number, AbortController>();

scope.onmessage = ({ data: message }) => {
  switch (message.type) {
    case "load": {
      const { keep, log, ...options } = message.options;
      model = loadModel(message.source, {
        ...options, worker: false, store: keep ? undefined : null, log: log ? (line) => post({ type: "log", line }) : undefined,
      }) as Promise<WasmModel>; // worker: false is a WasmModel
      model.then((m) => {
        for (const event of MODEL_EVENTS) m.on(event, (payload) => post({ type: "event", event, payload }));
        post({ type: "loaded", inputs: [...m.inputs], outputNames: m.outputNames, stats: m.stats() });
      }, (e) => post({ type: "failed", id: LOAD, error: postedError(e) }));
      return;
    }
    case "run": {
      const id = message.id;
      // the outputs go to the page at once; this run's tuning follows, then the stats as of it
      model!.then(async (m) => {
        await m.runThenTune(message.feeds, (outputs) => {
          post({ type: "result", id, outputs, stats: m.stats() }, Object.values(outputs).map((o) => o.data.buffer as ArrayBuffer));
        });
        post({ type: "stats", stats: m.stats() });
      }).catch((e) => post({ type: "failed", id, error: postedError(e) }));
      return;
    }
    case "close": {
      const id = message.id;
      model!.then((m) => m.close().then(() => post({ type: "closed", id, stats: m.stats() })))
        .catch((e) => post({ type: "failed", id, error: postedError(e) }));
      return;
    }
    case "generate": {
      const id = message.id, controller = new AbortController();
      generations.set(id, controller);
      model!.then(async (m) => {
        try {
          const result = await m.generate(message.prompt, {
            ...message.options, signal: controller.signal, onToken: (token, index) => post({ type: "token", id, token, index }),
          });
          post({ type: "generated", id, result, stats: m.stats() });
        } catch (e) {
          post({ type: "stats", stats: m.stats() }); // as of the failure (an aborted call's cache freed), before it is told
          throw e;
        } finally {
          generations.delete(id);
        }
      }).catch((e) => post({ type: "failed", id, error: postedError(e) }));
      return;
    }
    case "abort": {
      const reason = new DOMException(message.reason.message, message.reason.name === "AbortError" ? "AbortError" : message.reason.name);
      generations.get(message.id)?.abort(reason);
      return;
    }
    case "thread-failed":
      threadFailures.get(message.id)?.(new Error(message.message));
      return;
    case "pagehide":
      // the page is going away: the model's own pagehide handling reports what every op timed
      scope.dispatchEvent(new Event("pagehide"));
      return;
  }
};
