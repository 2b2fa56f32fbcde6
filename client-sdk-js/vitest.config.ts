import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** The tools (tools/src) import the SDK by its name; under test they get its sources, as the tests do. */
export const sdkSources = [
  { find: /^@jitzoo\/client$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) },
  { find: /^@jitzoo\/client\/internal$/, replacement: fileURLToPath(new URL("./src/internal.ts", import.meta.url)) },
  { find: /^@jitzoo\/client\/node$/, replacement: fileURLToPath(new URL("./src/node.ts", import.meta.url)) },
];

// Unit tests: no servers needed. The end-to-end tests have their own config (vitest.e2e.config.ts).
export default defineConfig({
  resolve: { alias: sdkSources },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "**/node_modules/**"],
    testTimeout: 30_000,
    setupFiles: ["./test/support/node-platform.ts"],
  },
});
