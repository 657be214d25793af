import { asc, count, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { form } from "@/app/_lib/test-form";
import { auditEvents, budgets, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { createBudget, killBudget, readBudget, setBudgetOverride } from "@/lib/budgets";
import { setupControl } from "@/lib/changes";
import {
  adjustBudgetCore,
  archiveBudgetCore,
  createBudgetCore,
  killBudgetCore,
  removeBudgetOverrideCore,
  restoreBudgetCore,
  setBudgetOverrideCore,
  unarchiveBudgetCore,
  updateBudgetCore,
} from "./budget-action-core";
import { limitOverrides } from "@/db/schema";

// The budgets' server actions are public POST endpoints: each checks the role itself. Admins
// define and change budgets; operators (and admins) kill and restore them. A refused call changes
// nothing. Money is typed in dollars; a typo is an error next to its field.

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;
const admin = { type: "system", name: "test" } as const;
const DOLLAR = 1_000_000;
let n = 0;

describe.skipIf(skipWithoutDatabase())("budget server actions", () => {
  const t = useTestDatabase("budget_actions");

  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });

  async function snapshot() {
    return {
      budgets: await t.db.select().from(budgets).orderBy(asc(budgets.id)),
      overrides: await t.db.select().from(limitOverrides).orderBy(asc(limitOverrides.limitId), asc(limitOverrides.caller)),
      audit: (await t.db.select({ n: count() }).from(auditEvents))[0]?.n,
    };
  }

  async function endpoint() {
    n += 1;
    const [row] = await t.db
      .insert(endpoints)
      .values({ key: `llm.e${n}`, name: "m", unit: "tokens", perCallMax: 100 })
      .returning();
    return row?.key ?? "";
  }

  /** A budget to act on: per account, killed or not, with an override for acme. */
  async function existing(opts: { killed?: boolean } = {}) {
    n += 1;
    const members = [await endpoint(), await endpoint()];
    const row = await createBudget(t.db, {
      spec: { key: `llm.b${n}`, name: "LLM", scope: "account", window: "utc_day", value: 2 * DOLLAR, min: 0, max: 10 * DOLLAR, default: 2 * DOLLAR, members },
      actor: admin,
      reason: "setup",
    });
    // Above the budget's own $2: built on purpose (setup), not a person's raise.
    await setBudgetOverride(t.db, { key: row.key, caller: "acme", input: "5", actor: admin, reason: "setup", changeControl: setupControl("test") });
    if (opts.killed) await killBudget(t.db, { key: row.key, actor: admin });
    const { budget } = await readBudget(t.db, row.key);
    return { key: row.key, version: budget.version, members };
  }

  const newBudget = async () => ({
    key: `llm.new${(n += 1)}`,
    name: "All LLM",
    scope: "global",
    window: "utc_day",
    billingDay: "",
    currency: "USD",
    value: "200",
    min: "0",
    max: "500.00",
    default: "200",
    alertThresholds: "50, 80, 100",
    members: [await endpoint(), await endpoint()].join(","),
    reason: "r",
  });

  type Existing = Awaited<ReturnType<typeof existing>>;
  const cases: { name: string; core: Core; role: Role; killed?: boolean; form: (e: Existing) => Promise<FormData> | FormData }[] = [
    { name: "create", core: createBudgetCore, role: "admin", form: async () => form(await newBudget()) },
    {
      name: "update",
      core: updateBudgetCore,
      role: "admin",
      form: (e) =>
        form({
          key: e.key,
          expectedVersion: String(e.version),
          name: "Renamed",
          members: e.members.join(","),
          min: "0",
          max: "10",
          default: "2",
          alertThresholds: "80",
          reason: "r",
        }),
    },
    // A lowering: a raise is a change request (lib/changes).
    {
      name: "adjust",
      core: adjustBudgetCore,
      role: "admin",
      form: (e) => form({ key: e.key, expectedVersion: String(e.version), input: "1.50", reason: "r" }),
    },
    { name: "archive", core: archiveBudgetCore, role: "admin", form: (e) => form({ key: e.key, reason: "r" }) },
    { name: "override", core: setBudgetOverrideCore, role: "admin", form: (e) => form({ key: e.key, caller: "globex", input: "0", reason: "abuse" }) },
    { name: "override remove", core: removeBudgetOverrideCore, role: "admin", form: (e) => form({ key: e.key, caller: "acme", reason: "r" }) },
    { name: "kill", core: killBudgetCore, role: "operator", form: (e) => form({ key: e.key, reason: "" }) },
    { name: "restore", core: restoreBudgetCore, role: "operator", killed: true, form: (e) => form({ key: e.key }) },
  ];

  for (const c of cases) {
    const refused = c.role === "admin" ? ([null, "viewer", "operator"] as const) : ([null, "viewer"] as const);
    for (const role of refused) {
      it(`${c.name} as ${role ?? "no session"} is refused and changes nothing`, async () => {
        const e = await existing({ killed: c.killed });
        const f = await c.form(e);
        const before = await snapshot();
        const state = await c.core(deps(role), f);
        expect(state).toEqual({ status: "error", error: role === null ? "Sign in required" : `Your role (${role}) cannot do this` });
        expect(await snapshot()).toEqual(before);
      });
    }
    for (const role of c.role === "admin" ? (["admin"] as const) : (["operator", "admin"] as const)) {
      it(`${c.name} as ${role} goes through`, async () => {
        const e = await existing({ killed: c.killed });
        const state = await c.core(deps(role), await c.form(e));
        expect(state.status, JSON.stringify(state)).toBe("ok");
      });
    }
  }

  it("unarchive, even as an admin, needs a second admin: approval_required, it stays archived", async () => {
    const e = await existing();
    expect((await archiveBudgetCore(deps("admin"), form({ key: e.key, reason: "r" }))).status).toBe("ok");
    expect(await unarchiveBudgetCore(deps("admin"), form({ key: e.key, reason: "back" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect((await readBudget(t.db, e.key)).spec.archived).toBe(true);
  });

  it("create reads dollars into micros and redirects to the budget's page", async () => {
    const fields = { ...(await newBudget()), value: "1.5", max: "2", default: "1.50" };
    const state = await createBudgetCore(deps("admin"), form(fields));
    expect(state).toMatchObject({ status: "ok", redirectTo: `/budgets/${fields.key}` });
    expect((await readBudget(t.db, fields.key)).budget).toMatchObject({ value: 1_500_000, maxValue: 2 * DOLLAR, defaultValue: 1_500_000 });
  });

  const typos: [string, Record<string, string>, string][] = [
    ["1e9", { value: "1e9" }, "value"],
    ["500abc", { max: "500abc" }, "max"],
    ["-5", { default: "-5" }, "default"],
    ["an empty value", { value: "" }, "value"],
    ["seven decimals", { value: "1.0000001" }, "value"],
    ["no members", { members: "" }, "members"],
    ["an unknown member", { members: "llm.nowhere" }, "members[0]"],
    ["an unknown window", { window: "weekly" }, "window"],
  ];
  it.each(typos)("create refuses %s, naming the field; nothing saved, the attempt audited", async (_what, patch, field) => {
    const fields = { ...(await newBudget()), ...patch };
    const before = await snapshot();
    const state = await createBudgetCore(deps("admin"), form(fields));
    expect(state.status).toBe("error");
    if (state.status === "error") expect(Object.keys(state.fieldErrors ?? {}), state.error).toContain(field);
    const after = await snapshot();
    expect(after.budgets).toEqual(before.budgets);
    const [rejected] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "budget.rejected")).orderBy(desc(auditEvents.id)).limit(1);
    expect(rejected?.rawInput).toContain(JSON.stringify(Object.values(patch)[0]));
  });

  it("adjust asks to retype a 5x raise, then for a second admin; lowers at once; names a bad amount", async () => {
    const e = await existing();
    const clamped = await adjustBudgetCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version), input: "25", reason: "r" }));
    expect(clamped).toMatchObject({ status: "error", code: "confirmation_required" });
    const before = await snapshot();
    const confirmed = await adjustBudgetCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version), input: "25", confirm: "25", reason: "r" }));
    expect(confirmed).toMatchObject({ status: "error", code: "approval_required" });
    expect((await snapshot()).budgets).toEqual(before.budgets);
    const lowered = await adjustBudgetCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version), input: "1", reason: "r" }));
    expect(lowered).toMatchObject({ status: "ok", message: "Saved: $2.00 → $1.00." });
    const bad = await adjustBudgetCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version + 1), input: "500abc", reason: "r" }));
    expect(bad).toMatchObject({ status: "error", code: "invalid_input", fieldErrors: { input: "value must be an amount such as 200 or 1.50, got '500abc'" } });
    const stale = await adjustBudgetCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version), input: "3", reason: "r" }));
    expect(stale).toMatchObject({ status: "error", code: "conflict", currentVersion: e.version + 1 });
  });
});
