import { InputError } from "@/lib/errors";
import { count, eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, plans } from "@/db/schema";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Db } from "@/db/client";
import { applyCatalog, exportCatalog, planCatalog } from "@/lib/catalog";
import { setupControl } from "@/lib/changes";
import { readPlan } from "@/lib/plans/read";
import { planSnapshot } from "@/lib/plans/test-fixtures";

// Plans in the catalog file: export writes them (values on per-caller ceilings by endpoint, metric
// and window; on per-account budgets by key, in micros), plan prints each change, apply makes them
// through the plan writes and their audit events (actor type config), and export then apply on a
// fresh database reproduces them. A value is a definition: outside the bounds it is an error.

const config = { type: "config", name: "ci" } as const;
const DOLLAR = 1_000_000;
let n = 0;

type Json = Record<string, unknown>;
type File = { endpoints: Json[]; budgets: Json[]; plans: Json[]; [k: string]: unknown };

function endpoint(key: string): Json {
  return {
    key,
    name: key,
    unit: "emails",
    perCallMax: 10,
    parts: [{ name: "units", price: "0.001" }],
    ceilings: [
      { metric: "units", scope: "global", window: "utc_day", value: 100_000, min: 0, max: 200_000, default: 100_000 },
      { metric: "units", scope: "caller", window: "utc_day", value: 10, min: 1, max: 1000, default: 10 },
    ],
  };
}

function budget(key: string, members: string[], scope = "account"): Json {
  return { key, name: `budget ${key}`, scope, window: "utc_day", value: 2 * DOLLAR, min: DOLLAR, max: 50 * DOLLAR, default: 2 * DOLLAR, members };
}

async function current(db: Db): Promise<File> {
  return (await exportCatalog(db)) as unknown as File;
}

async function planChanges(db: Db, text: string): Promise<string[]> {
  const plan = await planCatalog(db, text);
  if (!plan.ok) throw new Error(plan.errors.join("\n"));
  return plan.endpoints.filter((e) => e.key.startsWith("plan ")).flatMap((e) => e.changes.map((c) => `${e.key} ${c.action}`));
}

// These files build plans on purpose (values above the own ones, a looser default): as setup. A
// file's plan raises asked of a second admin are tested in lib/changes/plan-paths.int.test.ts.
const control = setupControl("plans file test");

describe.skipIf(skipWithoutDatabase())("plans in the catalog file", () => {
  const t = useTestDatabase("plans_file");

  /** A file with a new endpoint (per-caller ceiling) and a per-account budget over it, applied. */
  async function setup() {
    n += 1;
    const e = `email.pf${n}`;
    const b = `llm.pf${n}`;
    const file = await current(t.db);
    file.endpoints.push(endpoint(e));
    file.budgets.push(budget(b, [e]), budget(`${b}-all`, [e], "global"));
    await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "setup", confirmRaise: false, changeControl: control });
    return { e, b };
  }

  it("exports the default plan; export then apply on a fresh database reproduces plans; a second plan changes nothing", async () => {
    const { e, b } = await setup();
    const file = await current(t.db);
    expect(file.plans).toContainEqual({ key: "default", name: "Default", description: expect.any(String), default: true, ceilings: [], budgets: [] });
    file.plans.push(
      { key: `free${n}`, name: "Free", ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 10 }], budgets: [{ budget: b, value: DOLLAR }] },
      {
        key: `pro${n}`,
        name: "Pro",
        description: "paid",
        ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 40 }],
        budgets: [{ budget: b, value: 8 * DOLLAR }],
      },
    );
    const applied = await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "tiers", confirmRaise: false, changeControl: control });
    expect(applied.endpoints.filter((x) => x.key.startsWith("plan ")).map((x) => x.changes.map((c) => c.action))).toEqual([
      ["plan.create", "plan.value.set", "plan.value.set"],
      ["plan.create", "plan.value.set", "plan.value.set"],
    ]);
    const pro = await readPlan(t.db, `pro${n}`);
    expect(pro.plan).toMatchObject({ name: "Pro", description: "paid", isDefault: false });
    expect(pro.ceilings.find((c) => c.endpointKey === e)?.planValue).toBe(40);
    expect(pro.budgets.find((x) => x.budgetKey === b)?.planValue).toBe(8 * DOLLAR);
    const events = await t.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.target, `pro${n}`))
      .orderBy(auditEvents.id);
    expect(events.map((x) => x.action)).toEqual(["plan.create", "plan.value.set", "plan.value.set"]);
    expect(events[1]).toMatchObject({
      actorType: "config",
      actor: "ci",
      endpointKey: e,
      appliedValue: 40,
      reason: "tiers",
      details: { via: "catalog file", sha256: applied.sha256 },
    });

    const exported = await current(t.db);
    expect(exported.plans.find((p) => p.key === `pro${n}`)).toEqual({
      key: `pro${n}`,
      name: "Pro",
      description: "paid",
      ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 40 }],
      budgets: [{ budget: b, value: 8 * DOLLAR }],
    });
    expect(await planChanges(t.db, JSON.stringify(exported))).toEqual([]);

    const fresh = await createTestDatabase("plans_file_fresh");
    try {
      await applyCatalog(fresh.db, { text: JSON.stringify(exported), actor: config, reason: "restore", confirmRaise: true, changeControl: control });
      expect((await current(fresh.db)).plans).toEqual(exported.plans);
      expect(await planChanges(fresh.db, JSON.stringify(exported))).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });

  it("plans and applies a rename, a value change, a removal and a default switch; a 5x raise needs --confirm-raise", async () => {
    const { e, b } = await setup();
    const key = `tier${n}`;
    const file = await current(t.db);
    file.plans.push({
      key,
      name: "Tier",
      ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 20 }],
      budgets: [{ budget: b, value: 3 * DOLLAR }],
    });
    await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "r", confirmRaise: false, changeControl: control });

    const next = await current(t.db);
    const mine = next.plans.find((p) => p.key === key) ?? {};
    for (const p of next.plans) delete p.default;
    Object.assign(mine, { name: "Tier 2", default: true, ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 30 }], budgets: [] });
    const plan = await planCatalog(t.db, JSON.stringify(next));
    if (!plan.ok) throw new Error(plan.errors.join("\n"));
    const lines = plan.endpoints.filter((x) => x.key === `plan ${key}`).flatMap((x) => x.changes.flatMap((c) => c.lines));
    expect(lines).toEqual([
      `~ name: "Tier" → "Tier 2"`,
      `~ ${e} units/caller/utc_day: 20 → 30`,
      `- budget ${b} ($3.00): the budget's own value binds`,
      `~ the default plan: every account not assigned a plan is on ${key} from the next reservation`,
    ]);
    await applyCatalog(t.db, { text: JSON.stringify(next), actor: config, reason: "r", confirmRaise: false, changeControl: control });
    const after = await readPlan(t.db, key);
    expect(after.plan).toMatchObject({ name: "Tier 2", isDefault: true });
    expect(after.budgets.find((x) => x.budgetKey === b)?.planValue).toBeNull();
    expect(await t.db.select({ key: plans.key }).from(plans).where(eq(plans.isDefault, true))).toEqual([{ key }]);

    // 30 → 300 is a raise of 10x: refused without --confirm-raise, and nothing applies.
    const raise = await current(t.db);
    Object.assign(raise.plans.find((p) => p.key === key) ?? {}, {
      name: "Tier 3",
      ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 300 }],
    });
    await expect(
      applyCatalog(t.db, { text: JSON.stringify(raise), actor: config, reason: "r", confirmRaise: false, changeControl: control }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
    expect((await readPlan(t.db, key)).plan.name).toBe("Tier 2");
    await applyCatalog(t.db, { text: JSON.stringify(raise), actor: config, reason: "r", confirmRaise: true, changeControl: control });
    expect((await readPlan(t.db, key)).ceilings.find((c) => c.endpointKey === e)?.planValue).toBe(300);
    // Back to the seeded default, so other tests see it.
    const back = await current(t.db);
    for (const p of back.plans) delete p.default;
    Object.assign(back.plans.find((p) => p.key === "default") ?? {}, { default: true });
    await applyCatalog(t.db, { text: JSON.stringify(back), actor: config, reason: "r", confirmRaise: false, changeControl: control });
  });

  it("a file's value outside new bounds is an error; bounds from a file without plans clamp the plans' values, logged", async () => {
    const { e } = await setup();
    const key = `clamp${n}`;
    const file = await current(t.db);
    file.plans.push({ key, name: "C", ceilings: [{ endpoint: e, metric: "units", window: "utc_day", value: 800 }] });
    await applyCatalog(t.db, { text: JSON.stringify(file), actor: config, reason: "r", confirmRaise: true, changeControl: control });
    const next = await current(t.db);
    const ceiling = (next.endpoints.find((x) => x.key === e) as { ceilings: Json[] }).ceilings.find((c) => c.scope === "caller") ?? {};
    Object.assign(ceiling, { max: 500 });
    // The file still says 800, outside the new bounds: a definition is never clamped, it is an error.
    const refused = await planCatalog(t.db, JSON.stringify(next));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.errors.join("\n")).toContain("800 must be between the ceiling's min (1) and max (500)");
    // Without a plans list the file leaves plans as they are, and its new bounds pull 800 to 500.
    delete (next as Partial<File>).plans;
    await applyCatalog(t.db, { text: JSON.stringify(next), actor: config, reason: "tighter", confirmRaise: false, changeControl: control });
    expect((await readPlan(t.db, key)).ceilings.find((x) => x.endpointKey === e)?.planValue).toBe(500);
    const clamped = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "plan.value.clamped"));
    expect(clamped).toMatchObject([{ target: key, previousValue: 800, appliedValue: 500, actorType: "config", reason: "tighter", endpointKey: e }]);
  });

  const badFiles: [string, (f: File, k: { e: string; b: string }) => void, string][] = [
    [
      "a plan left out",
      (f) =>
        void f.plans.splice(
          f.plans.findIndex((p) => p.key === "default"),
          1,
        ),
      "plans: 'default' is in the database but not in the file",
    ],
    ["a plan listed twice", (f) => void f.plans.push({ key: "default", name: "again" }), "plan 'default' is listed twice (also plans["],
    ["two defaults", (f) => void f.plans.push({ key: `two${n}`, name: "x", default: true }), "only one plan can be the default"],
    [
      "a value on a global ceiling",
      (f, k) => void f.plans.push({ key: `g${n}`, name: "x", ceilings: [{ endpoint: k.e, metric: "calls", window: "utc_day", value: 5 }] }),
      "has no per-caller ceiling of calls per utc_day",
    ],
    [
      "a value on a global budget",
      (f, k) => void f.plans.push({ key: `gb${n}`, name: "x", budgets: [{ budget: `${k.b}-all`, value: DOLLAR }] }),
      "is global: a plan sets values on per-account budgets only",
    ],
    [
      "an unknown budget",
      (f) => void f.plans.push({ key: `ub${n}`, name: "x", budgets: [{ budget: "llm.nowhere", value: DOLLAR }] }),
      "no budget 'llm.nowhere'",
    ],
    [
      "a value above the ceiling's max",
      (f, k) => void f.plans.push({ key: `hi${n}`, name: "x", ceilings: [{ endpoint: k.e, metric: "units", window: "utc_day", value: 1001 }] }),
      "1,001 must be between the ceiling's min (1) and max (1,000)",
    ],
    [
      "a value below the budget's min",
      (f, k) => void f.plans.push({ key: `lo${n}`, name: "x", budgets: [{ budget: k.b, value: 1 }] }),
      "must be between the budget's min ($1.00)",
    ],
    [
      "a value in dollars instead of micros",
      (f, k) => void f.plans.push({ key: `d${n}`, name: "x", budgets: [{ budget: k.b, value: "12.50" }] }),
      "value (micros) must be a whole number",
    ],
    ["a bad plan key", (f) => void f.plans.push({ key: "Pro Plan", name: "x" }), "key must look like pro"],
    [
      "a per-destination window",
      (f, k) => void f.plans.push({ key: `w${n}`, name: "x", ceilings: [{ endpoint: k.e, metric: "units", window: "first_hit", value: 5 }] }),
      "window must be utc_day or billing_month",
    ],
  ];

  it.each(badFiles)("refuses %s with its path, and applies nothing", async (_what, mutate, expected) => {
    const k = await setup();
    const file = await current(t.db);
    mutate(file, k);
    const text = JSON.stringify(file);
    const plan = await planCatalog(t.db, text);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.errors.join("\n")).toContain(expected);
    const allAudit = async () => (await t.db.select({ n: count() }).from(auditEvents).where(like(auditEvents.action, "plan.%")))[0]?.n ?? 0;
    const before = { audit: await allAudit(), rows: await planSnapshot(t.db) };
    await expect(applyCatalog(t.db, { text, actor: config, reason: "bad", confirmRaise: true, changeControl: control })).rejects.toBeInstanceOf(InputError);
    expect({ audit: await allAudit(), rows: await planSnapshot(t.db) }).toEqual(before);
  });
});
