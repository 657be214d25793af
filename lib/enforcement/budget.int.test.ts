import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { budgetUsage, makeBudget, priceEndpoint, setBudgetValue } from "./budget-fixtures";
import { reserve } from "./reserve";
import { expireReservations, settleReservation } from "./resolve";
import { counterTotals, countRows, makeEndpoint, startFixtureProcess } from "./test-fixtures";
import { insertOverride } from "@/lib/limits/test-fixtures";

// A budget holds money across endpoints exactly as a ceiling holds one endpoint's units: charged in
// the same step as the members' ceilings, all or nothing, from any number of processes.

type Storm = { granted: number; unavailable: number };

function startStorm(url: string, plan: object) {
  return startFixtureProcess<Storm>(path.join(__dirname, "budget-storm.fixture.ts"), [url, JSON.stringify(plan)]);
}

async function runStorms(url: string, plans: object[]): Promise<Storm[]> {
  const storms = plans.map((plan) => startStorm(url, plan));
  await Promise.all(storms.map((s) => s.ready));
  for (const s of storms) s.send("go\n");
  return Promise.all(storms.map((s) => s.done));
}

const BIG = 1_000_000_000;
// $2.50 and $10 per million input and output tokens; $3 and $15; an embedding model at $0.02.
const GPT = { input: 2_500_000, output: 10_000_000 };
const SONNET = { input: 3_000_000, output: 15_000_000 };
const EMBED = { units: 20_000 };

describe.skipIf(skipWithoutDatabase())("budgets", () => {
  const t = useTestDatabase("budgets", { max: 8 });

  type Made = Awaited<ReturnType<typeof makeEndpoint>>;
  async function priced(prices: Record<string, number>): Promise<Made> {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    await priceEndpoint(t.db, e.endpointId, prices);
    return e;
  }
  async function llmEndpoints(): Promise<[Made, Made, Made]> {
    return [await priced(GPT), await priced(SONNET), await priced(EMBED)];
  }

  it("admits exactly floor(budget / cost) uniform calls across three endpoints from four processes", { timeout: 120_000 }, async () => {
    const [gpt, sonnet, embed] = await llmEndpoints();
    const budget = await makeBudget(t.db, { endpointIds: [gpt.endpointId, sonnet.endpointId, embed.endpointId], value: 50_000_000 });
    // Each call costs exactly 6,000 micros whichever endpoint it is on: 8,333 fit in $50.00.
    const uniform = [
      { endpoint: gpt.key, parts: { input: 800, output: 400 } },
      { endpoint: sonnet.key, parts: { input: 1000, output: 200 } },
      { endpoint: embed.key, parts: { units: 300_000 } },
    ];
    // Each process on one endpoint, so no ceiling's counter is shared between them: only the
    // budget's row lock stands between two batches deciding on the same money.
    const results = await runStorms(
      t.url,
      [0, 1, 2, 3].map((p) => ({ endpoints: [], uniform: [uniform[p % 3]], count: 2_500, seed: p })),
    );
    expect(results.reduce((n, r) => n + r.unavailable, 0)).toBe(0);
    expect(results.reduce((n, r) => n + r.granted, 0)).toBe(8_333);
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 8_333 * 6_000, settled: 0 });
  });

  it(
    "never holds and settles more than $50.00 at any snapshot while four processes reserve random parts and settle or release",
    { timeout: 120_000 },
    async () => {
      const endpoints = await llmEndpoints();
      const budget = await makeBudget(t.db, { endpointIds: endpoints.map((e) => e.endpointId), value: 50_000_000 });
      const plan = (seed: number) => ({
        endpoints: [
          { key: endpoints[0].key, parts: ["input", "output"] },
          { key: endpoints[1].key, parts: ["input", "output"] },
          { key: endpoints[2].key, parts: ["units"] },
        ],
        count: 1_500,
        seed,
        maxUnits: 4_000,
        settle: true,
      });
      let snapshots = 0;
      let worst = 0;
      let running = true;
      const watcher = (async () => {
        while (running) {
          const { held, settled } = await budgetUsage(t.db, budget.id);
          worst = Math.max(worst, held + settled);
          snapshots += 1;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const results = await runStorms(t.url, [11, 12, 13, 14].map(plan));
      running = false;
      await watcher;
      expect(snapshots).toBeGreaterThan(10);
      expect(worst).toBeLessThanOrEqual(50_000_000);
      expect(results.reduce((n, r) => n + r.granted, 0)).toBeGreaterThan(0);
      // The counter is the ledger: money held by held reservations, settled money of settled ones.
      const [ledger] = resultRows<{ held: string; settled: string }>(
        await t.db.execute(sql`
        select coalesce(sum(money) filter (where state = 'held'), 0) as held,
               coalesce(sum(settled_money) filter (where state = 'settled'), 0) as settled
        from reservations where endpoint_id in (${sql.join(
          endpoints.map((e) => sql`${e.endpointId}`),
          sql`, `,
        )})`),
      );
      expect(await budgetUsage(t.db, budget.id)).toEqual({ held: Number(ledger?.held), settled: Number(ledger?.settled) });
    },
  );

  it("charges nothing anywhere on a refusal: a budget's charges no ceiling, a ceiling's no budget", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 3_000 }] });
    await priceEndpoint(t.db, e.endpointId, GPT);
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 10_000 });
    // 1,000 output tokens: 10,000 micros, all of the budget; then the budget refuses.
    expect((await reserve(t.db, { endpoint: e.key, parts: { input: 0, output: 1000 } })).status).toBe("granted");
    expect(await reserve(t.db, { endpoint: e.key, parts: { input: 1, output: 0 } })).toMatchObject({
      status: "refused",
      gate: "budget",
      budget: budget.key,
      cost: 3,
    });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 1000, settled: 0 });
    // A ceiling's refusal (2,001 units above the 2,000 left) charges no budget.
    await setBudgetValue(t.db, budget.id, 1_000_000);
    expect(await reserve(t.db, { endpoint: e.key, parts: { input: 2001, output: 0 } })).toMatchObject({ status: "refused", gate: "ceiling" });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 10_000, settled: 0 });
    const refusals = await countRows(t.db, sql`select count(*) as n from refusals where budget_id = ${budget.id} and gate = 'budget'`);
    expect(refusals).toBe(1);
  });

  it("blocks one account on every member with a per-account override of 0, and no other account", async () => {
    const a = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    const b = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    // $0.001 a unit on a; b is free.
    await priceEndpoint(t.db, a.endpointId, { units: 1_000_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [a.endpointId, b.endpointId], value: 5_000, scope: "account" });
    await insertOverride(t.db, "budget", budget.id, { caller: "acct_blocked", value: 0, reason: "abuse" });
    for (const e of [a, b]) {
      // b is free (price 0), yet the block binds there too: a limit of 0 refuses even a free call.
      expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_blocked" })).toMatchObject({ status: "refused", gate: "budget" });
      expect((await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_other" })).status).toBe("granted");
    }
    // Each account its own counter: acct_other spent $0.001 on a, another account has all $0.005.
    expect(await budgetUsage(t.db, budget.id, "acct_other")).toEqual({ held: 1_000, settled: 0 });
    expect((await reserve(t.db, { endpoint: a.key, amount: 5, caller: "acct_third" })).status).toBe("granted");
    expect(await reserve(t.db, { endpoint: a.key, amount: 5, caller: "acct_other" })).toMatchObject({ status: "refused", gate: "budget", remaining: 4_000 });
    await expect(reserve(t.db, { endpoint: a.key, amount: 1 })).rejects.toMatchObject({ code: "caller_required" });
  });

  it("grants nothing that started after a budget's kill committed while three processes reserve on its members", { timeout: 120_000 }, async () => {
    const endpoints = await llmEndpoints();
    const budget = await makeBudget(t.db, { endpointIds: endpoints.map((e) => e.endpointId), value: BIG });
    const plan = (seed: number) => ({
      endpoints: [
        { key: endpoints[0].key, parts: ["input", "output"] },
        { key: endpoints[1].key, parts: ["input", "output"] },
        { key: endpoints[2].key, parts: ["units"] },
      ],
      count: 4_000,
      seed,
      maxUnits: 100,
    });
    const storms = [21, 22, 23].map((seed) => startStorm(t.url, plan(seed)));
    await Promise.all(storms.map((s) => s.ready));
    for (const s of storms) s.send("go\n");
    const members = sql.join(
      endpoints.map((e) => sql`${e.endpointId}`),
      sql`, `,
    );
    // Wait until the load is on, then kill.
    while ((await countRows(t.db, sql`select count(*) as n from reservations where endpoint_id in (${members})`)) < 300) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await setBudgetValue(t.db, budget.id, 0);
    const [killed] = resultRows<{ at: string }>(await t.db.execute(sql`select clock_timestamp() as at`));
    const results = await Promise.all(storms.map((s) => s.done));
    const granted = results.reduce((n, r) => n + r.granted, 0);
    expect(granted).toBeGreaterThan(0);
    expect(granted).toBeLessThan(12_000);
    const after = await countRows(
      t.db,
      sql`select count(*) as n from reservations where endpoint_id in (${members}) and created_at > ${killed?.at}::timestamptz`,
    );
    expect(after).toBe(0);
    const refusedAfter = await countRows(t.db, sql`select coalesce(sum(count), 0) as n from refusals where budget_id = ${budget.id}`);
    expect(refusedAfter).toBeGreaterThan(0);
  });

  it("settles money to the actual parts exactly, and charges and alerts an overrun in money after expiry", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    await priceEndpoint(t.db, e.endpointId, { input: 2_500_001, output: 10_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000 });
    const first = await reserve(t.db, { endpoint: e.key, parts: { input: 1000, output: 500 } });
    // 1000 x 2.500001 + 500 x 10 = 7,500.001 micros: rounded up once, to 7,501.
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 7_501, settled: 0 });
    if (first.status !== "granted") throw new Error("not granted");
    expect(await settleReservation(t.db, { reservationId: first.reservationId, parts: { input: 999, output: 3 } })).toMatchObject({
      status: "settled",
      actual: 1002,
      overrun: false,
    });
    // 999 x 2.500001 + 3 x 10 = 2,527.500999 micros: 2,528.
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 0, settled: 2_528 });
    // Same total units, shifted to the dearer part: an overrun in money after expiry.
    const second = await reserve(t.db, { endpoint: e.key, parts: { input: 100, output: 0 }, ttlSeconds: 1 });
    if (second.status !== "granted") throw new Error("not granted");
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where id = ${second.reservationId}`);
    expect(await expireReservations(t.db)).toBe(1);
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 0, settled: 2_528 + 251 });
    expect(await settleReservation(t.db, { reservationId: second.reservationId, parts: { input: 0, output: 100 } })).toMatchObject({
      status: "already_resolved",
      overrun: true,
    });
    // The expiry counted 251; the actual 1,000 is charged in full: 749 more.
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 0, settled: 2_528 + 1_000 });
    const alerts = await countRows(t.db, sql`select count(*) as n from alerts where kind = 'overrun' and details->>'reservationId' = ${second.reservationId}`);
    expect(alerts).toBe(1);
  });

  it("alerts each threshold of a global budget once, from the grant that crosses it, beside a ceiling that crosses none", async () => {
    // A micro a unit; the endpoint's own ceiling comes first in the batch's limits, the budget after it.
    const e = await priced({ units: 1_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 100, alertThresholds: [50, 80] });
    for (const amount of [40, 20, 10, 15, 5]) expect(await reserve(t.db, { endpoint: e.key, amount })).toMatchObject({ status: "granted" });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 90, settled: 0 });
    const alerts = resultRows<{ kind: string; percent: string; used: string; message: string }>(
      await t.db.execute(sql`
        select kind::text as kind, details->>'percent' as percent, details->>'used' as used, message from alerts
        where kind in ('budget_threshold', 'threshold') and (details->>'budgetId' = ${String(budget.id)} or ceiling_id = ${e.ceilingIds[0] ?? 0})
        order by (details->>'percent')::int`),
    );
    expect(alerts.map((a) => [a.kind, a.percent, a.used])).toEqual([
      ["budget_threshold", "50", "60"],
      ["budget_threshold", "80", "85"],
    ]);
    expect(alerts[0]?.message).toContain(`budget ${budget.key} reached 50% of its value`);
  });

  it("names the part in every bad parts input and charges nothing", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 1_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    await priceEndpoint(t.db, e.endpointId, GPT);
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000_000 });
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ parts: { input: 1, outptu: 1 } }, "invalid_parts", /parts\.outptu is not a part/],
      [{ parts: { input: 1 } }, "invalid_parts", /parts\.output is missing/],
      [{ amount: 10 }, "invalid_parts", /send parts, not one amount/],
      [{ parts: { input: 1, output: 1 }, amount: 3 }, "invalid_amount", /not the total of the parts/],
      [{ parts: { input: 0, output: 0 } }, "invalid_parts", /add up to/],
    ];
    for (const [fields, code, message] of bad) {
      const [answer] = resultRows<{ a: { code: string; message: string } }>(
        await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify([{ endpoint: e.key, ...fields }])}::jsonb) -> 0 as a`),
      );
      expect([answer?.a.code, message.test(answer?.a.message ?? "")]).toEqual([code, true]);
    }
    // 2^63 as a part: an error naming it, through SQL and the library alike.
    const [huge] = resultRows<{ a: { code: string; message: string } }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${`[{"endpoint":"${e.key}","parts":{"input":9223372036854775808,"output":1}}]`}::jsonb) -> 0 as a`),
    );
    expect(huge?.a).toMatchObject({ code: "invalid_parts", message: expect.stringMatching(/parts\.input must be a whole number/) });
    await expect(reserve(t.db, { endpoint: e.key, parts: { input: 2 ** 63, output: 1 } })).rejects.toMatchObject({ code: "invalid_input" });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 0, settled: 0 });
  });
});
