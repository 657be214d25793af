import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Db, openPostgres, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { analyzeYoungTables } from "@/lib/enforcement/young-tables";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";

// reserve_batch's probes by key (the batch's idempotency keys, its counters) are planned once a
// session (generic plans) and kept until the table's size is next recorded. One made while the
// table is young is made for its size (through another index that leads with the probe's first
// column, or a sequential scan), and kept as the table grows it scans every reservation of an
// endpoint, or every counter of a limit's window, for every batch. The worker analyzes a young
// table at each doubling (analyze_young_tables), which makes every session plan again; this follows
// one session's plans through that, and the app role (which owns nothing) doing it.

const KEY_PROBE = `prepare key_probe(int, text, text) as
  select * from reservations rr where rr.endpoint_id = $1 and rr.caller = $2 and rr.idempotency_key = $3`;
const COUNTER_PROBE = `prepare counter_probe(int, text, timestamptz) as
  select * from counters u where u.limit_id = $1 and u.scope_key = $2 and u.window_start = $3 for update`;

/** The index a prepared probe's plan scans now (or the plan, when it scans none). */
async function probeIndex(db: Db, execute = "execute key_probe(1, 'acct', 'key')"): Promise<string> {
  const plan = resultRows<{ "QUERY PLAN": string }>(await db.execute(sql.raw(`explain ${execute}`)))
    .map((r) => r["QUERY PLAN"])
    .join("\n");
  return /Index Scan using (\w+)/.exec(plan)?.[1] ?? plan;
}

async function addReservations(db: Db, endpointId: number, count: number): Promise<void> {
  await db.execute(sql`
    insert into reservations (id, endpoint_id, caller, amount, idempotency_key, charges, expires_at)
    select gen_random_uuid(), ${endpointId}, 'acct_' || (g % 50), 1, gen_random_uuid()::text, '{}', now() + interval '5 minutes'
    from generate_series(1, ${count}) g`);
}

/** Autovacuum would analyze the tables on its own round: it is the worker's doing measured here. */
async function withoutAutovacuum(db: Db): Promise<void> {
  await db.execute(sql`alter table reservations set (autovacuum_enabled = false)`);
  await db.execute(sql`alter table counters set (autovacuum_enabled = false)`);
}

/** A never-analyzed reservations table of `count` rows on a new endpoint (the endpoint's id). */
async function youngReservations(db: Db, count: number): Promise<number> {
  await withoutAutovacuum(db);
  await db.execute(sql`truncate reservations`);
  const e = await makeEndpoint(db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
  await addReservations(db, e.endpointId, count);
  return e.endpointId;
}

/** One session that makes generic plans, as reserve_batch's sessions do, with `prepare` made in it. */
async function withGenericSession(url: string, prepare: string | string[], run: (session: Db) => Promise<void>): Promise<void> {
  const session = openPostgres(url, { max: 1 });
  try {
    await session.db.execute(sql`set plan_cache_mode = force_generic_plan`);
    for (const statement of [prepare].flat()) await session.db.execute(sql.raw(statement));
    await run(session.db);
  } finally {
    await session.close();
  }
}

describe.skipIf(skipWithoutDatabase())("young tables' statistics", () => {
  const t = useTestDatabase("young_tables");

  it("are taken at each doubling, by the app role, and a session's plan made on 100 rows probes the key's index once the table is 10,000", async () => {
    expect(await analyzeYoungTables(t.db)).toEqual([]); // empty
    // A canary: the same probe on a copy of the table, grown alongside it and never analyzed. Only
    // something that resets every plan of the session (a backend that fell behind on the shared
    // invalidation queue while other suites migrate their databases) makes it plan again; then
    // this attempt says nothing about what growth alone does, and it is made again.
    await t.ownerDb.execute(sql`create table if not exists young_canary (like reservations including all)`);
    await t.ownerDb.execute(sql`alter table young_canary set (autovacuum_enabled = false)`);
    await t.ownerDb.execute(sql`grant select on young_canary to public`);
    const growCanary = (count: number) =>
      t.ownerDb.execute(sql`
        insert into young_canary (id, endpoint_id, caller, amount, idempotency_key, charges, expires_at)
        select gen_random_uuid(), 1, 'acct_' || (g % 50), 1, gen_random_uuid()::text, '{}', now() + interval '5 minutes'
        from generate_series(1, ${count}) g`);
    const canaryProbe = "execute canary_probe(1, 'acct', 'key')";
    const prepare = [KEY_PROBE, KEY_PROBE.replace("key_probe", "canary_probe").replace("from reservations", "from young_canary")];
    let resets = 0;
    for (;;) {
      await t.ownerDb.execute(sql`truncate young_canary`);
      await growCanary(100);
      const endpointId = await youngReservations(t.ownerDb, 100);
      let reset = false;
      await withGenericSession(t.url, prepare, async (session) => {
        const young = await probeIndex(session);
        expect(young).not.toBe("reservations_idempotency_idx");
        const youngCanary = await probeIndex(session, canaryProbe);
        expect(youngCanary).not.toMatch(/idempotency/);

        // Grown a hundredfold with no statistics recorded: the session still runs its young plan.
        await addReservations(t.ownerDb, endpointId, 9_900);
        await growCanary(9_900);
        const grown = await probeIndex(session);
        if ((await probeIndex(session, canaryProbe)) !== youngCanary) {
          reset = true;
          return;
        }
        expect(grown).toBe(young);

        // The worker's job: the table has doubled since its size was last recorded (never).
        expect(await analyzeYoungTables(t.db)).toEqual(["reservations"]);
        expect(await probeIndex(session)).toBe("reservations_idempotency_idx");
        // Not again until it doubles once more; not at all once it is 10,000 rows or more.
        expect(await analyzeYoungTables(t.db)).toEqual([]);
        await addReservations(t.ownerDb, endpointId, 20_000);
        expect(await analyzeYoungTables(t.db)).toEqual([]);
        expect(await probeIndex(session)).toBe("reservations_idempotency_idx");
      });
      if (!reset) break;
      resets += 1;
      expect(resets, "the session's plans were reset in three attempts: nothing here says what growth alone does").toBeLessThan(3);
    }
  });

  it("analyzes a table of 200 rows never analyzed, not after 50 more, and again once it has doubled", async () => {
    const endpointId = await youngReservations(t.ownerDb, 200);
    expect(await analyzeYoungTables(t.db)).toEqual(["reservations"]);
    const recorded = async () =>
      Number(resultRows<{ n: number }>(await t.ownerDb.execute(sql`select reltuples::int as n from pg_class where relname = 'reservations'`))[0]?.n);
    expect(await recorded()).toBe(200);
    await addReservations(t.ownerDb, endpointId, 50);
    expect(await analyzeYoungTables(t.db)).toEqual([]);
    await addReservations(t.ownerDb, endpointId, 400);
    expect(await analyzeYoungTables(t.db)).toEqual(["reservations"]);
    expect(await recorded()).toBe(650);
  });

  it("gives a session's counter lock, planned on a new database's empty counters, the counters' key once a limit's window has 20,000", async () => {
    const e = await makeEndpoint(t.ownerDb, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 1_000 }] });
    const [limit] = resultRows<{ id: number }>(await t.ownerDb.execute(sql`select limit_id as id from ceilings where endpoint_id = ${e.endpointId}`));
    await withoutAutovacuum(t.ownerDb);
    await withGenericSession(t.url, COUNTER_PROBE, async (session) => {
      const lock = `execute counter_probe(${limit?.id ?? 0}, 'acct_1', date_trunc('day', now()))`;
      const young = await probeIndex(session, lock);
      expect(young).not.toBe("counters_limit_id_scope_key_window_start_pk");

      // One counter an account: a per-caller ceiling's window after 20,000 accounts called.
      await t.ownerDb.execute(sql`
        insert into counters (limit_id, scope_key, window_start, window_end)
        select ${limit?.id ?? 0}, 'acct_' || g, date_trunc('day', now()), date_trunc('day', now()) + interval '1 day'
        from generate_series(1, 20000) g`);
      expect(await probeIndex(session, lock)).toBe(young);
      expect(await analyzeYoungTables(t.db)).toContain("counters");
      expect(await probeIndex(session, lock)).toBe("counters_limit_id_scope_key_window_start_pk");
    });
  });

  it("skips a table another session holds (a VACUUM, an index build) rather than wait, and analyzes it the next time", async () => {
    await youngReservations(t.ownerDb, 300);
    await t.ownerDb.transaction(async (tx) => {
      // What VACUUM and CREATE INDEX CONCURRENTLY take; ANALYZE conflicts with it.
      await tx.execute(sql`lock table reservations in share update exclusive mode`);
      const started = performance.now();
      expect(await analyzeYoungTables(t.db)).toEqual([]);
      expect(performance.now() - started).toBeLessThan(1_000);
    });
    expect(await analyzeYoungTables(t.db)).toEqual(["reservations"]);
  });
});
