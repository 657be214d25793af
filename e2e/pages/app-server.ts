import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { freePort } from "@/db/embedded/server";

export { freePort };

// More app processes for suites that need a database of their own (an empty catalog, a race over
// two processes): Playwright has built the app (webServer, dist folder .next-e2e) before any test
// runs, so these reuse that production build with `next start` on free ports.

export const DIST_DIR = ".next-e2e"; // NEXT_DIST_DIR of the webServer in playwright.config.ts

export type AppServer = { url: string; child: ChildProcess; output: () => string };

export function startServer(port: number, databaseUrl: string): AppServer {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [path.join("node_modules", "next", "dist", "bin", "next"), "start", "--hostname", "127.0.0.1", "--port", String(port)],
    {
      env: {
        // The child needs this process's whole environment (PATH, HOME), with its own database on top.
        // eslint-disable-next-line no-restricted-syntax
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        NEXT_DIST_DIR: DIST_DIR,
        NEXTAUTH_URL: url,
        NEXTAUTH_SECRET: "e2e-only-secret-0123456789abcdefghijklmnopqrstuvwxyz",
        DB_POOL_MAX: "3",
        ENFORCEMENT_POOL_MAX: "4",
        // A patient deadline: this test is about exactness, and a loaded two-core machine must not
        // turn grants into "unavailable" refusals.
        ENFORCEMENT_DEADLINE_MS: "20000",
        ENFORCEMENT_STATEMENT_TIMEOUT_MS: "15000",
        ENFORCEMENT_LOCK_TIMEOUT_MS: "15000",
      },
      // Its own process group, so stopping it also stops anything it started.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { url, child, output: () => output };
}

/**
 * The enforcement API server (`npm run api`) on `port`, on the e2e database: E2E_DATABASE_URL's,
 * or without it the embedded server of the e2e run (DATA_DIR .data-e2e).
 */
export function startApiProcess(port: number): AppServer {
  const url = `http://127.0.0.1:${port}`;
  // The child needs this process's environment (PATH, HOME), with the e2e database on top; set
  // by playwright.config.ts for the workers.
  // eslint-disable-next-line no-restricted-syntax
  const { DATABASE_URL: _unused, E2E_DATABASE_URL: e2eUrl, ...inherited } = process.env;
  const database = e2eUrl ? { DATABASE_URL: e2eUrl } : { DATA_DIR: ".data-e2e" };
  const child = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "api.ts")], {
    env: { ...inherited, ...database, NODE_ENV: "production", API_PORT: String(port), API_HOST: "127.0.0.1" },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { url, child, output: () => output };
}

/**
 * The worker (`npm run worker`) on the e2e database, as startApiProcess starts the API: for tests
 * of what the worker does by itself (a temporary raise ending, a schedule running). Its output
 * shows when it has started its loop.
 */
export function startWorkerProcess(name: string, extraEnv: Record<string, string> = {}): AppServer {
  // eslint-disable-next-line no-restricted-syntax
  const { DATABASE_URL: _unused, E2E_DATABASE_URL: e2eUrl, ...inherited } = process.env;
  const database = e2eUrl ? { DATABASE_URL: e2eUrl } : { DATA_DIR: ".data-e2e" };
  const child = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "worker.ts")], {
    env: { ...inherited, ...database, NODE_ENV: "production", WORKER_NAME: name, ...extraEnv },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { url: "", child, output: () => output };
}

export async function waitHealthy(server: AppServer, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server ${server.url} exited:\n${server.output()}`);
    try {
      if ((await fetch(`${server.url}/api/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server ${server.url} did not become healthy:\n${server.output()}`);
}

export async function stopServer(server: AppServer): Promise<void> {
  const pid = server.child.pid;
  if (pid === undefined || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  process.kill(-pid, "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (server.child.exitCode === null) process.kill(-pid, "SIGKILL");
}
