import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { sql } from "drizzle-orm";
import { resultRows } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";

// The "one step" property over HTTP: 200 parallel reservations split across two app processes on
// two ports, sharing one database, against a remaining budget of 50, admit exactly 50.
//
// Why here and how: Playwright has already built the app (webServer, dist folder .next-e2e) before
// any test runs, so this suite reuses that production build and starts two more `next start`
// processes on free ports against a database of its own (createTestDatabase), leaving the e2e
// database untouched. Two processes need a real Postgres (an embedded database allows one), so
// without TEST_DATABASE_URL this is skipped, except on CI where hasTestDatabase() fails the run.

const DIST_DIR = ".next-e2e"; // NEXT_DIST_DIR of the webServer in playwright.config.ts
const REQUESTS = 200;
const BUDGET = 50;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

type AppServer = { url: string; child: ChildProcess; output: () => string };

function startServer(port: number, databaseUrl: string): AppServer {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join("node_modules", "next", "dist", "bin", "next"), "start", "--hostname", "127.0.0.1", "--port", String(port)], {
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
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { url, child, output: () => output };
}

async function waitHealthy(server: AppServer, timeoutMs = 60_000): Promise<void> {
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

async function stopServer(server: AppServer): Promise<void> {
  const pid = server.child.pid;
  if (pid === undefined || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  process.kill(-pid, "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (server.child.exitCode === null) process.kill(-pid, "SIGKILL");
}

test.describe("HTTP reservations from two app processes", () => {
  test.skip(!hasTestDatabase(), "two app processes need a shared Postgres: set TEST_DATABASE_URL");

  let t: TestDatabase | undefined;
  const servers: AppServer[] = [];

  test.afterAll(async () => {
    await Promise.all(servers.map(stopServer));
    await t?.drop();
  });

  test(`${REQUESTS} parallel POSTs over two processes against a remaining ${BUDGET}: exactly ${BUDGET} x 201 and ${REQUESTS - BUDGET} x 429`, async () => {
    test.setTimeout(180_000);
    expect(existsSync(path.join(DIST_DIR, "BUILD_ID")), `the e2e production build in ${DIST_DIR} (made by the webServer) is missing`).toBe(true);
    t = await createTestDatabase("api_two_processes", { max: 2 });
    const db = t.db;
    const [endpoint] = await db.insert(endpoints).values({ key: "race.http", name: "HTTP race", unit: "units", perCallMax: 10 }).returning();
    if (!endpoint) throw new Error("no endpoint");
    await db.insert(ceilings).values({ endpointId: endpoint.id, metric: "units", scope: "global", window: "utc_day", value: BUDGET, minValue: 0, maxValue: BUDGET, defaultValue: BUDGET });
    // Two keys of one account, one per process: the quota follows the account.
    const keys = await Promise.all(
      ["one", "two"].map((name) =>
        createApiKey(db, { name, binding: { kind: "account", account: "acct_race" }, endpointKeys: ["race.http"], actor: { type: "system", name: "e2e" } }),
      ),
    );

    const ports = [await freePort(), await freePort()];
    for (const port of ports) servers.push(startServer(port, t.url));
    await Promise.all(servers.map((s) => waitHealthy(s)));
    // Warm each process's route and pools so the race measures the database, not a cold start.
    for (const [i, s] of servers.entries()) {
      const warm = await fetch(`${s.url}/api/v1/endpoints/race.http`, { headers: { authorization: `Bearer ${keys[i]?.secret}` } });
      expect(warm.status).toBe(200);
    }

    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const server = servers[i % 2];
        const response = await fetch(`${server?.url}/api/v1/reservations`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys[i % 2]?.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ endpoint: "race.http", amount: 1 }),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const tally = statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    expect(tally).toEqual({ 201: BUDGET, 429: REQUESTS - BUDGET });

    const [row] = resultRows<{ held: string; reservations: string }>(
      await t.db.execute(sql`select coalesce(sum(held), 0) as held, (select count(*) from reservations) as reservations from usage`),
    );
    expect({ held: Number(row?.held), reservations: Number(row?.reservations) }).toEqual({ held: BUDGET, reservations: BUDGET });
    // Both processes read the same counters.
    for (const [i, s] of servers.entries()) {
      const status = await fetch(`${s.url}/api/v1/endpoints/race.http`, { headers: { authorization: `Bearer ${keys[i]?.secret}` } });
      expect(await status.json()).toMatchObject({ ceilings: [{ value: BUDGET, used: BUDGET, remaining: 0 }] });
    }
  });
});
