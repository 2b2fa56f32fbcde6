import { defineConfig } from "vitest/config";
import { sdkSources } from "./vitest.config.js";

// End-to-end tests against a running suite; they skip unless JITZOO_GATEWAY_URL is set.
export default defineConfig({
  resolve: { alias: sdkSources },
  test: {
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 120_000,
    setupFiles: ["./test/support/node-platform.ts"],
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
