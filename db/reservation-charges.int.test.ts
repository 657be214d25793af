import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { type ReservationCharge, reservations } from "@/db/schema/reservations";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";

// A reservation keeps its charges as reservation_charge[] (migration 0044): reserve_batch writes
// them in SQL, and the few writers that are not reserve_batch (the demo's history, fixtures) and
// every reader through drizzle go through the column's literal, written and parsed in TypeScript.
// Scope keys are callers and destinations as sent, so they hold whatever a caller can type.

const awkward = ['say "hi"', "back\\slash", "comma,and(parens)", "two  spaces", "NULL", "", "ünï ✓ 日本", "{braces}", "'single'"];

describe.skipIf(skipWithoutDatabase())("a reservation's typed charges", () => {
  const t = useTestDatabase("reservation_charges");

  it("names, for every grant, the counter each of its charges is on, whatever the caller's characters", async () => {
    const e = await makeEndpoint(t.ownerDb, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1_000_000 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 1_000 },
      ],
    });
    const callers = awkward.filter((c) => c !== "");
    const [row] = resultRows<{ a: { status: string; reservationId: string }[] }>(
      await t.db.execute(
        sql`select ceilings.reserve_batch(${JSON.stringify(callers.map((caller, i) => ({ endpoint: e.key, amount: i + 1, caller })))}::jsonb) as a`,
      ),
    );
    expect(row?.a.map((a) => a.status)).toEqual(callers.map(() => "granted"));
    const ids = row?.a.map((a) => a.reservationId) ?? [];

    // Read through drizzle: the column's literal parsed back into each charge.
    const read = await t.db
      .select({ id: reservations.id, caller: reservations.caller, charges: reservations.charges })
      .from(reservations)
      .where(inArray(reservations.id, ids));
    const counters = resultRows<{ limit_id: number; scope_key: string; window_start: Date }>(
      await t.db.execute(sql`select u.limit_id, u.scope_key, u.window_start from counters u join limits l on l.id = u.limit_id
                             join ceilings c on c.limit_id = l.id where c.endpoint_id = ${e.endpointId}`),
    );
    const counterKeys = new Set(counters.map((c) => `${c.limit_id}|${c.scope_key}|${new Date(c.window_start).toISOString()}`));
    expect(read).toHaveLength(callers.length);
    for (const r of read) {
      const i = callers.indexOf(r.caller);
      expect(i, r.caller).toBeGreaterThanOrEqual(0);
      expect(r.charges.map((c) => [c.scopeKey, c.measure, c.amount])).toEqual([
        ["", "u", i + 1],
        [r.caller, "c", 1],
      ]);
      for (const c of r.charges) expect(counterKeys.has(`${c.limitId}|${c.scopeKey}|${c.windowStart.toISOString()}`), `${r.caller}: ${c.scopeKey}`).toBe(true);
    }
  });

  it("writes through drizzle exactly what it reads back, and SQL reads the same values", async () => {
    const e = await makeEndpoint(t.ownerDb, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const windowStart = new Date("2026-12-05T13:14:15.678Z");
    const charges: ReservationCharge[] = awkward.map((scopeKey, i) => ({
      limitId: 1000 + i,
      scopeKey,
      windowStart,
      measure: (["u", "c", "m"] as const)[i % 3] ?? "u",
      amount: 2 ** 40 + i,
    }));
    const [written] = await t.ownerDb
      .insert(reservations)
      .values({ endpointId: e.endpointId, amount: 1, charges, expiresAt: new Date(windowStart.getTime() + 60_000) })
      .returning({ id: reservations.id });
    const id = written?.id ?? "";

    const [back] = await t.db.select({ charges: reservations.charges }).from(reservations).where(eq(reservations.id, id));
    expect(back?.charges).toEqual(charges);
    // A pool that does not look up array types (the enforcement pool's) gets the array's literal.
    const plain = openPostgres(t.url, { max: 1, fetchTypes: false });
    try {
      const [literal] = await plain.db.select({ charges: reservations.charges }).from(reservations).where(eq(reservations.id, id));
      expect(literal?.charges).toEqual(charges);
    } finally {
      await plain.close();
    }
    const inSql = resultRows<{ limit_id: number; scope_key: string; window_start: string; measure: string; amount: string }>(
      await t.db.execute(sql`select c.limit_id, c.scope_key, to_json(c.window_start)#>>'{}' as window_start, c.measure, c.amount::text
                             from reservations r cross join unnest(r.charges) with ordinality c where r.id = ${id} order by c.ordinality`),
    );
    expect(inSql).toEqual(
      charges.map((c) => ({
        limit_id: c.limitId,
        scope_key: c.scopeKey,
        window_start: "2026-12-05T13:14:15.678+00:00",
        measure: c.measure,
        amount: String(c.amount),
      })),
    );

    // No charges at all: an empty array, not NULL.
    const [empty] = await t.ownerDb
      .insert(reservations)
      .values({ endpointId: e.endpointId, amount: 1, charges: [], expiresAt: windowStart })
      .returning({ id: reservations.id });
    const [none] = await t.db
      .select({ charges: reservations.charges })
      .from(reservations)
      .where(eq(reservations.id, empty?.id ?? ""));
    expect(none?.charges).toEqual([]);
  });
});
