import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": import.meta.dirname } },
  test: {
    environment: "node",
    include: ["**/*.test.ts", "**/*.test.tsx"],
    exclude: ["e2e/**", "node_modules/**", ".next*/**", ".data*/**", "playwright-report/**", "test-results/**"],
    // Each integration suite opens its own pool (12 connections by default, see db/testing.ts):
    // two workers keep the sum far below Postgres's 100 connections, with room for the e2e server.
    maxWorkers: 2,
    // Integration suites create and migrate a database before their first test.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["./db/testing-global-setup.ts"],
  },
});
