import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alerts, auditEvents, refusals } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { KeysetCursor } from "@/lib/keyset";
import { DAY_MS, MINUTE_MS } from "@/lib/time";
import { budgetsOfEndpoint, listBudgets, listBudgetSummaries, readBudgetDetail } from "./index";
import { insertBudget, insertEndpoint, insertReservation } from "./read-fixtures";
import { insertOverride } from "@/lib/limits/test-fixtures";
import { insertCounters } from "@/lib/counters/insert";

const USD = 1_000_000;
// Noon UTC: half the day has passed, so the pace is half the value and the projection twice the spend.
const NOW = new Date("2026-03-10T12:00:00Z");
const TODAY = new Date("2026-03-10T00:00:00Z");
const TOMORROW = new Date("2026-03-11T00:00:00Z");
const daysAgo = (n: number) => new Date(TODAY.getTime() - n * DAY_MS);

describe.skipIf(skipWithoutDatabase())("budget reads", () => {
  const t = useTestDatabase("budget_reads");

  it("reads nothing when there are no budgets, and no budget for an unknown key", async () => {
    const e = await insertEndpoint(t.db);
    expect(await listBudgets(t.db, { now: NOW })).toEqual([]);
    expect(await listBudgetSummaries(t.db, { now: NOW })).toEqual([]);
    expect(await readBudgetDetail(t.db, { key: "no.such", now: NOW })).toBeNull();
    expect(await budgetsOfEndpoint(t.db, { endpointId: e.id, now: NOW })).toEqual([]);
  });

  it("shows a budget with no spend yet: zero spend, live, empty history of 30 and 90 days", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id] });
    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail).toMatchObject({ spend: 0, held: 0, settled: 0, state: "live", crossed: null, ratio: 0, busiest: null, topAccounts: [] });
    expect(detail?.topAccounts90.accounts).toEqual([]);
    expect(detail?.span).toEqual({ start: TODAY, end: TOMORROW });
    expect(detail?.progress).toEqual({ elapsed: 0.5, pace: 50 * USD, projection: 0 });
    expect(detail?.members).toEqual([{ endpointId: e.id, key: e.key, name: `Test ${e.key}`, archived: false, money: 0, reservations: 0 }]);
    expect(detail?.history[30].windows).toHaveLength(30);
    expect(detail?.history[90].windows).toHaveLength(90);
    expect(detail?.history[90].windows.at(-1)).toMatchObject({ day: "2026-03-10", spend: 0, value: 100_000_000 });
    expect(detail?.history[30].total).toBe(0);
    expect(detail?.refusals).toEqual({ rows: [], older: null });
    expect(detail?.adjustments).toEqual([]);
    expect(detail?.alerts).toEqual([]);
  });

  it("counts held + settled of the '' row in the open window, its threshold, pace and projection", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id], value: 100 * USD, alertThresholds: [50, 80, 100] });
    await insertCounters(t.db, [
      { budgetId: b.id, scopeKey: "", windowStart: TODAY, windowEnd: TOMORROW, held: 20 * USD, settled: 70 * USD },
      // Yesterday is history, not the open window.
      { budgetId: b.id, scopeKey: "", windowStart: daysAgo(1), windowEnd: TODAY, settled: 99 * USD },
      // 91 days ago is outside the 90 days.
      { budgetId: b.id, scopeKey: "", windowStart: daysAgo(90), windowEnd: daysAgo(89), settled: 7 * USD },
    ]);
    const [view] = await budgetsOfEndpoint(t.db, { endpointId: e.id, now: NOW });
    expect(view).toMatchObject({ key: b.key, held: 20 * USD, settled: 70 * USD, spend: 90 * USD, ratio: 0.9, crossed: 80, state: "alerting" });
    expect(view?.progress).toEqual({ elapsed: 0.5, pace: 50 * USD, projection: 180 * USD });

    // Lowered from 150 to 100 two days ago, at noon: the windows before carry 150.
    await t.db.insert(auditEvents).values([
      {
        actorType: "staff",
        actor: "admin@test.local",
        action: "budget.adjust",
        target: b.key,
        previousValue: 150 * USD,
        appliedValue: 100 * USD,
        at: new Date(daysAgo(2).getTime() + DAY_MS / 2),
      },
      { actorType: "staff", actor: "admin@test.local", action: "budget.override.set", target: b.key, previousValue: null, appliedValue: 1, at: daysAgo(1) },
    ]);
    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail?.history[30].windows.slice(-4).map((w) => w.value)).toEqual([150 * USD, 100 * USD, 100 * USD, 100 * USD]);
    expect(detail?.history[30].total).toBe(189 * USD);
    expect(detail?.history[90].total).toBe(189 * USD);
    expect(detail?.history[30].windows.slice(-2).map((w) => w.spend)).toEqual([99 * USD, 90 * USD]);
  });

  it("projects nothing in the first minutes of a window", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id], value: 100 * USD });
    await insertCounters(t.db, { budgetId: b.id, scopeKey: "", windowStart: TODAY, windowEnd: TOMORROW, settled: USD });
    const [early] = await budgetsOfEndpoint(t.db, { endpointId: e.id, now: new Date(TODAY.getTime() + 5 * MINUTE_MS) });
    expect(early?.progress.projection).toBeNull();
    const [later] = await budgetsOfEndpoint(t.db, { endpointId: e.id, now: new Date(TODAY.getTime() + 6 * 60 * MINUTE_MS) });
    expect(later?.progress.projection).toBe(4 * USD);
  });

  it("gives each member its share from the reservations created in the window that charged the budget: money held or expired, settled money, nothing released", async () => {
    const a = await insertEndpoint(t.db);
    const c = await insertEndpoint(t.db);
    const outsider = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [a.id, c.id] });
    // A second budget over the same member reads the same reservations; an archived one charges nothing.
    const twin = await insertBudget(t.db, { members: [a.id] });
    const archived = await insertBudget(t.db, { members: [a.id], archivedAt: NOW, archivedBy: "ops@test.local" });
    const both = [b.id, twin.id, archived.id];
    const at = new Date(TODAY.getTime() + 3_600_000);
    await insertReservation(t.db, { endpointId: a.id, createdAt: at, state: "held", money: 10, budgets: both });
    await insertReservation(t.db, { endpointId: a.id, createdAt: at, state: "settled", money: 50, settledMoney: 30, budgets: both });
    await insertReservation(t.db, { endpointId: a.id, createdAt: at, state: "released", money: 40, budgets: both });
    await insertReservation(t.db, { endpointId: a.id, createdAt: at, state: "expired", money: 5, budgets: both });
    await insertReservation(t.db, { endpointId: c.id, createdAt: at, state: "settled", money: 25, settledMoney: 20, budgets: [b.id] });
    // Yesterday's reservation and a non-member's count for nothing here.
    await insertReservation(t.db, { endpointId: c.id, createdAt: new Date(TODAY.getTime() - 1), state: "held", money: 1000, budgets: [b.id] });
    await insertReservation(t.db, { endpointId: outsider.id, createdAt: at, state: "held", money: 1000 });
    // Nor does one that charged no budget (made before its endpoint joined): it is not in the budget's spend.
    await insertReservation(t.db, { endpointId: a.id, createdAt: at, state: "held", money: 1000 });

    const views = await listBudgets(t.db, { now: NOW });
    const view = views.find((v) => v.key === b.key);
    expect(view?.members.map((m) => [m.key, m.money, m.reservations])).toEqual([
      [a.key, 45, 4],
      [c.key, 20, 1],
    ]);
    expect(views.find((v) => v.key === twin.key)?.members.map((m) => m.money)).toEqual([45]);
    expect(views.find((v) => v.key === archived.key)?.members.map((m) => [m.key, m.money])).toEqual([[a.key, 0]]);
  });

  it("orders killed first, then alerting, then the fullest, archived last, and says each state", async () => {
    await t.db.execute(sql`delete from counters where limit_id in (select limit_id from budgets)`);
    const e = await insertEndpoint(t.db);
    const live = await insertBudget(t.db, { members: [e.id], key: "z.live", value: 100 * USD });
    const fuller = await insertBudget(t.db, { members: [e.id], key: "y.fuller", value: 100 * USD });
    const killed = await insertBudget(t.db, {
      members: [e.id],
      key: "x.killed",
      value: 0,
      valueBeforeKill: 100 * USD,
      killedAt: NOW,
      killedBy: "ops@test.local",
    });
    const archived = await insertBudget(t.db, { members: [e.id], key: "a.archived", archivedAt: NOW, archivedBy: "ops@test.local" });
    const alerting = await insertBudget(t.db, { members: [e.id], key: "w.alerting", value: 100 * USD });
    await insertCounters(t.db, [
      { budgetId: live.id, scopeKey: "", windowStart: TODAY, windowEnd: TOMORROW, settled: 10 * USD },
      { budgetId: fuller.id, scopeKey: "", windowStart: TODAY, windowEnd: TOMORROW, settled: 40 * USD },
      { budgetId: alerting.id, scopeKey: "", windowStart: TODAY, windowEnd: TOMORROW, settled: 50 * USD },
    ]);
    const views = await budgetsOfEndpoint(t.db, { endpointId: e.id, now: NOW });
    expect(views.map((v) => [v.key, v.state])).toEqual([
      ["x.killed", "killed"],
      ["w.alerting", "alerting"],
      ["y.fuller", "live"],
      ["z.live", "live"],
      ["a.archived", "archived"],
    ]);
    expect(views[0]).toMatchObject({ ratio: 1, valueBeforeKill: 100 * USD, killedBy: "ops@test.local" });
    const listed = (await listBudgets(t.db, { now: NOW }))
      .map((v) => v.key)
      .filter((k) => [live.key, fuller.key, killed.key, archived.key, alerting.key].includes(k));
    expect(listed).toEqual(["x.killed", "w.alerting", "y.fuller", "z.live", "a.archived"]);
    const summaries = (await listBudgetSummaries(t.db, { now: NOW })).map((v) => v.key).filter((k) => listed.includes(k));
    expect(summaries).toEqual(listed);
  });

  it("reads a billing-month budget in its billing month, and its history per month", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id], window: "billing_month", billingDay: 15, value: 3000 * USD });
    const feb = new Date("2026-02-15T00:00:00Z");
    const mar = new Date("2026-03-15T00:00:00Z");
    const jan = new Date("2026-01-15T00:00:00Z");
    await insertCounters(t.db, [
      { budgetId: b.id, scopeKey: "", windowStart: feb, windowEnd: mar, settled: 1000 * USD, held: 5 * USD },
      { budgetId: b.id, scopeKey: "", windowStart: jan, windowEnd: feb, settled: 2500 * USD },
    ]);
    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail?.span).toEqual({ start: feb, end: mar });
    expect(detail?.spend).toBe(1005 * USD);
    // 30 days back from Mar 10 reaches Feb 9: the January window; 90 days reaches Dec 11.
    expect(detail?.history[30].windows.map((w) => [w.day, w.spend])).toEqual([
      ["2026-01-15", 2500 * USD],
      ["2026-02-15", 1005 * USD],
    ]);
    expect(detail?.history[90].windows.map((w) => w.day)).toEqual(["2025-11-15", "2025-12-15", "2026-01-15", "2026-02-15"]);
  });

  it("reads a per-account budget: the sum over accounts, the account nearest its own value, the top accounts now and over 90 days", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id], scope: "account", value: 100 * USD, alertThresholds: [80] });
    await insertOverride(t.db, "budget", b.id, { caller: "acct-c", value: 50 * USD, reason: "small plan" });
    await insertOverride(t.db, "budget", b.id, { caller: "acct-d", value: 0, reason: "blocked" });
    const row = (scopeKey: string, settled: number, held = 0, start = TODAY) => ({
      budgetId: b.id,
      scopeKey,
      windowStart: start,
      windowEnd: new Date(start.getTime() + DAY_MS),
      settled: settled * USD,
      held: held * USD,
    });
    await insertCounters(t.db, [
      row("acct-a", 60),
      row("acct-b", 70, 10),
      row("acct-c", 45),
      row("acct-d", 5),
      row("acct-a", 300, 0, daysAgo(10)),
      row("acct-e", 90, 0, daysAgo(40)),
      row("acct-old", 999, 0, daysAgo(95)),
    ]);
    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail).toMatchObject({ spend: 190 * USD, held: 10 * USD, settled: 180 * USD, accounts: 4, crossed: 80, state: "alerting", ratio: 0.9 });
    // acct-c at 45 of its 50 binds before acct-b at 80 of 100; acct-d's override of 0 blocks it, it is not full.
    expect(detail?.busiest).toMatchObject({ account: "acct-c", spend: 45 * USD, value: 50 * USD, projection: 90 * USD });
    expect(detail?.topAccounts.map((a) => [a.account, a.spend, a.value])).toEqual([
      ["acct-b", 80 * USD, 100 * USD],
      ["acct-a", 60 * USD, 100 * USD],
      ["acct-c", 45 * USD, 50 * USD],
      ["acct-d", 5 * USD, 0],
    ]);
    // Settled money over 90 days (acct-b's 10 held is in flight); acct-old is 95 days back.
    expect(detail?.topAccounts90.accounts.map((a) => [a.account, a.settled, a.windows])).toEqual([
      ["acct-a", 360 * USD, 2],
      ["acct-e", 90 * USD, 1],
      ["acct-b", 70 * USD, 1],
      ["acct-c", 45 * USD, 1],
      ["acct-d", 5 * USD, 1],
    ]);
    const today = detail?.history[30].windows.at(-1);
    expect(today).toMatchObject({ spend: 190 * USD, busiest: 80 * USD, accounts: 4 });
    expect(detail?.history[30].total).toBe(490 * USD);
    expect(detail?.history[90].total).toBe(580 * USD);
    expect(detail?.overrides.total).toBe(2);
    expect(detail?.overrides.rows.map((o) => o.caller)).toEqual(["acct-c", "acct-d"]);

    const [listed] = (await listBudgets(t.db, { now: NOW })).filter((v) => v.key === b.key);
    expect(listed?.topAccounts.map((a) => a.account)).toEqual(["acct-b", "acct-a", "acct-c"]);
  });

  it("finds the account nearest its own value beyond the 50 that settled most when an override makes it so", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id], scope: "account", value: 100 * USD });
    await insertCounters(
      t.db,
      Array.from({ length: 60 }, (_, i) => ({ budgetId: b.id, scopeKey: `big-${i}`, windowStart: TODAY, windowEnd: TOMORROW, settled: (10 + i) * USD })),
    );
    // Settled less than all 60, but 2 of its own 2: it is the one at its limit.
    await insertCounters(t.db, { budgetId: b.id, scopeKey: "small-plan", windowStart: TODAY, windowEnd: TOMORROW, settled: 2 * USD });
    await insertOverride(t.db, "budget", b.id, { caller: "small-plan", value: 2 * USD, reason: "trial" });
    const [view] = (await listBudgetSummaries(t.db, { now: NOW })).filter((v) => v.key === b.key);
    expect(view?.busiest).toMatchObject({ account: "small-plan", spend: 2 * USD, value: 2 * USD });
    expect(view).toMatchObject({ ratio: 1, crossed: 100, state: "alerting", accounts: 61 });
  });

  it("lists a budget's adjustments, alerts, and its refusals newest first in keyset pages", async () => {
    const e = await insertEndpoint(t.db);
    const b = await insertBudget(t.db, { members: [e.id] });
    const other = await insertBudget(t.db, { members: [e.id] });
    const actor = { actorType: "staff" as const, actor: "admin@test.local" };
    await t.db.insert(auditEvents).values([
      { ...actor, action: "budget.create", target: b.key, at: daysAgo(2) },
      { ...actor, action: "budget.adjust", target: b.key, previousValue: 100, appliedValue: 80, at: daysAgo(1) },
      { ...actor, action: "budget.adjust", target: other.key, at: daysAgo(1) },
      { ...actor, action: "ceiling.adjust", target: b.key, at: daysAgo(1) },
    ]);
    await t.db.insert(alerts).values([
      { kind: "budget_threshold", dedupeKey: `t:${b.id}:80`, budgetId: b.id, message: "80% of the budget" },
      { kind: "budget_threshold", dedupeKey: `t:${other.id}:80`, budgetId: other.id, message: "other" },
    ]);
    const refusal = (budgetId: number, i: number, gate: "budget" | "ceiling" = "budget") => ({
      at: new Date(TODAY.getTime() + i * 1000),
      lastAt: new Date(TODAY.getTime() + i * 1000),
      bucket: new Date(TODAY.getTime() + i * 1000),
      endpointId: e.id,
      endpointKey: e.key,
      budgetId,
      gate,
      caller: `acct-${budgetId}-${i}-${gate}`,
      amount: 1,
    });
    await t.db.insert(refusals).values([...Array.from({ length: 25 }, (_, i) => refusal(b.id, i)), refusal(other.id, 100), refusal(b.id, 101, "ceiling")]);

    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail?.adjustments.map((a) => a.action)).toEqual(["budget.adjust", "budget.create"]);
    expect(detail?.alerts.map((a) => a.message)).toEqual(["80% of the budget"]);
    const first = detail?.refusals;
    expect(first?.rows).toHaveLength(20);
    expect(first?.rows[0]?.caller).toBe(`acct-${b.id}-24-budget`);
    expect(first?.older).not.toBeNull();
    const before = KeysetCursor.parse(first?.older);
    const second = (await readBudgetDetail(t.db, { key: b.key, now: NOW, refusalsBefore: before }))?.refusals;
    expect(second?.rows.map((r) => r.caller)).toEqual([4, 3, 2, 1, 0].map((i) => `acct-${b.id}-${i}-budget`));
    expect(second?.older).toBeNull();
  });

  it("reads a budget whose counter went past 2^53 micros after an overrun (the overview must not fail on it)", async () => {
    const e = await insertEndpoint(t.db);
    const max = Number.MAX_SAFE_INTEGER;
    const b = await insertBudget(t.db, { members: [e.id], value: max, maxValue: max, defaultValue: max });
    // Held to the value, then an overrun settled past it: the ledger tells the truth, past 2^53.
    await t.db.execute(sql`insert into counters (limit_id, scope_key, window_start, window_end, held, settled)
                           values ((select limit_id from budgets where id = ${b.id}), '', ${TODAY.toISOString()}::timestamptz, ${TOMORROW.toISOString()}::timestamptz, ${max}, 1000)`);
    const view = (await listBudgetSummaries(t.db, { now: NOW })).find((v) => v.key === b.key);
    expect(view?.spend).toBeGreaterThan(max);
    expect(view?.state).toBe("alerting");
    const detail = await readBudgetDetail(t.db, { key: b.key, now: NOW });
    expect(detail?.history[30].windows.at(-1)?.spend).toBeGreaterThan(max);
  });
});
