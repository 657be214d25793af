import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openPostgres, resultRows } from "@/db/client";
import { CuttableProxy } from "@/db/cuttable-proxy";
import { SilentHost } from "@/db/silent-host";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { batcherFor, reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { makeEndpoint } from "./test-fixtures";

// A host in the URL that accepts TCP and never answers (a machine that died silently) costs
// reservations nothing: the primary is found by whichever host answers first, and no connection
// is left behind on the server or on the silent host, even for pools destroyed while they connect.

function withHosts(base: string, hosts: string): string {
  const schemeEnd = base.indexOf("://") + 3;
  const authority = base.slice(schemeEnd).split(/[/?]/)[0] ?? "";
  const at = authority.lastIndexOf("@");
  return `${base.slice(0, schemeEnd)}${at >= 0 ? authority.slice(0, at + 1) : ""}${hosts}${base.slice(schemeEnd + authority.length)}`;
}

const hostOf = (url: string) => (url.slice(url.indexOf("://") + 3).split(/[/?]/)[0] ?? "").split("@").pop() ?? "";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skipWithoutDatabase())("a silent host in a multi-host URL", () => {
  const t = useTestDatabase("silent_host", { max: 2 });
  const silent = new SilentHost();
  let silentPort = 0;

  beforeAll(async () => {
    silentPort = await silent.listen();
  });
  afterAll(async () => {
    await silent.close();
  });

  /** Backends of this database with one of `apps` as application_name. */
  async function connections(apps: string[]): Promise<number> {
    const rows = resultRows<{ n: number }>(
      await t.db.execute(sql`select count(*)::int as n from pg_stat_activity
        where datname = ${t.name} and application_name in (select jsonb_array_elements_text(${JSON.stringify(apps)}::jsonb))`),
    );
    return rows[0]?.n ?? 0;
  }

  /** Waits up to `ms` for `count` to reach `want`; returns the last count seen. */
  async function settlesTo(want: number, ms: number, count: () => Promise<number>): Promise<number> {
    const until = Date.now() + ms;
    let n = await count();
    while (n !== want && Date.now() < until) {
      await sleep(100);
      n = await count();
    }
    return n;
  }

  it("grants reservations within the deadline, and leaves no connection behind", async () => {
    const app = "silent-host-test";
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    // The silent host first: a picker that waits for every host never gets past it in time.
    const url = withHosts(t.url, `127.0.0.1:${silentPort},${hostOf(t.url)}`);
    const deadlineMs = 2000;
    // The enforcement pool's settings (db/client.ts openConfigured).
    const pool: Database = openPostgres(url, {
      max: 4,
      connectTimeoutSeconds: 2,
      connection: { application_name: app, statement_timeout: 1500, lock_timeout: 1000, idle_in_transaction_session_timeout: 10_000 },
    });
    batcherFor(pool.db, { deadlineMs, maxInFlight: 2, maxBatch: 64 });
    const before = await connections([app, "ceilings-primary-probe"]);
    const requests = 40;
    const answers: { status: string; ms: number }[] = [];
    try {
      // 8 callers, 5 reservations each, each settled or released: lanes for both are opened on
      // the way (every new connection is a pick).
      await Promise.all(
        Array.from({ length: 8 }, async (_, caller) => {
          for (let i = 0; i < requests / 8; i++) {
            const started = Date.now();
            const d = await reserve(pool.db, { endpoint: e.key, amount: 1, caller: `c${caller}` });
            answers.push({ status: d.status, ms: Date.now() - started });
            if (d.status !== "granted") continue;
            const r =
              i % 2 === 0
                ? await settleReservation(pool.db, { reservationId: d.reservationId, actual: 1 })
                : await releaseReservation(pool.db, { reservationId: d.reservationId });
            expect(r.status === "settled" || r.status === "released").toBe(true);
          }
        }),
      );
    } finally {
      await pool.close();
    }
    const granted = answers.filter((a) => a.status === "granted");
    expect(granted.length).toBeGreaterThanOrEqual(Math.ceil(requests * 0.9));
    expect(Math.max(...granted.map((a) => a.ms))).toBeLessThan(deadlineMs);
    // Nothing orphaned: every connection the pool or its probes opened is gone, on both hosts.
    expect(await settlesTo(before, 3000, () => connections([app, "ceilings-primary-probe"]))).toBe(before);
    expect(await settlesTo(0, 3000, () => Promise.resolve(silent.open.size))).toBe(0);
  });

  it("leaves nothing connected when the pool is destroyed while it picks a host or connects", async () => {
    const app = "abandoned-pick-test";
    // A slow path to the server (every chunk 60 ms late, both ways): a pick and a connection's
    // start-up each take a few hundred ms, so a destroy lands in the middle of one of them.
    const server = hostOf(t.url);
    const slow = new CuttableProxy({ host: server.split(":")[0] ?? "127.0.0.1", port: Number(server.split(":")[1] ?? 5432) }, 60);
    const port = await slow.listen();
    try {
      const url = withHosts(t.url, `127.0.0.1:${silentPort},127.0.0.1:${port}`);
      for (const destroyAfterMs of [20, 150, 300, 450, 600, 800]) {
        const pool = openPostgres(url, { max: 1, connectTimeoutSeconds: 2, fetchTypes: false, connection: { application_name: app } });
        const query = pool.db.execute(sql`select 1`).then(
          () => "answered",
          () => "failed",
        );
        await sleep(destroyAfterMs);
        await pool.destroy?.();
        await query;
      }
      expect(await settlesTo(0, 3000, () => connections([app]))).toBe(0);
      expect(await settlesTo(0, 3000, () => Promise.resolve(silent.open.size))).toBe(0);
    } finally {
      // The proxy's close waits for its connections: bounded, so that an orphan fails the
      // assertion above instead of hanging the suite.
      await Promise.race([slow.close(), sleep(1000)]);
    }
  });
});
