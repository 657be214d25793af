import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";

import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { budgetUsage, makeBudget, priceEndpoint, setBudgetValue } from "./budget-fixtures";
import { assignAccount, defaultPlanId, makePlan, setBlocked, setPlanBudgetValue, setPlanCeilingValue } from "./plan-fixtures";
import { reserve } from "./reserve";
import { countRows, makeEndpoint, openPools, setCeilingValue, startFixtureProcess } from "./test-fixtures";
import { insertOverride, deleteOverrides } from "@/lib/limits/test-fixtures";

// Plans set what binds an account on per-caller ceilings and per-account budgets: its override,
// else its plan's value, else the ceiling's or budget's own. Decided in the same atomic step as
// every other gate, from any number of processes; an assignment or a block binds every batch that
// starts after it commits.

type Storm = { granted: Record<string, number>; unavailable: number };
type StormPlan = { requests: { endpoint: string; caller: string; amount: number }[]; count?: number; durationMs?: number; concurrency?: number };

async function runStorms(url: string, plans: StormPlan[], during?: () => Promise<void>): Promise<Storm[]> {
  const storms = plans.map((plan) => startFixtureProcess<Storm>(path.join(__dirname, "account-storm.fixture.ts"), [url, JSON.stringify(plan)]));
  await Promise.all(storms.map((s) => s.ready));
  for (const s of storms) s.send("go\n");
  await during?.();
  return Promise.all(storms.map((s) => s.done));
}

function sumGrants(storms: Storm[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const s of storms) for (const [caller, n] of Object.entries(s.granted)) total[caller] = (total[caller] ?? 0) + n;
  return total;
}

const BIG = 1_000_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skipWithoutDatabase())("plans and accounts in enforcement", () => {
  const t = useTestDatabase("plans", { max: 8 });

  /** An endpoint with a per-caller ceiling of `own` units a day, and one priced 1 micro a unit in a per-account budget of `own` micros. */
  async function shapes(own: number) {
    const capped = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: BIG },
        { metric: "units", scope: "caller", window: "utc_day", value: own },
      ],
    });
    const priced = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    await priceEndpoint(t.db, priced.endpointId, { units: 1_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [priced.endpointId], value: own, scope: "account" });
    return { capped, perCaller: capped.ceilingIds[1] ?? 0, priced, budget };
  }

  async function heldOn(ceilingId: number, caller: string): Promise<number> {
    return countRows(
      t.db,
      sql`select coalesce(sum(held + settled), 0) as n from usage where ceiling_id = ${ceilingId} and scope_key = ${caller} and window_end > now()`,
    );
  }

  it("admits each account exactly what binds it (override, else plan, else own value) from four processes", { timeout: 120_000 }, async () => {
    const s = await shapes(5);
    const free = await makePlan(t.db, "free");
    const pro = await makePlan(t.db, "pro");
    await setPlanCeilingValue(t.db, free.id, s.perCaller, 10);
    await setPlanBudgetValue(t.db, free.id, s.budget.id, 10);
    await setPlanCeilingValue(t.db, pro.id, s.perCaller, 100);
    await setPlanBudgetValue(t.db, pro.id, s.budget.id, 100);
    const run = Date.now().toString(36);
    const acct = { free1: `f1-${run}`, free2: `f2-${run}`, pro1: `p1-${run}`, pro2: `p2-${run}`, plain: `d-${run}`, special: `o-${run}` };
    for (const a of [acct.free1, acct.free2]) await assignAccount(t.db, a, free.id);
    for (const a of [acct.pro1, acct.pro2, acct.special]) await assignAccount(t.db, a, pro.id);
    await insertOverride(t.db, "ceiling", s.perCaller, { caller: acct.special, value: 7, reason: "test" });
    await insertOverride(t.db, "budget", s.budget.id, { caller: acct.special, value: 7, reason: "test" });

    const requests = Object.values(acct).flatMap((caller) => [
      { endpoint: s.capped.key, caller, amount: 1 },
      { endpoint: s.priced.key, caller, amount: 1 },
    ]);
    // 12 kinds of request, 200 of each: twice what the most generous plan admits.
    const storms = await runStorms(
      t.url,
      [0, 1, 2, 3].map((p) => ({ requests: [...requests.slice(p * 3), ...requests.slice(0, p * 3)], count: 600 })),
    );
    expect(storms.reduce((n, r) => n + r.unavailable, 0)).toBe(0);
    const expected = { free: 10, pro: 100, plain: 5, special: 7 };
    expect(sumGrants(storms)).toEqual({
      [acct.free1]: 2 * expected.free,
      [acct.free2]: 2 * expected.free,
      [acct.pro1]: 2 * expected.pro,
      [acct.pro2]: 2 * expected.pro,
      [acct.plain]: 2 * expected.plain,
      [acct.special]: 2 * expected.special,
    });
    for (const [caller, n] of [
      [acct.free1, 10],
      [acct.pro2, 100],
      [acct.plain, 5],
      [acct.special, 7],
    ] as const) {
      expect(await heldOn(s.perCaller, caller)).toBe(n);
      expect(await budgetUsage(t.db, s.budget.id, caller)).toEqual({ held: n, settled: 0 });
    }
  });

  it("binds every grant that started after an assignment or a block committed, while three processes reserve", { timeout: 120_000 }, async () => {
    const s = await shapes(BIG);
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    const tiny = await makePlan(t.db, "tiny");
    const mid = await makePlan(t.db, "mid");
    await setPlanCeilingValue(t.db, tiny.id, s.perCaller, 1);
    await setPlanCeilingValue(t.db, mid.id, s.perCaller, 50);
    const run = Date.now().toString(36);
    const down = `down-${run}`; // from the ceiling's own value to tiny: nothing after the switch
    const up = `up-${run}`; // from tiny (1) to mid (50): an upgrade gives the new value minus what was used
    const blocked = `blocked-${run}`; // blocked on both endpoints, one without a per-caller ceiling
    const shrunk = `shrunk-${run}`; // on a plan whose value is lowered to 1 under load
    const shrinking = await makePlan(t.db, "shrinking");
    await setPlanCeilingValue(t.db, shrinking.id, s.perCaller, BIG);
    await assignAccount(t.db, up, tiny.id);
    await assignAccount(t.db, shrunk, shrinking.id);
    const requests = [
      { endpoint: s.capped.key, caller: down, amount: 1 },
      { endpoint: s.capped.key, caller: up, amount: 1 },
      { endpoint: s.capped.key, caller: blocked, amount: 1 },
      { endpoint: other.key, caller: blocked, amount: 1 },
      { endpoint: s.capped.key, caller: shrunk, amount: 1 },
    ];
    const at: Record<string, Date> = {};
    const storms = await runStorms(
      t.url,
      [0, 1, 2].map(() => ({ requests, durationMs: 5_000, concurrency: 20 })),
      async () => {
        await sleep(1_500);
        at.down = await assignAccount(t.db, down, tiny.id);
        at.up = await assignAccount(t.db, up, mid.id);
        at.blocked = await setBlocked(t.db, blocked, true);
        at.shrunk = await setPlanCeilingValue(t.db, shrinking.id, s.perCaller, 1);
      },
    );
    expect(storms.reduce((n, r) => n + r.unavailable, 0)).toBe(0);
    const grantsAfter = (caller: string, after: Date) =>
      countRows(t.db, sql`select count(*) as n from reservations where caller = ${caller} and created_at > ${after.toISOString()}::timestamptz`);
    const grantsBefore = (caller: string, before: Date) =>
      countRows(t.db, sql`select count(*) as n from reservations where caller = ${caller} and created_at <= ${before.toISOString()}::timestamptz`);
    // Load ran before each change, and nothing granted started after it.
    expect(await grantsBefore(down, at.down as Date)).toBeGreaterThan(10);
    expect(await grantsAfter(down, at.down as Date)).toBe(0);
    expect(await grantsBefore(blocked, at.blocked as Date)).toBeGreaterThan(10);
    expect(await grantsAfter(blocked, at.blocked as Date)).toBe(0);
    // A plan's value lowered under load binds like a ceiling's: it waits for the batches in flight.
    expect(await grantsBefore(shrunk, at.shrunk as Date)).toBeGreaterThan(10);
    expect(await grantsAfter(shrunk, at.shrunk as Date)).toBe(0);
    // The refusals the block caused are logged under their own gate, on both endpoints.
    const blockedRefusals = await countRows(t.db, sql`select count(distinct endpoint_key) as n from refusals where caller = ${blocked} and gate = 'blocked'`);
    expect(blockedRefusals).toBe(2);
    // The upgrade: exactly the new value in the window, however the grants fell around the switch.
    expect(sumGrants(storms)[up]).toBe(50);
    expect(await heldOn(s.perCaller, up)).toBe(50);
  });

  it("applies override > plan > own value, a kill over all of them and a block over everything, on ceilings and budgets", async () => {
    const s = await shapes(5);
    const caller = `prec-${Date.now().toString(36)}`;
    const plan = await makePlan(t.db, "prec");
    const defaultPlan = await defaultPlanId(t.db);
    const limits = async () => {
      // One unit more than any value here: refused, and the refusal names what bound.
      const c = await reserve(t.db, { endpoint: s.capped.key, caller, amount: 1_000 }).catch((e: unknown) => e);
      const b = await reserve(t.db, { endpoint: s.priced.key, caller, amount: 1_000 }).catch((e: unknown) => e);
      const [readers] = resultRows<{ c: string; cs: string; b: string; bs: string }>(
        await t.db
          .execute(sql`select (ceilings.caller_limit(${s.perCaller}, ${caller})).value as c, (ceilings.caller_limit(${s.perCaller}, ${caller})).source as cs,
                                      (ceilings.account_budget_limit(${s.budget.id}, ${caller})).value as b, (ceilings.account_budget_limit(${s.budget.id}, ${caller})).source as bs`),
      );
      const gateLimit = (d: unknown) =>
        d && typeof d === "object" && "status" in d && d.status === "refused" && "gate" in d
          ? `${String(d.gate)}:${"limit" in d ? String(d.limit) : ""}`
          : JSON.stringify(d);
      return { ceiling: gateLimit(c), budget: gateLimit(b), readers: `${readers?.c}:${readers?.cs} ${readers?.b}:${readers?.bs}` };
    };

    expect(await limits()).toEqual({ ceiling: "ceiling:5", budget: "budget:5", readers: "5:ceiling 5:budget" });
    // The default plan's value binds an account never assigned.
    await setPlanCeilingValue(t.db, defaultPlan, s.perCaller, 8);
    await setPlanBudgetValue(t.db, defaultPlan, s.budget.id, 8);
    expect(await limits()).toEqual({ ceiling: "ceiling:8", budget: "budget:8", readers: "8:plan 8:plan" });
    await assignAccount(t.db, caller, plan.id);
    // On a plan without values: the own values again.
    expect(await limits()).toEqual({ ceiling: "ceiling:5", budget: "budget:5", readers: "5:ceiling 5:budget" });
    await setPlanCeilingValue(t.db, plan.id, s.perCaller, 10);
    await setPlanBudgetValue(t.db, plan.id, s.budget.id, 10);
    expect(await limits()).toEqual({ ceiling: "ceiling:10", budget: "budget:10", readers: "10:plan 10:plan" });
    await insertOverride(t.db, "ceiling", s.perCaller, { caller, value: 3, reason: "test" });
    await insertOverride(t.db, "budget", s.budget.id, { caller, value: 3, reason: "test" });
    expect(await limits()).toEqual({ ceiling: "ceiling:3", budget: "budget:3", readers: "3:override 3:override" });
    // A plan of 0 refuses the plan's accounts, unless their own override says otherwise.
    await setPlanCeilingValue(t.db, plan.id, s.perCaller, 0);
    expect((await limits()).ceiling).toBe("ceiling:3");
    await deleteOverrides(t.db, "ceiling", s.perCaller, caller);
    expect((await limits()).ceiling).toBe("ceiling:0");
    await setPlanCeilingValue(t.db, plan.id, s.perCaller, 10);
    // A kill binds every account whatever its override or plan.
    await setCeilingValue(t.db, s.perCaller, 0);
    await setBudgetValue(t.db, s.budget.id, 0);
    expect(await limits()).toEqual({ ceiling: "kill_switch:0", budget: "budget:0", readers: "0:kill 0:kill" });
    await setCeilingValue(t.db, s.perCaller, 5);
    await setBudgetValue(t.db, s.budget.id, 5);
    // A block refuses before any of it, and its undoing puts back exactly what was there.
    await setBlocked(t.db, caller, true);
    expect(await limits()).toEqual({ ceiling: "blocked:0", budget: "blocked:0", readers: "0:blocked 0:blocked" });
    await setBlocked(t.db, caller, false);
    expect(await limits()).toEqual({ ceiling: "ceiling:10", budget: "budget:3", readers: "10:plan 3:override" });
    await t.db.execute(
      sql`delete from plan_limit_values where plan_id = ${defaultPlan} and limit_id = (select limit_id from ceilings where id = ${s.perCaller})`,
    );
  });

  it("answers a blocked account's retry of a grant made before the block as the replay it is, and refuses its new calls", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    const caller = `replay-${Date.now().toString(36)}`;
    const first = await reserve(t.db, { endpoint: e.key, caller, amount: 1, idempotencyKey: "k1" });
    expect(first.status).toBe("granted");
    await setBlocked(t.db, caller, true);
    expect(await reserve(t.db, { endpoint: e.key, caller, amount: 1, idempotencyKey: "k1" })).toMatchObject({ status: "granted", replay: true });
    expect(await reserve(t.db, { endpoint: e.key, caller: ` ${caller}\t`, amount: 1, idempotencyKey: "k2" })).toMatchObject({
      status: "refused",
      gate: "blocked",
      message: `account ${caller} is blocked`,
    });
  });

  it("registers each new caller once while three pools send the same new accounts in different orders", { timeout: 60_000 }, async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
    const run = Date.now().toString(36);
    const callers = Array.from({ length: 60 }, (_, i) => `new-${run}-${i}`);
    const pools = openPools(t.url, 3, 4);
    try {
      const orders = [callers, [...callers].reverse(), [...callers.slice(30), ...callers.slice(0, 30)]];
      const decisions = await Promise.all(
        pools.dbs.flatMap((db, p) => (orders[p] ?? []).map((caller) => reserve(db, { endpoint: e.key, caller: `${caller} `, amount: 1 }))),
      );
      expect(decisions.filter((d) => d.status !== "granted")).toEqual([]);
    } finally {
      await pools.close();
    }
    expect(await countRows(t.db, sql`select count(*) as n from accounts where account like ${`new-${run}-%`}`)).toBe(60);
    // A request the batch refuses as input names no account: nothing registered for it.
    await expect(reserve(t.db, { endpoint: "no.such.endpoint", caller: `ghost-${run}`, amount: 1 })).rejects.toThrow(/unknown endpoint/);
    expect(await countRows(t.db, sql`select count(*) as n from accounts where account = ${`ghost-${run}`}`)).toBe(0);
    // On a known endpoint the caller is registered even when its request is an input error.
    const [typo] = resultRows<{ a: { code: string } }>(await t.db.execute(sql`select ceilings.reserve(${e.key}, 0, ${`typo-${run}`}) as a`));
    expect(typo?.a.code).toBe("invalid_amount");
    expect(await countRows(t.db, sql`select count(*) as n from accounts where account = ${`typo-${run}`}`)).toBe(1);
  });

  it(
    "does not wait on an account another transaction is inserting: the batch is decided, the registration left to that transaction",
    { timeout: 30_000 },
    async () => {
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: BIG }] });
      const run = Date.now().toString(36);
      const pending = `pending-${run}`;
      // A bulk assignment's transaction, holding its new account uncommitted.
      const bulk = await holdTransaction(t.db, (tx) => tx.execute(sql`insert into accounts (account) values (${pending})`));
      try {
        const started = Date.now();
        const [row] = resultRows<{ d: { status: string }[] }>(
          await t.db.execute(
            sql`select ceilings.reserve_batch(${JSON.stringify([
              { endpoint: e.key, amount: 1, caller: `other-${run}` },
              { endpoint: e.key, amount: 1, caller: pending },
            ])}::jsonb) as d`,
          ),
        );
        expect(row?.d.map((d) => d.status)).toEqual(["granted", "granted"]);
        // Well under the enforcement lock_timeout (1 s) a wait would have run into.
        expect(Date.now() - started).toBeLessThan(900);
      } finally {
        await bulk.release();
      }
      // The held transaction registered its account; the other new caller of that batch is registered
      // by its next batch (the skipped insert was one statement for both).
      expect(await countRows(t.db, sql`select count(*) as n from accounts where account = ${pending}`)).toBe(1);
      await reserve(t.db, { endpoint: e.key, amount: 1, caller: `other-${run}` });
      expect(await countRows(t.db, sql`select count(*) as n from accounts where account = ${`other-${run}`}`)).toBe(1);
    },
  );
});
