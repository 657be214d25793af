import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { reservationDays } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { pricedEndpoint, reservation, resolveReservation } from "./compare-fixtures";
import { LEDGER_DAYS_EVERY_MS, LEDGER_DAYS_LOCK, rollUpLedgerDays, rollupStatement } from "./ledger-days";
import { readinessOf } from "./readiness";

const NOW = new Date("2026-11-14T12:00:00Z");
const HOUR = 3_600_000;
const CENT = 10_000;

describe.skipIf(skipWithoutDatabase())("the ledger per endpoint and UTC day (ledger-days)", () => {
  const t = useTestDatabase("recon_ledger_days");

  const at = (iso: string) => new Date(iso);
  const daysOf = async (endpointId: number) =>
    (await t.db.select().from(reservationDays).where(eq(reservationDays.endpointId, endpointId))).sort((a, b) => a.day.localeCompare(b.day));

  it("counts each endpoint's reservations per UTC day by how they ended, the last 8 days, and recounts them on the next run", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T00:00:00Z"), state: "settled", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T23:59:59Z"), state: "released", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T12:00:00Z"), state: "expired", amount: 1, money: CENT });
    const held = await reservation(t.db, { endpointId: a.id, at: at("2026-11-14T11:00:00Z"), state: "held", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-07T00:00:00Z"), state: "settled", amount: 1, money: CENT }); // the 8th day back
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-06T23:59:59Z"), state: "settled", amount: 1, money: CENT }); // before: not counted
    await reservation(t.db, { endpointId: b.id, at: at("2026-11-10T05:00:00Z"), state: "expired", amount: 1, money: CENT });

    expect(await rollUpLedgerDays(t.db, NOW)).toEqual({ from: "2026-11-07", rows: 4 });
    const rows = await daysOf(a.id);
    expect(rows.map(({ day, reservations, settled, released, expired, held }) => ({ day, reservations, settled, released, expired, held }))).toEqual([
      { day: "2026-11-07", reservations: 1, settled: 1, released: 0, expired: 0, held: 0 },
      { day: "2026-11-13", reservations: 3, settled: 1, released: 1, expired: 1, held: 0 },
      { day: "2026-11-14", reservations: 1, settled: 0, released: 0, expired: 0, held: 1 },
    ]);
    expect(rows.every((r) => r.computedAt.getTime() === NOW.getTime())).toBe(true);
    expect(await daysOf(b.id)).toMatchObject([{ day: "2026-11-10", reservations: 1, expired: 1 }]);

    // The held one settles: the next run recounts its day in place.
    await resolveReservation(t.db, held, "settled");
    const later = new Date(NOW.getTime() + LEDGER_DAYS_EVERY_MS);
    await rollUpLedgerDays(t.db, later);
    expect((await daysOf(a.id)).find((r) => r.day === "2026-11-14")).toMatchObject({ reservations: 1, settled: 1, held: 0, computedAt: later });
  });

  it("is one transaction (a tried lock, jit off, then one statement) whatever the number of endpoints", async () => {
    for (let i = 0; i < 5; i++) {
      const e = await pricedEndpoint(t.db);
      await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - i * HOUR), state: "settled", amount: 1, money: CENT });
    }
    let statements = 0;
    const counting = new Proxy(t.db, {
      get: (target, prop, receiver) => {
        if (prop === "select" || prop === "selectDistinct" || prop === "execute" || prop === "insert" || prop === "update" || prop === "transaction")
          statements += 1;
        return Reflect.get(target, prop, receiver);
      },
    });
    await rollUpLedgerDays(counting, NOW);
    expect(statements).toBe(1);
  });

  it("readiness' settle discipline is the rollup's last 7 UTC days, with 'as of' once it is older than a run", async () => {
    const e = await pricedEndpoint(t.db);
    for (let i = 0; i < 96; i++)
      await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - (i + 1) * HOUR), state: "settled", amount: 1, money: CENT });
    for (let i = 0; i < 4; i++)
      await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - (i + 1) * HOUR), state: "expired", amount: 1, money: CENT });
    // The 8th UTC day back is rolled up but outside readiness' 7 days.
    await reservation(t.db, { endpointId: e.id, at: at("2026-11-07T10:00:00Z"), state: "expired", amount: 1, money: CENT });
    const settled = async (now: Date) => (await readinessOf(t.db, { endpointIds: [e.id], now })).get(e.id)?.settled;

    // Before any rollup, nothing is counted: readiness never reads the reservations.
    expect((await settled(NOW))?.figure).toBe("no reservations");
    await rollUpLedgerDays(t.db, NOW);
    expect(await settled(NOW)).toMatchObject({ color: "amber", figure: "4 expired of 100" });
    // A reservation after the rollup waits for the next run.
    await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - HOUR), state: "expired", amount: 1, money: CENT });
    expect((await settled(NOW))?.figure).toBe("4 expired of 100");
    // The worker stopped: 20 minutes later the figure says when it was counted.
    expect((await settled(new Date(NOW.getTime() + 20 * 60_000)))?.figure).toBe("4 expired of 100 as of 12:00 UTC");
    await rollUpLedgerDays(t.db, new Date(NOW.getTime() + 20 * 60_000));
    expect((await settled(new Date(NOW.getTime() + 20 * 60_000)))?.figure).toBe("5 expired of 101");
  });

  it("reads each endpoint's own range of the (endpoint_id, created_at) index, never the whole reservations table", async () => {
    // 20 endpoints, 30 days of reservations each (6,000 rows), analyzed: the plan the planner picks.
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await pricedEndpoint(t.db)).id);
    await t.db.execute(sql`
      insert into reservations (endpoint_id, amount, money, state, charges, created_at, expires_at)
      select e, 1, 1, 'settled', '{}', ${NOW.toISOString()}::timestamptz - (g * interval '72 minutes'), ${NOW.toISOString()}::timestamptz
      from unnest(${sql.raw(`array[${ids.join(",")}]`)}::int[]) e, generate_series(1, 600) g`);
    await t.db.execute(sql`analyze reservations`);
    await t.db.execute(sql`analyze endpoints`);
    const [plan] = resultRows<{ "QUERY PLAN": unknown }>(await t.db.execute(sql`explain (format json) ${rollupStatement("2026-11-07", NOW)}`));
    const nodes: Record<string, unknown>[] = [];
    const walk = (n: Record<string, unknown>) => {
      nodes.push(n);
      for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
    };
    const top = (plan?.["QUERY PLAN"] as { Plan: Record<string, unknown> }[] | undefined)?.[0];
    if (!top) throw new Error("no plan");
    walk(top.Plan);
    // No seq scan of the reservations: one index read (plain, or bitmap) on the endpoint's range.
    expect(nodes.filter((n) => n["Relation Name"] === "reservations").map((n) => n["Node Type"])).not.toContain("Seq Scan");
    const onIndex = nodes.filter((n) => n["Index Name"] === "reservations_endpoint_created_idx");
    expect(onIndex.length).toBe(1);
    // The index ranges start at the endpoints: endpoint_id = any(the endpoints' ids, read once by an
    // InitPlan) is an index condition beside created_at, and no reservation is filtered afterwards.
    // The plan's shape, not its text: the parameter itself prints as `$1` on PostgreSQL 15 and as
    // `(InitPlan 1).col1` on 17.
    const cond = String(onIndex[0]?.["Index Cond"]);
    expect(cond).toContain("endpoint_id = ANY");
    expect(cond).toContain("created_at >=");
    expect(nodes.filter((n) => n["Relation Name"] === "reservations" && "Filter" in n)).toEqual([]);
    expect(nodes.filter((n) => n["Parent Relationship"] === "InitPlan").map((n) => n["Relation Name"])).toContain("endpoints");
  });

  it("a second worker running it while the first holds the lock skips instead of waiting (no deadlock)", async () => {
    const e = await pricedEndpoint(t.db);
    await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - HOUR), state: "settled", amount: 1, money: CENT });
    const skipped = await t.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${LEDGER_DAYS_LOCK}))`);
      // Another connection of the pool: the other worker.
      return rollUpLedgerDays(t.db, NOW);
    });
    expect(skipped).toEqual({ from: "2026-11-07", rows: 0, skipped: true });
    expect(await daysOf(e.id)).toEqual([]);
    // The lock released, the next run counts.
    expect((await rollUpLedgerDays(t.db, NOW)).skipped).toBeUndefined();
    expect(await daysOf(e.id)).toMatchObject([{ day: "2026-11-14", reservations: 1, settled: 1 }]);
  });
});
