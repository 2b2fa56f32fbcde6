// Starts the model worker. At the package's root on purpose: `./worker.js` beside this module is
// dist/worker.js in the package and dist/browser/worker.js beside the single-file build, and
// bundlers (Vite, webpack) see `new Worker(new URL(..., import.meta.url))` and bundle the worker.

/** A module Worker running the SDK's worker entry (worker.ts), or the script at `url`. */
export function startModelWorker(url?: string | URL): Worker {
  if (url) return new Worker(url, { type: "module", name: "jitzoo" });
  return new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "jitzoo" });
}
