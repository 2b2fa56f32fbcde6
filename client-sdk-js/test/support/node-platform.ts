// The tests import the SDK's sources directly, not through the package's Node entry: install what
// that entry installs (ws, the core count, the engine, kernel threads) before each test file.
import { nodeThread } from "../../src/node-platform.js";
import { usePlatform } from "../../src/platform.js";

// A worker thread runs JavaScript, not the TypeScript sources: kernel threads run the built script.
usePlatform({ thread: () => nodeThread(new URL("../../dist/node-thread.js", import.meta.url)) });
