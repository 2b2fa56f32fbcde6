// The package in Node: everything the browser entry has, with Node's WebSocket (the `ws` package),
// core count and engine installed. `import "@jitzoo/client"` picks this file in Node (the `node`
// condition) and index.js everywhere else, so browser bundles never see `ws` or `node:os`.
import "./node-platform.js";

export * from "./index.js";
export { usePlatform, type Platform } from "./platform.js";
