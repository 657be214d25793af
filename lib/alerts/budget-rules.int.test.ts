import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts, budgets } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { AuditActor } from "@/lib/audit/record";
import { adjustBudget } from "@/lib/budgets/adjust";
import { killBudget, restoreBudget } from "@/lib/budgets/kill";
import { setupControl } from "@/lib/control/context";
import { makeBudget } from "@/lib/enforcement/budget-fixtures";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { InboxFilters, listInbox } from "./inbox";
import { fireBudgetAdjustmentAlerts, fireBudgetKillRestoreAlerts, runAlertRules } from "./rules";

const actor: AuditActor = { type: "staff", email: "ops@example.com" };
const settings = { unavailableBurst: 1000, unavailableWindowMinutes: 5, refusalSpike: 1000, refusalSpikeWindowMinutes: 5, adjustFactor: 5 };
const WORKERS = 6;

describe.skipIf(skipWithoutDatabase())("a budget's kill, restore and large adjustment alert once each, on real Postgres", () => {
  const t = useTestDatabase("alert_budget_rules", { max: WORKERS + 2 });

  const alertsOfBudget = (budgetId: number) => t.db.select().from(alerts).where(eq(alerts.budgetId, budgetId)).orderBy(alerts.id);
  const version = async (id: number) => (await t.db.select({ v: budgets.version }).from(budgets).where(eq(budgets.id, id)))[0]?.v ?? 0;

  /** Several workers run the rule at the same moment, each on its own connection: the sum of what they fired. */
  async function race(rule: () => Promise<number>): Promise<number> {
    const fired = await Promise.all(Array.from({ length: WORKERS }, rule));
    return fired.reduce((a, b) => a + b, 0);
  }

  it("a kill and its restore alert once each, with every worker racing, to the inbox and every destination", async () => {
    await t.db.insert(alertDestinations).values([
      { name: "hook", kind: "webhook", target: "https://hooks.example.com/a", createdBy: "test" },
      {
        name: "mail",
        kind: "email",
        target: "ops@example.com",
        createdBy: "test",
        smtpHost: "smtp.example.com",
        smtpPort: 587,
        smtpTls: "starttls",
        emailFrom: "c@example.com",
      },
    ]);
    const a = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const b = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const budget = await makeBudget(t.db, { endpointIds: [a.endpointId, b.endpointId], value: 200_000_000 });

    await killBudget(t.db, { key: budget.key, actor, reason: "bill spike" });
    expect(await race(() => fireBudgetKillRestoreAlerts(t.db))).toBe(1);
    expect(await fireBudgetKillRestoreAlerts(t.db)).toBe(0);
    const [kill] = await alertsOfBudget(budget.id);
    expect(kill?.kind).toBe("budget_kill");
    expect(kill?.message).toBe(
      `budget ${budget.key} was killed by ops@example.com: every call on its 2 member(s) is refused (${[a.key, b.key].sort().join(", ")}) (bill spike)`,
    );
    expect(kill?.details).toMatchObject({ budget: budget.key, budgetId: budget.id, members: [a.key, b.key].sort() });

    await restoreBudget(t.db, { key: budget.key, actor });
    expect(await race(() => fireBudgetKillRestoreAlerts(t.db))).toBe(1);
    const fired = await alertsOfBudget(budget.id);
    expect(fired.map((x) => x.kind)).toEqual(["budget_kill", "budget_restore"]);
    expect(fired[1]?.message).toBe(`budget ${budget.key} was restored by ops@example.com to $200.00: its 2 member(s) spend again`);

    // Killed again: a new event, a new alert.
    await killBudget(t.db, { key: budget.key, actor });
    expect(await race(() => fireBudgetKillRestoreAlerts(t.db))).toBe(1);
    const all = await alertsOfBudget(budget.id);
    expect(all.map((x) => x.kind)).toEqual(["budget_kill", "budget_restore", "budget_kill"]);

    // The inbox filters by the kind, names the budget and links to its page.
    const inbox = await listInbox(t.db, InboxFilters.parse({ kind: "budget_kill" }));
    const shown = inbox.alerts.filter((x) => x.budgetKey === budget.key);
    expect(shown).toHaveLength(2);
    expect(shown[0]?.links).toEqual({ chart: `/budgets/${budget.key}#spend`, refusals: `/budgets/${budget.key}#refusals` });
    expect(inbox.kinds).toContainEqual({ kind: "budget_kill", n: 2 });

    // Exactly one delivery per alert and destination (the outbox), whoever fired it.
    const deliveries = await t.db
      .select({ alertId: alertDeliveries.alertId, n: sql<number>`count(*)`.mapWith(Number) })
      .from(alertDeliveries)
      .where(
        inArray(
          alertDeliveries.alertId,
          all.map((x) => x.id),
        ),
      )
      .groupBy(alertDeliveries.alertId);
    expect(deliveries.map((d) => d.n)).toEqual([2, 2, 2]);
  });

  it("a change of the factor or more alerts once, up or down; below it, and a kill or restore, not as an adjustment", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 10_000_000 });
    await t.db.update(budgets).set({ maxValue: 1_000_000_000 }).where(eq(budgets.id, budget.id));
    const adjust = async (input: string) =>
      // The raises stand for approved ones (change control); the rule reads the budget.adjust events.
      adjustBudget(t.db, {
        key: budget.key,
        input,
        confirm: input,
        expectedVersion: await version(budget.id),
        actor,
        reason: "test",
        changeControl: setupControl("test"),
      });

    await adjust("40"); // 4x
    expect(await race(() => fireBudgetAdjustmentAlerts(t.db, 5))).toBe(0);
    await adjust("200"); // 5x
    await adjust("20"); // lowered 10x
    await killBudget(t.db, { key: budget.key, actor });
    await restoreBudget(t.db, { key: budget.key, actor });
    expect(await race(() => fireBudgetAdjustmentAlerts(t.db, 5))).toBe(2);
    expect(await fireBudgetAdjustmentAlerts(t.db, 5)).toBe(0);
    const fired = (await alertsOfBudget(budget.id))
      .filter((x) => x.kind === "budget_adjustment")
      .map((x) => x.message)
      .sort();
    expect(fired).toEqual([
      `budget ${budget.key} lowered from $200.00 to $20.00 by ops@example.com (test)`,
      `budget ${budget.key} raised from $40.00 to $200.00 by ops@example.com (test)`,
    ]);
  });

  it("the worker's loop runs the budget rules: all of it at once from several workers fires each alert once", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 5_000_000 });
    await fireBudgetKillRestoreAlerts(t.db); // the earlier tests' events
    await killBudget(t.db, { key: budget.key, actor });
    const runs = await Promise.all(Array.from({ length: WORKERS }, () => runAlertRules(t.db, settings)));
    expect(runs.reduce((n, r) => n + (r.budgetKillRestore ?? 0), 0)).toBe(1);
    expect((await alertsOfBudget(budget.id)).map((x) => x.kind)).toEqual(["budget_kill"]);
  });
});
