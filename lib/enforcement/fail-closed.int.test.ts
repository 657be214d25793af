import net from "node:net";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { SilentHost } from "@/db/silent-host";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { batcherFor, reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { counterTotals, countRows, makeEndpoint } from "./test-fixtures";
import { unavailableCounts } from "./unavailable";

// Every way the database can fail to answer must end in a refusal with gate `unavailable`, within
// the deadline, and never in an exception. A dead database is simulated with a closed port or a
// proxy that swallows the connection, never by stopping the shared server.

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe.skipIf(skipWithoutDatabase())("fail closed", () => {
  const t = useTestDatabase("failclosed", { max: 4 });
  let key: string;
  let ceilingId: number;

  beforeAll(async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    key = e.key;
    ceilingId = e.ceilingIds[0] ?? 0;
  });

  it("refuses as unavailable when nothing listens on the database port", async () => {
    const dead = openPostgres(`postgres://postgres@127.0.0.1:${await closedPort()}/x`, { max: 2, connectTimeoutSeconds: 1 });
    try {
      const before = unavailableCounts().connection;
      const { value, ms } = await timed(() => reserve(dead.db, { endpoint: key, amount: 1 }));
      expect(value).toMatchObject({ status: "refused", gate: "unavailable" });
      expect(ms).toBeLessThan(2_500);
      expect(unavailableCounts().connection).toBe(before + 1);
    } finally {
      await dead.close();
    }
  });

  it("says a settle or release that never reached the database was not applied", async () => {
    const dead = openPostgres(`postgres://postgres@127.0.0.1:${await closedPort()}/x`, { max: 2, connectTimeoutSeconds: 1 });
    const reservationId = "00000000-0000-4000-8000-000000000000";
    try {
      expect(await settleReservation(dead.db, { reservationId, actual: 1 })).toMatchObject({
        status: "unavailable",
        reason: "connection",
        mayHaveApplied: false,
      });
      expect(await releaseReservation(dead.db, { reservationId })).toMatchObject({ status: "unavailable", reason: "connection", mayHaveApplied: false });
    } finally {
      await dead.close();
    }
  });

  it("refuses within the deadline when the connection hangs (a cut proxy)", async () => {
    const blackHole = new SilentHost();
    const port = await blackHole.listen();
    const hung = openPostgres(`postgres://postgres@127.0.0.1:${port}/x`, { max: 2, connectTimeoutSeconds: 30 });
    batcherFor(hung.db, { deadlineMs: 2_000 });
    try {
      const { value, ms } = await timed(() => reserve(hung.db, { endpoint: key, amount: 1 }));
      expect(value).toMatchObject({ status: "refused", gate: "unavailable" });
      expect(ms).toBeGreaterThanOrEqual(1_900);
      expect(ms).toBeLessThan(2_500);
    } finally {
      await blackHole.close();
      await hung.close().catch(() => undefined);
    }
  });

  it("refuses on a lock wait longer than the lock timeout, and logs the refusal", async () => {
    const bounded = openPostgres(t.url, { max: 2, connection: { lock_timeout: 300, statement_timeout: 1_500 } });
    const holder = openPostgres(t.url, { max: 1 });
    try {
      expect((await reserve(t.db, { endpoint: key, amount: 1 })).status).toBe("granted");
      let release: () => void = () => undefined;
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`select * from counters where limit_id = (select limit_id from ceilings where id = ${ceilingId}) for update`);
        await new Promise<void>((r) => (release = r));
      });
      await new Promise((r) => setTimeout(r, 100));
      const { value, ms } = await timed(() => reserve(bounded.db, { endpoint: key, amount: 1, requestId: "lock-test" }));
      release();
      await held;
      expect(value).toMatchObject({ status: "refused", gate: "unavailable" });
      expect(ms).toBeLessThan(2_000);
      // The database answered again, so the refusal is stored like any other (best effort, async).
      await expect.poll(() => countRows(t.db, sql`select count(*) as n from refusals where gate = 'unavailable' and request_id = 'lock-test'`)).toBe(1);
      expect(await counterTotals(t.db, ceilingId)).toEqual({ held: 1, settled: 0 });
    } finally {
      await bounded.close();
      await holder.close();
    }
  });

  it("keeps no grant after the caller was refused at the deadline: cancelled, or given back", async () => {
    const slow = openPostgres(t.url, { max: 2 });
    batcherFor(slow.db, { deadlineMs: 300 });
    const holder = openPostgres(t.url, { max: 1 });
    try {
      const before = await counterTotals(t.db, ceilingId);
      let release: () => void = () => undefined;
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`select * from counters where limit_id = (select limit_id from ceilings where id = ${ceilingId}) for update`);
        await new Promise<void>((r) => (release = r));
      });
      await new Promise((r) => setTimeout(r, 100));
      const decision = await reserve(slow.db, { endpoint: key, amount: 5 });
      expect(decision).toMatchObject({ status: "refused", gate: "unavailable" });
      release();
      await held;
      // The statement is cancelled at the deadline; one that committed first is released.
      await expect.poll(() => countRows(t.db, sql`select count(*) as n from reservations where amount = 5 and state <> 'released'`)).toBe(0);
      await expect.poll(() => counterTotals(t.db, ceilingId)).toEqual(before);
    } finally {
      await slow.close();
      await holder.close();
    }
  });

  it("refuses when the configuration is missing (a database without the enforcement functions)", async () => {
    const empty = await createTestDatabase("unmigrated", { max: 2, migrate: false });
    try {
      expect(await reserve(empty.db, { endpoint: key, amount: 1 })).toMatchObject({ status: "refused", gate: "unavailable" });
      expect(resultRows(await empty.db.execute(sql`select 1 as ok`))).toHaveLength(1);
    } finally {
      await empty.drop();
    }
  });
});

describe.skipIf(skipWithoutDatabase())("bounded refusal logging", () => {
  const t = useTestDatabase("refusal_log", { max: 6 });

  it("folds a flood of identical refusals into rows with a count", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 0 }] });
    const flood = await Promise.all(
      Array.from({ length: 500 }, (_, i) => reserve(t.db, { endpoint: e.key, amount: 1, destination: i % 2 ? "bot@x.com" : "BOT@x.com" })),
    );
    expect(flood.every((d) => d.status === "refused" && d.gate === "kill_switch")).toBe(true);
    const rows = resultRows<{ n: number; total: number }>(
      await t.db.execute(sql`select count(*)::int as n, sum(count)::int as total from refusals where endpoint_key = ${e.key}`),
    );
    expect(rows[0]?.total).toBe(500);
    // One row per 10-second bucket: a run that straddles a bucket edge makes two.
    expect(rows[0]?.n).toBeLessThanOrEqual(2);
  });

  it("keeps different callers and gates apart", async () => {
    const e = await makeEndpoint(t.db, {
      perCallMax: 2,
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 1 }],
    });
    await reserve(t.db, { endpoint: e.key, amount: 1, caller: "a" });
    await Promise.all([
      reserve(t.db, { endpoint: e.key, amount: 1, caller: "a" }),
      reserve(t.db, { endpoint: e.key, amount: 1, caller: "a" }),
      reserve(t.db, { endpoint: e.key, amount: 3, caller: "b" }),
    ]);
    const rows = resultRows<{ gate: string; caller: string; count: number }>(
      await t.db.execute(sql`select gate, caller, count from refusals where endpoint_key = ${e.key} order by gate::text, caller`),
    );
    expect(rows).toEqual([
      { gate: "ceiling", caller: "a", count: 2 },
      { gate: "per_call_max", caller: "b", count: 1 },
    ]);
  });
});
