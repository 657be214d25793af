import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type BatchRequest, callReserveBatch } from "./batcher";
import { makeBudget, priceEndpoint } from "./budget-fixtures";
import { makeEndpoint } from "./test-fixtures";

// A batch whose requests name several endpoints, each with its own mix of limits (global and
// per-caller ceilings, a cooldown, a global and a per-account budget shared across endpoints):
// reserve_batch finds each charge's counter by the limit's position and the caller's or
// destination's index in the batch, so a request must charge exactly its own endpoint's limits,
// in charge order (its ceilings by id, then its budgets by id), each on the counter of its own
// scope. Checked against a model of the counters, on both entries (the full JSON answer and the
// library's compact arrays), and then against the counters' rows.

type Entry = { ceilingId?: number; budgetId?: number; limit: number; used: number; remaining: number };

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("a batch across endpoints", () => {
  const t = useTestDatabase("enforcement_mixed_batch");

  it("charges each request exactly its own endpoint's limits, each on its own scope's counter", async () => {
    const big = 1_000_000;
    const units = await makeEndpoint(t.db, {
      perCallMax: 10,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: big },
        { metric: "units", scope: "caller", window: "utc_day", value: big },
      ],
    });
    const cooled = await makeEndpoint(t.db, {
      perCallMax: 10,
      ceilings: [
        { metric: "calls", scope: "global", window: "utc_day", value: big },
        { metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 3600, value: big },
      ],
    });
    const perCaller = await makeEndpoint(t.db, { perCallMax: 10, ceilings: [{ metric: "calls", scope: "caller", window: "utc_day", value: big }] });
    await priceEndpoint(t.db, units.endpointId, { units: 1_500_000 });
    await priceEndpoint(t.db, cooled.endpointId, { units: 2_000_000 });
    await priceEndpoint(t.db, perCaller.endpointId, { units: 3_000_000 });
    const shared = await makeBudget(t.db, { endpointIds: [units.endpointId, perCaller.endpointId], value: big });
    const perAccount = await makeBudget(t.db, { endpointIds: [cooled.endpointId, perCaller.endpointId], value: big, scope: "account" });

    // Each endpoint's limits in charge order: its ceilings by id (a backstop included), then its
    // budgets by id; and each limit's measure and scope.
    const ceilingRows = resultRows<{ id: number; endpoint_id: number; metric: string; scope: string; limit_id: number }>(
      await t.db.execute(sql`select id, endpoint_id, metric, scope, limit_id from ceilings
                             where endpoint_id in (${units.endpointId}, ${cooled.endpointId}, ${perCaller.endpointId}) order by id`),
    );
    const budgetRows = resultRows<{ id: number; scope: string; limit_id: number }>(
      await t.db.execute(sql`select id, scope, limit_id from budgets where id in (${shared.id}, ${perAccount.id}) order by id`),
    );
    const members: Record<number, number[]> = {
      [shared.id]: [units.endpointId, perCaller.endpointId],
      [perAccount.id]: [cooled.endpointId, perCaller.endpointId],
    };
    const price: Record<number, number> = { [units.endpointId]: 1.5, [cooled.endpointId]: 2, [perCaller.endpointId]: 3 };
    type Limit = { key: string; limitId: number; entry: { ceilingId?: number; budgetId?: number }; measure: "units" | "calls" | "money"; scope: string };
    const limitsOf = (endpointId: number): Limit[] => [
      ...ceilingRows
        .filter((c) => c.endpoint_id === endpointId)
        .map((c) => ({ key: `c${c.id}`, limitId: c.limit_id, entry: { ceilingId: c.id }, measure: c.metric as "units" | "calls", scope: c.scope })),
      ...budgetRows
        .filter((b) => members[b.id]?.includes(endpointId))
        .map((b) => ({ key: `b${b.id}`, limitId: b.limit_id, entry: { budgetId: b.id }, measure: "money" as const, scope: b.scope })),
    ];
    const endpointOf: Record<string, number> = { [units.key]: units.endpointId, [cooled.key]: cooled.endpointId, [perCaller.key]: perCaller.endpointId };

    // The model: each counter's held, by (limit, scope key).
    const held = new Map<string, number>();
    const expectBatch = (requests: BatchRequest[], answers: { status: string; remaining?: Entry[] }[]) => {
      expect(answers).toHaveLength(requests.length);
      requests.forEach((r, i) => {
        const answer = answers[i];
        expect(answer?.status, JSON.stringify(answer)).toBe("granted");
        const limits = limitsOf(endpointOf[r.endpoint] ?? 0);
        const seen = (answer?.remaining ?? []).map((e) => ({ ceilingId: e.ceilingId, budgetId: e.budgetId, used: e.used }));
        const amount = r.amount ?? 0;
        const expected = limits.map((l) => {
          const scopeKey = l.scope === "global" ? "" : l.scope === "destination" ? (r.destination ?? "") : (r.caller ?? "");
          const charge = l.measure === "calls" ? 1 : l.measure === "units" ? amount : Math.ceil(amount * (price[endpointOf[r.endpoint] ?? 0] ?? 0));
          const key = `${l.limitId}|${scopeKey}`;
          held.set(key, (held.get(key) ?? 0) + charge);
          return { ceilingId: l.entry.ceilingId, budgetId: l.entry.budgetId, used: held.get(key) };
        });
        expect(seen, `request ${i} on ${r.endpoint} by ${r.caller}`).toEqual(expected);
      });
    };

    const batch = (round: number): BatchRequest[] =>
      Array.from({ length: 18 }, (_, i) => {
        const endpoint = [units.key, cooled.key, perCaller.key][(i + round) % 3] as string;
        return {
          endpoint,
          amount: 1 + ((i * 7 + round) % 4),
          caller: `acct-${(i * 5 + round) % 4}`,
          ...(endpoint === cooled.key ? { destination: `inbox-${i % 4}@example.com` } : {}),
        };
      });

    // The JSON entry with its full answer, then the library's typed arrays with the compact one.
    const first = batch(0);
    const [full] = resultRows<{ a: { status: string; remaining?: Entry[] }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(first)}::jsonb) as a`),
    );
    expectBatch(first, full?.a ?? []);
    const second = batch(1);
    expectBatch(second, (await callReserveBatch(t.db, second)) as { status: string; remaining?: Entry[] }[]);

    // And the counters' rows hold what the model does, no more and no fewer.
    const rows = resultRows<{ limit_id: number; scope_key: string; held: string }>(
      await t.db.execute(sql`select limit_id, scope_key, held from counters
                             where limit_id in (${sql.join([...ceilingRows.map((c) => c.limit_id), ...budgetRows.map((b) => b.limit_id)], sql`, `)})
                               and held > 0`),
    );
    expect(new Map(rows.map((r) => [`${r.limit_id}|${r.scope_key}`, Number(r.held)]))).toEqual(held);
  });

  // The catalog offers a destination only a cooldown, but the database also takes a per-destination
  // ceiling on a calendar window (written in SQL): a counter per destination in the day, not a
  // window opened by each first hit.
  it("keeps a per-destination ceiling on a calendar window to each destination's day", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [{ metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 60, value: 2 }],
    });
    await t.db.execute(sql`update ceilings set "window" = 'utc_day', window_seconds = null where endpoint_id = ${e.endpointId} and scope = 'destination'`);
    const call = (destination: string) => ({ endpoint: e.key, amount: 1, destination });
    const batch = [call("a@example.com"), call("b@example.com"), call("a@example.com"), call("a@example.com")];
    const [answers] = resultRows<{ a: { status: string; gate?: string }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(batch)}::jsonb) as a`),
    );
    expect(answers?.a.map((a) => a.gate ?? a.status)).toEqual(["granted", "granted", "granted", "cooldown"]);
    const rows = resultRows<{ scope_key: string; held: string; day: boolean }>(
      await t.db.execute(sql`select c.scope_key, c.held, c.window_start = date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' as day
                             from counters c join ceilings l on l.limit_id = c.limit_id
                             where l.endpoint_id = ${e.endpointId} and l.scope = 'destination' order by c.scope_key`),
    );
    expect(rows.map((r) => [r.scope_key, Number(r.held), r.day])).toEqual([
      ["a@example.com", 2, true],
      ["b@example.com", 1, true],
    ]);
  });
});
