import { existsSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { sql } from "drizzle-orm";
import { resultRows } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";
import { type AppServer, DIST_DIR, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";

// The "one step" property over HTTP: 200 parallel reservations split across two app processes on
// two ports, sharing one database, against a remaining budget of 50, admit exactly 50.
//
// Why here and how: Playwright has already built the app (webServer, dist folder .next-e2e) before
// any test runs, so this suite reuses that production build and starts two more `next start`
// processes on free ports against a database of its own (createTestDatabase), leaving the e2e
// database untouched. Two processes need a real Postgres (an embedded database allows one), so
// without TEST_DATABASE_URL this is skipped, except on CI where hasTestDatabase() fails the run.

const REQUESTS = 200;
const BUDGET = 50;

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
    await db.insert(ceilings).values({
      endpointId: endpoint.id,
      metric: "units",
      scope: "global",
      window: "utc_day",
      value: BUDGET,
      minValue: 0,
      maxValue: BUDGET,
      defaultValue: BUDGET,
    });
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
