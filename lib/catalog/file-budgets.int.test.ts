import { InputError } from "@/lib/errors";
import { count, eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, budgets } from "@/db/schema";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Db } from "@/db/client";
import { applyCatalog, EndpointSpec, exportCatalog, planCatalog } from "@/lib/catalog";
import { readBudget } from "@/lib/budgets/read";

// Budgets in the catalog file: export writes them, plan prints each change with the money worst
// case before and after, apply makes them through the budget writes and their audit events (actor
// type config), and export then apply on a fresh database reproduces them.

const config = { type: "config", name: "ci" } as const;
const DOLLAR = 1_000_000;
let n = 0;

type Json = Record<string, unknown>;

/**
 * An endpoint spec with whichever price field the catalog's EndpointSpec takes (`parts`, or the
 * older `unitPriceMicros` until the priced-parts change lands): what these tests check does not
 * depend on the price.
 */
function priced(e: Json): Json {
  const { unitPriceMicros: _u, parts: _p, ...rest } = e;
  for (const price of [{ parts: [{ name: "units", pricePico: 1_000_000 }] }, { unitPriceMicros: 1 }]) {
    if (EndpointSpec.safeParse({ ...rest, ...price }).success) return { ...rest, ...price };
  }
  return e;
}

function endpoint(key: string, extra: Json = {}): Json {
  return priced({
    key,
    name: key,
    unit: "tokens",
    perCallMax: 4000,
    ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000, min: 0, max: 2_000_000, default: 1_000_000 }],
    ...extra,
  });
}

function budget(key: string, members: string[], extra: Json = {}): Json {
  return {
    key,
    name: `budget ${key}`,
    scope: "global",
    window: "utc_day",
    value: 200 * DOLLAR,
    min: 0,
    max: 500 * DOLLAR,
    default: 200 * DOLLAR,
    members,
    ...extra,
  };
}

/** The catalog in force as a file (every endpoint and budget), for a test to add to. */
async function current(db: Db): Promise<{ endpoints: Json[]; budgets: Json[]; [k: string]: unknown }> {
  const file = (await exportCatalog(db)) as unknown as { endpoints: Json[]; budgets: Json[] };
  return { ...file, endpoints: file.endpoints.map(priced), budgets: file.budgets };
}

/** The budgets' part of a plan: each budget's changes (the endpoints' are lib/catalog's to test). */
async function budgetChanges(db: Db, text: string): Promise<string[]> {
  const plan = await planCatalog(db, text);
  if (!plan.ok) throw new Error(plan.errors.join("\n"));
  return plan.endpoints.filter((e) => e.key.startsWith("budget ")).flatMap((e) => e.changes.map((c) => `${e.key} ${c.action}`));
}

describe.skipIf(skipWithoutDatabase())("budgets in the catalog file", () => {
  const t = useTestDatabase("budgets_file");
  const auditCount = async (db: Db = t.db) => (await db.select({ n: count() }).from(auditEvents).where(like(auditEvents.action, "budget.%")))[0]?.n ?? 0;

  it("exports them, and export then apply on a fresh database reproduces them; a second plan changes nothing", async () => {
    n += 1;
    const [a, b, c, gone] = [`llm.a${n}`, `llm.b${n}`, `llm.c${n}`, `llm.old${n}`];
    const file = await current(t.db);
    file.endpoints.push(endpoint(a), endpoint(b), endpoint(c), endpoint(gone, { archived: true }));
    file.budgets.push(
      budget(`llm.all${n}`, [a, b, c, gone]),
      budget(`llm.each${n}`, [a, b], {
        scope: "account",
        window: "billing_month",
        billingDay: 15,
        value: 2 * DOLLAR,
        max: 10 * DOLLAR,
        default: 2 * DOLLAR,
        overrides: [{ caller: "acme", value: 0, reason: "abuse" }],
      }),
      budget(`llm.off${n}`, [c], { killed: true }),
    );
    const applied = await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "from file", confirmRaise: false });
    expect(applied.endpoints.filter((e) => e.key.startsWith("budget ")).map((e) => e.changes.map((x) => x.action))).toEqual([
      ["budget.create"],
      ["budget.create"],
      ["budget.create"],
    ]);
    expect((await readBudget(t.db, `llm.off${n}`)).budget).toMatchObject({ value: 0, valueBeforeKill: 200 * DOLLAR });
    const [created] = await t.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.target, `llm.all${n}`));
    expect(created).toMatchObject({ action: "budget.create", actorType: "config", actor: "ci" });
    expect(created?.details).toMatchObject({ via: "catalog file", sha256: applied.sha256 });

    const exported = await current(t.db);
    expect(exported.budgets.find((x) => x.key === `llm.each${n}`)).toMatchObject({
      scope: "account",
      billingDay: 15,
      members: [a, b],
      overrides: [{ caller: "acme", value: 0, reason: "abuse" }],
    });
    expect(await budgetChanges(t.db, JSON.stringify(exported))).toEqual([]);

    const fresh = await createTestDatabase("budgets_file_fresh");
    try {
      await applyCatalog(fresh.db, { text: JSON.stringify(exported), actor: config, reason: "restore", confirmRaise: true });
      expect((await current(fresh.db)).budgets).toEqual(exported.budgets);
      expect(await budgetChanges(fresh.db, JSON.stringify(exported))).toEqual([]);
      const before = await auditCount(fresh.db);
      await applyCatalog(fresh.db, { text: JSON.stringify(exported), actor: config, reason: "twice", confirmRaise: false });
      expect(await auditCount(fresh.db)).toBe(before);
    } finally {
      await fresh.drop();
    }
  });

  it("plans each change with the money worst case before and after, and applies them through the budget's events", async () => {
    n += 1;
    const [a, b, c] = [`llm.pa${n}`, `llm.pb${n}`, `llm.pc${n}`];
    const key = `llm.plan${n}`;
    const file = await current(t.db);
    file.endpoints.push(endpoint(a), endpoint(b), endpoint(c));
    file.budgets.push(budget(key, [a, b]));
    await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "r", confirmRaise: false });

    const next = await current(t.db);
    const target = next.budgets.find((x) => x.key === key) ?? {};
    // A lower value: one person's change (a raise in a file needs a second admin, below).
    Object.assign(target, { name: "All models", members: [a, b, c], value: 150 * DOLLAR, alertThresholds: [80, 100] });
    const plan = await planCatalog(t.db, JSON.stringify(next));
    if (!plan.ok) throw new Error(plan.errors.join("\n"));
    const mine = plan.endpoints.find((e) => e.key === `budget ${key}`);
    expect(mine?.changes.map((x) => x.action)).toEqual(["budget.update", "budget.adjust"]);
    const lines = [...(mine?.changes.flatMap((x) => x.lines) ?? []), ...(mine?.worstCase ?? [])].join("\n");
    expect(lines).toContain(`~ members: + ${c}`);
    expect(lines).toContain("~ value $200.00 → $150.00");
    expect(lines).toContain(`worst case: at most $200.00 a day across ${a} and ${b} → at most $150.00 a day across ${a}, ${b} and ${c}`);
    await applyCatalog(t.db, { text: JSON.stringify(next), actor: config, reason: "r", confirmRaise: false });
    const after = await readBudget(t.db, key);
    expect(after.spec).toMatchObject({ name: "All models", members: [a, b, c], value: 150 * DOLLAR, alertThresholds: [80, 100] });
    const events = await t.db.select().from(auditEvents).where(eq(auditEvents.target, key)).orderBy(auditEvents.id);
    expect(events.map((e) => e.action)).toEqual(["budget.create", "budget.update", "budget.adjust"]);
    expect(events[2]).toMatchObject({ previousValue: 200 * DOLLAR, appliedValue: 150 * DOLLAR, actorType: "config" });

    // A raise to 5x or more needs --confirm-raise; without it nothing applies.
    Object.assign(target, { value: 500 * DOLLAR, max: 2000 * DOLLAR, name: "Bigger" });
    Object.assign(target, { value: 1500 * DOLLAR });
    await expect(applyCatalog(t.db, { text: JSON.stringify(next), actor: config, reason: "r", confirmRaise: false })).rejects.toMatchObject({
      code: "confirmation_required",
    });
    expect((await readBudget(t.db, key)).spec.name).toBe("All models");
    // Confirmed, it is still a raise: it needs a second admin (change control), and nothing applies.
    await expect(applyCatalog(t.db, { text: JSON.stringify(next), actor: config, reason: "r", confirmRaise: true })).rejects.toMatchObject({
      code: "approval_required",
    });
    expect((await readBudget(t.db, key)).budget.value).toBe(150 * DOLLAR);
  });

  it("never lifts a kill unless the file says killed: false", async () => {
    n += 1;
    const key = `llm.kill${n}`;
    const file = await current(t.db);
    file.endpoints.push(endpoint(`llm.k${n}`));
    file.budgets.push(budget(key, [`llm.k${n}`]));
    await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "r", confirmRaise: false });
    const kill = await current(t.db);
    Object.assign(kill.budgets.find((x) => x.key === key) ?? {}, { killed: true });
    const killed = await applyCatalog(t.db, { text: JSON.stringify(kill), actor: config, reason: "incident", confirmRaise: false });
    expect(killed.endpoints.filter((e) => e.key.startsWith("budget ")).flatMap((e) => e.changes.map((x) => x.action))).toEqual(["budget.kill"]);
    expect((await readBudget(t.db, key)).budget).toMatchObject({ value: 0, valueBeforeKill: 200 * DOLLAR });
    const silent = await current(t.db);
    delete (silent.budgets.find((x) => x.key === key) ?? {}).killed;
    expect(await budgetChanges(t.db, JSON.stringify(silent))).toEqual([]);
    Object.assign(silent.budgets.find((x) => x.key === key) ?? {}, { killed: false });
    const restored = await applyCatalog(t.db, { text: JSON.stringify(silent), actor: config, reason: "over", confirmRaise: false });
    expect(restored.endpoints.filter((e) => e.key.startsWith("budget ")).flatMap((e) => e.changes.map((x) => x.action))).toEqual(["budget.restore"]);
    expect((await readBudget(t.db, key)).budget.value).toBe(200 * DOLLAR);
  });

  const badFiles: [string, (f: Awaited<ReturnType<typeof current>>, k: string) => void, string][] = [
    ["a budget with no members", (f, k) => void Object.assign(f.budgets.find((b) => b.key === k) ?? {}, { members: [] }), "members"],
    [
      "a member that is not in the file",
      (f, k) => void Object.assign(f.budgets.find((b) => b.key === k) ?? {}, { members: ["llm.nowhere"] }),
      ".members[0]: no endpoint 'llm.nowhere' in this file",
    ],
    [
      "members in two currencies",
      (f) => void (f.endpoints.push(endpoint("llm.euro", { currency: "EUR" })), f.budgets.push(budget("llm.mixed", [String(f.endpoints[0]?.key), "llm.euro"]))),
      ".members[1]: endpoint 'llm.euro' is priced in EUR",
    ],
    [
      "an unknown window",
      (f, k) => void Object.assign(f.budgets.find((b) => b.key === k) ?? {}, { window: "first_hit" }),
      "window must be utc_day or billing_month",
    ],
    [
      "a budget left out",
      (f, k) =>
        void f.budgets.splice(
          f.budgets.findIndex((b) => b.key === k),
          1,
        ),
      "is in the database but not in the file",
    ],
    ["a budget listed twice", (f, k) => void f.budgets.push({ ...f.budgets.find((b) => b.key === k) }), "is listed twice"],
    [
      "a window that changes",
      (f, k) => void Object.assign(f.budgets.find((b) => b.key === k) ?? {}, { window: "billing_month" }),
      "a budget's window cannot change",
    ],
    [
      "overrides on a global budget",
      (f, k) => void Object.assign(f.budgets.find((b) => b.key === k) ?? {}, { overrides: [{ caller: "a", value: 0, reason: "r" }] }),
      "overrides are for a per-account budget",
    ],
    [
      "an archived endpoint joining a live budget",
      (f, k) => {
        const target = f.budgets.find((b) => b.key === k) ?? {};
        target.members = [...(target.members as string[]), "llm.retired"];
      },
      ".members[1]: endpoint 'llm.retired' is archived",
    ],
  ];

  it.each(badFiles)("refuses %s with its path, and applies nothing", async (_what, mutate, expected) => {
    n += 1;
    const key = `llm.bad${n}`;
    const setup = await current(t.db);
    setup.endpoints.push(endpoint(`llm.x${n}`));
    // An archived endpoint in the database, for the case of one joining a live budget.
    if (!setup.endpoints.some((e) => e.key === "llm.retired")) setup.endpoints.push(endpoint("llm.retired", { archived: true }));
    setup.budgets.push(budget(key, [`llm.x${n}`]));
    await applyCatalog(t.db, { text: JSON.stringify(setup), actor: config, reason: "r", confirmRaise: false });
    const file = await current(t.db);
    mutate(file, key);
    const text = JSON.stringify(file);
    const plan = await planCatalog(t.db, text);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.errors.join("\n")).toContain(expected);
    const allAudit = async () => (await t.db.select({ n: count() }).from(auditEvents))[0]?.n ?? 0;
    const before = { audit: await allAudit(), budgets: await t.db.select().from(budgets).where(like(budgets.key, "llm.%")) };
    await expect(applyCatalog(t.db, { text, actor: config, reason: "bad", confirmRaise: true })).rejects.toBeInstanceOf(InputError);
    expect({ audit: await allAudit(), budgets: await t.db.select().from(budgets).where(like(budgets.key, "llm.%")) }).toEqual(before);
  });
});
