// A browser kernel thread of a worker pool: threads/helper.ts on the worker's own scope, or on a
// MessagePort when the page started it for the model's worker (its first message is then the port).
import type { ToHelper } from "./threads/control.js";
import { serve } from "./threads/helper.js";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ToHelper | { type: "port"; port: MessagePort }>) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
};
scope.onmessage = ({ data: first }) => {
  if (first.type === "port") {
    const port = first.port;
    serve({
      post: (message) => port.postMessage(message),
      listen: (handler) => { port.onmessage = (event: MessageEvent<ToHelper>) => handler(event.data); },
      close: () => { port.close(); scope.close(); },
    });
    return;
  }
  serve({
    post: (message) => scope.postMessage(message),
    listen: (handler) => {
      scope.onmessage = (event) => handler(event.data as ToHelper);
      handler(first);
    },
    close: () => scope.close(),
  });
};
