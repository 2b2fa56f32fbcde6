import { defineConfig } from "vitest/config";

// Unit tests: no servers needed. The end-to-end tests have their own config (vitest.e2e.config.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "**/node_modules/**"],
    testTimeout: 30_000,
    setupFiles: ["./test/support/node-platform.ts"],
  },
});
