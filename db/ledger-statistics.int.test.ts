import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Db, openPostgres, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { analyzeYoungLedger } from "@/lib/enforcement/ledger-statistics";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";

// reserve_batch's probe of the batch's idempotency keys is planned once a session (a generic plan)
// and kept until the table's size is next recorded. One made while the table is young is made for
// its size (through the endpoint's history index, or a sequential scan), and kept as the table
// grows it scans every reservation of the endpoint for every keyed batch. The worker analyzes a
// young table at each doubling (analyze_young_ledger), which makes every session plan again; this
// follows one session's plan through that, and the app role (which owns nothing) doing it.

const PROBE = `prepare ledger_probe(int, text, text) as
  select * from reservations rr where rr.endpoint_id = $1 and rr.caller = $2 and rr.idempotency_key = $3`;

/** The index the prepared probe's plan scans now (or the plan, when it scans none). */
async function probeIndex(db: Db): Promise<string> {
  const plan = resultRows<{ "QUERY PLAN": string }>(await db.execute(sql.raw(`explain execute ledger_probe(1, 'acct', 'key')`)))
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

describe.skipIf(skipWithoutDatabase())("a young ledger's statistics", () => {
  const t = useTestDatabase("young_ledger");

  it("are taken at each doubling, by the app role, and a session's plan made on 100 rows probes the key's index once the table is 10,000", async () => {
    // Autovacuum would analyze this table on its own round: it is the worker's doing measured here.
    await t.ownerDb.execute(sql`alter table reservations set (autovacuum_enabled = false)`);
    const e = await makeEndpoint(t.ownerDb, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const session = openPostgres(t.url, { max: 1 });
    try {
      await session.db.execute(sql`set plan_cache_mode = force_generic_plan`);
      expect(await analyzeYoungLedger(t.db)).toBe(false); // empty

      await addReservations(t.ownerDb, e.endpointId, 100);
      await session.db.execute(sql.raw(PROBE));
      const young = await probeIndex(session.db);
      expect(young).not.toBe("reservations_idempotency_idx");

      // Grown a hundredfold with no statistics recorded: the session still runs its young plan.
      await addReservations(t.ownerDb, e.endpointId, 9_900);
      expect(await probeIndex(session.db)).toBe(young);

      // The worker's job: the table has doubled since its size was last recorded (never).
      expect(await analyzeYoungLedger(t.db)).toBe(true);
      expect(await probeIndex(session.db)).toBe("reservations_idempotency_idx");
      // Not again until it doubles once more; not at all once it is 10,000 rows or more.
      expect(await analyzeYoungLedger(t.db)).toBe(false);
      await addReservations(t.ownerDb, e.endpointId, 20_000);
      expect(await analyzeYoungLedger(t.db)).toBe(false);
      expect(await probeIndex(session.db)).toBe("reservations_idempotency_idx");
    } finally {
      await session.close();
    }
  });

  it("analyzes a table of 100 rows that has doubled, and one that has not only once", async () => {
    await t.ownerDb.execute(sql`truncate reservations`);
    const e = await makeEndpoint(t.ownerDb, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    await addReservations(t.ownerDb, e.endpointId, 200);
    expect(await analyzeYoungLedger(t.db)).toBe(true);
    const recorded = async () =>
      Number(resultRows<{ n: number }>(await t.ownerDb.execute(sql`select reltuples::int as n from pg_class where relname = 'reservations'`))[0]?.n);
    expect(await recorded()).toBe(200);
    await addReservations(t.ownerDb, e.endpointId, 50);
    expect(await analyzeYoungLedger(t.db)).toBe(false);
    await addReservations(t.ownerDb, e.endpointId, 400);
    expect(await analyzeYoungLedger(t.db)).toBe(true);
    expect(await recorded()).toBe(650);
  });
});
