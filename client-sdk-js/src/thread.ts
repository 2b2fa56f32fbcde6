// A browser kernel thread of a worker pool: threads/helper.ts over the MessagePort its first
// message brings (the model's worker, or the page that started it for that worker, keeps the other end).
import type { ToHelper } from "./threads/control.js";
import { serve } from "./threads/helper.js";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<MessagePort>) => void) | null;
  close(): void;
};
scope.onmessage = ({ data: port }) => {
  scope.onmessage = null;
  serve({
    post: (message) => port.postMessage(message),
    listen: (handler) => { port.onmessage = (event: MessageEvent<ToHelper>) => handler(event.data); },
    close: () => {
      port.close();
      scope.close();
    },
  });
};
