import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { callerTotalsState, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { windowsBack } from "@/lib/budgets";
import { windowFor } from "@/lib/limits/windows";
import { buildCallerTotals } from "@/lib/counters/caller-totals";
import { DAY_MS } from "@/lib/time";
import { ceilingTopOver, ceilingTopOverQuery } from "./read-top";

// The 30-day ranking of a per-caller ceiling's accounts from the totals the worker keeps
// (lib/counters/caller-totals.ts), against a brute-force sum of the counters written, on shapes
// that prove it and shapes that do not, with totals a day old, a held reservation that keeps the
// range from moving, and a late overrun (the one thing that moves a closed window) before and
// racing the build.

type Counter = { account: string; day: number; settled: number };

const dayStart = (now: Date, ago: number) => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - ago * DAY_MS);

/** The ranking summing every counter of the 30 windows, in JavaScript: the answer the read must give. */
function bruteForce(counters: Counter[], limit: number) {
  const sums = new Map<string, { settled: number; windows: number }>();
  for (const c of counters) {
    if (c.day > 29) continue;
    const s = sums.get(c.account) ?? { settled: 0, windows: 0 };
    s.settled += c.settled;
    s.windows += 1;
    sums.set(c.account, s);
  }
  return [...sums]
    .map(([account, s]) => ({ account, ...s }))
    .sort((a, b) => b.settled - a.settled || (a.account < b.account ? -1 : 1))
    .slice(0, limit);
}

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("an account ranking over 30 days from the kept totals", () => {
  const t = useTestDatabase("accounts_top_over");

  async function callerCeiling() {
    const ep = await createEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 1_000_000, maxValue: 1_000_000, defaultValue: 1_000_000 }],
    });
    await t.ownerDb.update(endpoints).set({ perCallMax: 100 }).where(eq(endpoints.id, ep.endpointId));
    return { endpointId: ep.endpointId, ceilingId: (ep.ceilings[0] as { id: number }).id };
  }

  async function writeCounters(ceilingId: number, now: Date, counters: Counter[]) {
    for (let i = 0; i < counters.length; i += 2000) {
      const part = counters.slice(i, i + 2000);
      await t.ownerDb.execute(sql`
        insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
        select (select limit_id from ceilings where id = ${ceilingId}), x.account, x.ws, x.ws + interval '1 day', x.settled, 1
        from unnest(${sql.raw(`'{${part.map((c) => `"${c.account}"`).join(",")}}'::text[]`)},
                    ${sql.raw(`'{${part.map((c) => `"${dayStart(now, c.day).toISOString()}"`).join(",")}}'::timestamptz[]`)},
                    ${sql.raw(`'{${part.map((c) => c.settled).join(",")}}'::bigint[]`)}) as x(account, ws, settled)`);
    }
  }

  const starts = (now: Date) => Array.from({ length: 30 }, (_, i) => dayStart(now, 29 - i));

  /** A seeded generator, so a failure shows the same data again. */
  function random(seed: number) {
    let s = seed;
    return (n: number) => {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      return s % n;
    };
  }

  it("ranks exactly from the kept totals where accounts differ, and falls back exactly where they tie all the way down", async () => {
    const now = new Date();
    const next = random(7);
    const shapes: { name: string; counters: Counter[]; proves: boolean }[] = [
      {
        // Spread thin over 4,000 accounts, 1,200 a day (31 days: the first is outside the 30).
        name: "spread thin",
        counters: Array.from({ length: 31 }, (_, day) =>
          [...new Set(Array.from({ length: 1200 }, () => next(4000)))].map((a) => ({ account: `acct-${a}`, day, settled: next(1000) })),
        ).flat(),
        proves: true,
      },
      {
        // A few big accounts today only, above accounts spending every day.
        name: "today's big accounts",
        counters: [
          ...Array.from({ length: 30 }, (_, day) => Array.from({ length: 300 }, (_, a) => ({ account: `steady-${a}`, day, settled: 10 + next(5) }))).flat(),
          ...Array.from({ length: 5 }, (_, a) => ({ account: `burst-${a}`, day: 0, settled: 100_000 + a })),
        ],
        proves: true,
      },
      {
        // First in total and in no list's first 40: just below 40 accounts of the kept days and 40 of today.
        name: "first in total, in no list's top",
        counters: [
          ...Array.from({ length: 40 }, (_, a) => ({ account: `kept-${a}`, day: 1 + (a % 29), settled: 1000 + a })),
          ...Array.from({ length: 40 }, (_, a) => ({ account: `today-${a}`, day: 0, settled: 1000 + a })),
          { account: "both", day: 1, settled: 999 },
          { account: "both", day: 0, settled: 999 },
        ],
        proves: true,
      },
      {
        // 3,000 accounts that each settled 1 once: a tie wider than any list read.
        name: "ties all the way down",
        counters: Array.from({ length: 3000 }, (_, a) => ({ account: `tie-${String(a).padStart(4, "0")}`, day: a % 30, settled: 1 })),
        proves: false,
      },
    ];
    for (const shape of shapes) {
      const { ceilingId } = await callerCeiling();
      await writeCounters(ceilingId, now, shape.counters);
      expect((await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] })).built).toBe(1);
      for (const limit of [1, 10, 25]) {
        const read = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit, exhaustive: true });
        expect({ shape: shape.name, limit, accounts: read.accounts }).toEqual({ shape: shape.name, limit, accounts: bruteForce(shape.counters, limit) });
        expect({ shape: shape.name, read: read.read }).toEqual({ shape: shape.name, read: shape.proves ? "kept totals" : "every row" });
      }
      // Not asked to sum every row: a tie too deep to prove is said to be one, with the bound.
      const quick = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit: 10, exhaustive: false });
      expect({ shape: shape.name, read: quick.read }).toEqual({ shape: shape.name, read: shape.proves ? "kept totals" : "unproved" });
      if (quick.read === "unproved") expect(quick.bound).toBeGreaterThanOrEqual(quick.accounts.at(-1)?.settled ?? 0);
    }
  });

  it("totals a day old still rank exactly: the day that left the 30 is subtracted from the candidates", async () => {
    const now = new Date();
    const next = random(11);
    const { ceilingId } = await callerCeiling();
    // The oldest day (30 days ago, outside today's 30) holds the biggest spenders.
    const counters = [
      ...Array.from({ length: 31 }, (_, day) => Array.from({ length: 400 }, () => ({ account: `acct-${next(900)}`, day, settled: next(500) }))).flat(),
      ...Array.from({ length: 20 }, (_, a) => ({ account: `old-${a}`, day: 30, settled: 1_000_000 })),
    ];
    const unique = [...new Map(counters.map((c) => [`${c.account}:${c.day}`, c])).values()];
    await writeCounters(ceilingId, now, unique);
    // Built yesterday: its range starts a day before today's and stops at today.
    await buildCallerTotals(t.db, new Date(now.getTime() - DAY_MS), { ceilingIds: [ceilingId] });
    const [state] = await t.db.select().from(callerTotalsState).where(eq(callerTotalsState.ceilingId, ceilingId));
    expect(state?.fromStart.getTime()).toBe(dayStart(now, 30).getTime());
    const read = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit: 10, exhaustive: true });
    expect(read.accounts).toEqual(bruteForce(unique, 10));
    expect(read.read).toBe("kept totals");
  });

  it("stops the range at a held reservation's window, and a late overrun in the range deletes it until the next build", async () => {
    const now = new Date();
    const { endpointId, ceilingId } = await callerCeiling();
    const counters = Array.from({ length: 10 }, (_, day) =>
      Array.from({ length: 30 }, (_, a) => ({ account: `acct-${a}`, day, settled: a * 10 + day })),
    ).flat();
    await writeCounters(ceilingId, now, counters);
    const reservation = (ago: number, state: "held" | "expired", account: string) => sql`
      insert into reservations (endpoint_id, caller, amount, money, state, charges, created_at, expires_at)
      values (${endpointId}, ${account}, 5, 0, ${state},
              array[row((select limit_id from ceilings where id = ${ceilingId}), ${account}::text, ${dayStart(now, ago).toISOString()}::timestamptz, 'u', 5)::reservation_charge],
              ${new Date(dayStart(now, ago).getTime() + 3_600_000).toISOString()}::timestamptz, now() + interval '1 hour')
      returning id`;
    const [held] = resultRows<{ id: string }>(await t.ownerDb.execute(reservation(4, "held", "acct-0")));
    await t.ownerDb.execute(
      sql`update counters set held = held + 5 where limit_id = (select limit_id from ceilings where id = ${ceilingId}) and scope_key = 'acct-0' and window_start = ${dayStart(now, 4).toISOString()}::timestamptz`,
    );
    await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] });
    const range = async () => (await t.db.select().from(callerTotalsState).where(eq(callerTotalsState.ceilingId, ceilingId)))[0];
    expect((await range())?.throughStart.getTime()).toBe(dayStart(now, 4).getTime());
    let read = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit: 5 });
    expect(read).toEqual({ accounts: bruteForce(counters, 5), read: "kept totals" });

    // Released, the held reservation no longer stops the range.
    expect(resultRows<{ s: string }>(await t.db.execute(sql`select ceilings.release(${held?.id}::uuid)->>'status' as s`))[0]?.s).toBe("released");
    expect((await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] })).built).toBe(1);
    expect((await range())?.throughStart.getTime()).toBe(dayStart(now, 0).getTime());

    // An expired reservation 3 days ago, settled late at 95 on an account at the bottom: the overrun
    // (90 more) moves a window the totals hold, so they are set aside, and the ranking still holds it.
    const [expired] = resultRows<{ id: string }>(await t.ownerDb.execute(reservation(3, "expired", "acct-1")));
    await t.ownerDb.execute(
      sql`update counters set settled = settled + 5 where limit_id = (select limit_id from ceilings where id = ${ceilingId}) and scope_key = 'acct-1' and window_start = ${dayStart(now, 3).toISOString()}::timestamptz`,
    );
    await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] });
    const answer = await t.db.execute(sql`select ceilings.settle(${expired?.id}::uuid, 95) as a`);
    expect(resultRows<{ a: { status: string; charged: number } }>(answer)[0]?.a).toMatchObject({ status: "already_resolved", charged: 90 });
    expect(await range()).toBeUndefined();
    const after = counters.map((c) => (c.account === "acct-1" && c.day === 3 ? { ...c, settled: c.settled + 95 } : c));
    read = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit: 30, exhaustive: true });
    expect(read).toEqual({ accounts: bruteForce(after, 30), read: "window tops" });
    await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] });
    read = await ceilingTopOver(t.db, { ceilingId, starts: starts(now), limit: 30 });
    expect(read).toEqual({ accounts: bruteForce(after, 30), read: "kept totals" });
  });

  it("ranks exactly after the billing day moved the months under totals built by the old day, and past 2^53", async () => {
    const now = new Date();
    const ep = await createEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "caller", window: "billing_month", value: 1_000_000, maxValue: 1_000_000, defaultValue: 1_000_000 }],
    });
    const ceilingId = (ep.ceilings[0] as { id: number }).id;
    const today = now.getUTCDate();
    const [oldDay, newDay] = today >= 2 ? [1, Math.min(today, 28)] : [2, 1];
    const month = (billingDay: number, at: Date) => windowFor("billing_month", { billingDay }, at);
    const write = async (account: string, w: { start: Date; end: Date }, settled: number) =>
      t.ownerDb.execute(sql`insert into counters (limit_id, scope_key, window_start, window_end, settled, reservations)
        values ((select limit_id from ceilings where id = ${ceilingId}), ${account}, ${w.start.toISOString()}::timestamptz, ${w.end.toISOString()}::timestamptz, ${settled}, 1)`);
    await t.ownerDb.update(endpoints).set({ billingDay: oldDay }).where(eq(endpoints.id, ep.endpointId));
    const oldMonth = month(oldDay, now);
    const before = month(oldDay, new Date(oldMonth.start.getTime() - 1));
    for (let a = 0; a < 50; a++) await write(`kept-${a}`, before, 1 + a);
    // Spend in the month in force before the change, which the totals built by the old day do not hold.
    await write("star", oldMonth, 20_000);
    expect((await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] })).built).toBe(1);
    // The billing day moves, as endpoint.billing_day's apply writes it (here without the catalog, so
    // the totals stay: the reader alone must hold); a new month has spend.
    await t.ownerDb.update(endpoints).set({ billingDay: newDay }).where(eq(endpoints.id, ep.endpointId));
    for (let a = 0; a < 50; a++) await write(`new-${a}`, month(newDay, now), 10_000 + a);
    const monthStarts = windowsBack({ window: "billing_month", billingDay: newDay }, now, 30).map((w) => w.start);
    const everyRow = async (limit: number) =>
      resultRows<{ scope_key: string; settled: string; windows: string }>(
        await t.db.execute(ceilingTopOverQuery(ceilingId, monthStarts[0] as Date, monthStarts.at(-1) as Date, limit)),
      ).map((r) => ({ account: r.scope_key, settled: Number(r.settled), windows: Number(r.windows) }));
    const read = await ceilingTopOver(t.db, { ceilingId, starts: monthStarts, limit: 10, exhaustive: true });
    expect(read.accounts).toEqual(await everyRow(10));
    expect(read.accounts[0]?.account).toBe("star");

    // A kept total past 2^53 (two days of 5e15) is read as the nearest double, never refused.
    const daily = await callerCeiling();
    await writeCounters(daily.ceilingId, now, [
      { account: "huge", day: 1, settled: 5e15 },
      { account: "huge", day: 2, settled: 5e15 },
      { account: "small", day: 1, settled: 3 },
    ]);
    expect((await buildCallerTotals(t.db, now, { ceilingIds: [daily.ceilingId] })).built).toBe(1);
    const huge = await ceilingTopOver(t.db, { ceilingId: daily.ceilingId, starts: starts(now), limit: 3 });
    expect(huge).toEqual({
      accounts: [
        { account: "huge", settled: 1e16, windows: 2 },
        { account: "small", settled: 3, windows: 1 },
      ],
      read: "kept totals",
    });
  });

  it("a run builds for its time at most: the ceilings past it are built by the next run", async () => {
    const now = new Date();
    const ids = [(await callerCeiling()).ceilingId, (await callerCeiling()).ceilingId];
    for (const id of ids) await writeCounters(id, now, [{ account: "acct-1", day: 2, settled: 5 }]);
    expect(await buildCallerTotals(t.db, now, { ceilingIds: ids, maxMs: 0 })).toMatchObject({ built: 1, left: 1, failed: 0 });
    expect(await buildCallerTotals(t.db, now, { ceilingIds: ids, maxMs: 0 })).toMatchObject({ built: 1, left: 0, failed: 0 });
    expect(await buildCallerTotals(t.db, now, { ceilingIds: ids })).toMatchObject({ built: 0, left: 0 });
  });

  it("a late overrun racing the build never leaves totals that miss it", async () => {
    const now = new Date();
    const { endpointId, ceilingId } = await callerCeiling();
    // Enough counters that the build takes a moment: 2,000 accounts over 20 days.
    const counters = Array.from({ length: 20 }, (_, day) =>
      Array.from({ length: 2000 }, (_, a) => ({ account: `acct-${a}`, day: day + 1, settled: 1 })),
    ).flat();
    await writeCounters(ceilingId, now, counters);
    const ids = resultRows<{ id: string }>(
      await t.ownerDb.execute(sql`
        insert into reservations (endpoint_id, caller, amount, money, state, charges, created_at, expires_at)
        select ${endpointId}, 'acct-7', 5, 0, 'expired',
               array[row((select limit_id from ceilings where id = ${ceilingId}), 'acct-7', ${dayStart(now, 2).toISOString()}::timestamptz, 'u', 5)::reservation_charge],
               ${new Date(dayStart(now, 2).getTime() + 3_600_000).toISOString()}::timestamptz + g * interval '1 second', now()
        from generate_series(1, 30) g
        returning id`),
    ).map((r) => r.id);
    const kept = async () => {
      const [row] = resultRows<{ settled: string | null; state: boolean }>(
        await t.db.execute(sql`
          select (select settled::text from caller_totals where ceiling_id = ${ceilingId} and scope_key = 'acct-7') as settled,
                 exists (select 1 from caller_totals_state where ceiling_id = ${ceilingId}) as state`),
      );
      return row;
    };
    let raced = 0;
    for (const [round, id] of ids.entries()) {
      const [built, answer] = await Promise.all([
        buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] }),
        t.db.execute(sql`select ceilings.settle(${id}::uuid, 9)->>'status' as status`),
      ]);
      expect(resultRows<{ status: string }>(answer)[0]?.status).toBe("already_resolved");
      raced += built.built;
      // Totals still marked as held are those of every overrun so far (4 more each), or none are.
      const row = await kept();
      if (row?.state) expect({ round, settled: Number(row.settled) }).toEqual({ round, settled: 20 + 4 * (round + 1) });
    }
    expect(raced).toBeGreaterThan(ids.length / 3);
    await buildCallerTotals(t.db, now, { ceilingIds: [ceilingId] });
    expect(Number((await kept())?.settled)).toBe(20 + 4 * ids.length);
  });
});
