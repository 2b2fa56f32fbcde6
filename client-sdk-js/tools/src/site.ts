// A local web server for the browser bench and the demo: the SDK's single-file build, its model
// worker and kernel thread, the page helpers (seeded feeds, the error measure, medians, the probe: the SDK's
// own, from its internal entry), onnxruntime-web's wasm build, ONNX models, and the pages given.
// Same origin for all, so a page loads everything it needs from it, cross-origin isolated.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** dist/ of the SDK (this file is tools/dist/site.js, or tools/src/site.ts under a test runner). */
export const DIST = resolve(dirname(fileURLToPath(import.meta.url)), "../../dist");
/** onnxruntime-web's dist/ folder, where ort.wasm.min.mjs finds its .wasm. */
const ORT_DIST = dirname(createRequire(import.meta.url).resolve("onnxruntime-web"));

const TYPES: Record<string, string> = {
  ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html; charset=utf-8",
  ".onnx": "application/octet-stream", ".json": "application/json", ".css": "text/css",
};

/**
 * Cross-origin isolation (every resource is same-origin, so nothing else needs to opt in): it gives
 * pages SharedArrayBuffer, so a model's kernels may run on threads.
 */
const ISOLATED = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

/** What a site serves beyond the SDK and onnxruntime-web. */
export interface SiteContent {
  /** ONNX files by name, served at /models/NAME. */
  models: Record<string, string>;
  /** Pages and assets by path (`/` included), as text. */
  pages: Record<string, string>;
}

export interface Site {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (`port` 0: any free one); `isolated` serves every page cross-origin isolated. */
export async function serveSite(content: SiteContent, port = 0, { isolated = false } = {}): Promise<Site> {
  const headers = isolated ? ISOLATED : {};
  const fixed: Record<string, string> = {
    "/browser/jitzoo.js": join(DIST, "browser/jitzoo.js"),
    "/browser/worker.js": join(DIST, "browser/worker.js"),
    "/browser/thread.js": join(DIST, "browser/thread.js"),
  };
  for (const [name, file] of Object.entries(content.models)) fixed[`/models/${name}`] = file;
  const helpers = await pageHelpers();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    try {
      let body: string | Buffer;
      if (content.pages[path] !== undefined) body = content.pages[path];
      else if (path === "/browser/helpers.js") body = helpers;
      else if (fixed[path]) body = readFileSync(fixed[path]);
      else if (path.startsWith("/ort/")) {
        const file = normalize(join(ORT_DIST, path.slice(5)));
        if (!file.startsWith(ORT_DIST)) throw new Error("outside onnxruntime-web");
        body = readFileSync(file);
      } else {
        res.writeHead(404, { "content-type": "text/plain" }).end(`${path}: not here`);
        return;
      }
      const type = TYPES[extname(path)] ?? (path.endsWith("/") ? TYPES[".html"] : "application/octet-stream");
      res.writeHead(200, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" }).end(`${path}: not found`);
    }
  });
  await new Promise<void>((r, reject) => server.once("error", reject).listen(port, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    server,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Where Chromium is: $JITZOO_CHROMIUM, else Debian's. */
export const chromiumPath = () => process.env.JITZOO_CHROMIUM ?? "/usr/bin/chromium";

/** What a page's `globalThis.jitzoo` is: the public API and the page helpers. */
export type PageSdk = typeof import("@jitzoo/client") & Pick<typeof import("@jitzoo/client/internal"),
  "feedsFor" | "maxRelativeError" | "median" | "probeFeatures" | "decodeModel" | "decoderLayout" | "generateTokens" | "runUntil" | "runUntilServed" | "genericModuleBytes">;

/** What pages get beside the public API: the SDK's own helpers, bundled from its internal entry. */
async function pageHelpers(): Promise<string> {
  const result = await build({
    stdin: { contents: `export { feedsFor, maxRelativeError, median, probeFeatures, decodeModel, decoderLayout, generateTokens, runUntil, runUntilServed, genericModuleBytes } from "./internal.js";`, loader: "js", resolveDir: DIST },
    bundle: true, format: "esm", write: false, logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/**
 * The module script that loads the SDK's single-file build with the page helpers
 * (globalThis.jitzoo) and onnxruntime-web's wasm build, one thread (globalThis.ort, and
 * globalThis.toOrt: the SDK's feeds as its tensors), then sets globalThis.ready.
 */
export const SDK_LOADER = `<script type="module">
import * as sdk from "/browser/jitzoo.js";
import * as helpers from "/browser/helpers.js";
import * as ort from "/ort/ort.wasm.min.mjs";
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = "/ort/";
ort.env.logLevel = "error";
// the SDK's feeds (float32, or int64 as BigInt64Array) as onnxruntime-web's tensors
const toOrt = (feeds) => Object.fromEntries(Object.entries(feeds).map(([name, t]) =>
  [name, new ort.Tensor(t.data instanceof Float32Array ? "float32" : "int64", t.data, [...t.dims])]));
Object.assign(globalThis, { jitzoo: { ...sdk, ...helpers }, ort, toOrt, ready: true });
</script>`;

/** A page with nothing but the SDK and onnxruntime-web loaded ({@link SDK_LOADER}). */
export const SDK_PAGE = `<!doctype html><meta charset="utf-8"><title>jitzoo</title>\n${SDK_LOADER}`;
