import { existsSync } from "node:fs";
import { defineConfig, devices } from "@playwright/test";
import { isCi } from "./lib/ci";

// e2e runs a production build on its own port, dist folder and database, so it passes while the
// dashboard of `npm run demo` is up on port 3000. Playwright starts webServer BEFORE globalSetup
// (plugin setup precedes global setup in 1.65), so the database is prepared by the server script
// itself: scripts/e2e-server.sh.

// E2E_PORT and E2E_DATABASE_NAME let two checkouts run their e2e suites side by side.
const PORT = Number(process.env.E2E_PORT ?? 3100);
export const E2E_BASE_URL = `http://127.0.0.1:${PORT}`;
export const E2E_METRICS_TOKEN = "e2e-only-metrics-token-0123456789";

function chromiumExecutable(): string | undefined {
  const configured = process.env.PLAYWRIGHT_CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`PLAYWRIGHT_CHROMIUM_PATH=${configured} does not exist`);
    return configured;
  }
  // npm test sets PLAYWRIGHT_CHROMIUM_PATH (scripts/find-chromium.ts); run directly, Debian's
  // chromium if present, else Playwright's own browser.
  return existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined;
}

/** With TEST_DATABASE_URL, e2e gets database ceilings_e2e on that server; else an embedded server in .data-e2e. */
function e2eDatabaseUrl(): string {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return "";
  const url = new URL(server);
  url.pathname = `/${process.env.E2E_DATABASE_NAME ?? "ceilings_e2e"}`;
  return url.toString();
}

const ci = isCi(process.env.CI);

// Exported to the test workers too, for tests that read the e2e database directly.
process.env.E2E_DATABASE_URL = e2eDatabaseUrl();

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  forbidOnly: ci,
  // One retry: a run lost to one slow moment on a shared 2-core machine lands nothing. A test that
  // passes only on its retry is named as flaky in npm test's closing lines (scripts/test-counts.mjs).
  retries: 1,
  timeout: 30_000,
  // The JSON report feeds the test counts that scripts/test.sh prints last.
  reporter: [["list"], ["html", { open: "never", outputFolder: "playwright-report" }], ["json", { outputFile: ".test-reports/playwright.json" }]],
  use: {
    baseURL: E2E_BASE_URL,
    screenshot: "on",
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "chromium",
      use: {
        ...devices["Desktop Chrome"],
        launchOptions: {
          executablePath: chromiumExecutable(),
          args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
        },
      },
    },
  ],
  webServer: {
    command: "bash scripts/e2e-server.sh",
    url: `${E2E_BASE_URL}/api/health`,
    // A production build takes 30-100 s on two busy cores, a fresh embedded database up to 15 s more.
    timeout: 480_000,
    // A server already on the port would be tested instead of this code: refuse it.
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    env: {
      E2E_PORT: String(PORT),
      E2E_DATABASE_URL: process.env.E2E_DATABASE_URL,
      DATA_DIR: ".data-e2e",
      NEXT_DIST_DIR: ".next-e2e",
      NEXTAUTH_URL: E2E_BASE_URL,
      // A fixed secret for the test server only; never used anywhere else.
      NEXTAUTH_SECRET: "e2e-only-secret-0123456789abcdefghijklmnopqrstuvwxyz",
      // Small pools: the e2e server shares the Postgres server with the integration suites.
      // The e2e metrics spec reads /api/metrics with it.
      METRICS_TOKEN: E2E_METRICS_TOKEN,
      // The reconciliation spec saves an API source at the fake provider's loopback address: the
      // dashboard refuses to save a key's host that is neither the provider's nor allow-listed.
      USAGE_SOURCE_ALLOW_HOSTS: "127.0.0.1",
      DB_POOL_MAX: "5",
      ENFORCEMENT_POOL_MAX: "4",
    },
  },
});
