// A browser kernel thread of a worker pool: threads/helper.ts on the worker's own scope.
import type { ToHelper } from "./threads/control.js";
import { serve } from "./threads/helper.js";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToHelper>) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
};
serve({
  post: (message) => scope.postMessage(message),
  listen: (handler) => { scope.onmessage = (event) => handler(event.data); },
  close: () => scope.close(),
});
