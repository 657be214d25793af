import { asc, count, desc, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, budgetMembers, budgets, endpoints } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { CatalogConflictError, CatalogError, InputError, type Issue } from "@/lib/limits/errors";
import { setupControl } from "@/lib/control/context";
import { EndpointFields, updateEndpoint } from "@/lib/catalog";
import { listAuditEvents } from "@/lib/audit/log";
import {
  adjustBudget,
  budgetSentence,
  type BudgetSpecInput,
  createBudget,
  killBudget,
  readBudget,
  removeBudgetOverride,
  restoreBudget,
  setBudgetArchived,
  setBudgetOverride,
  updateBudget,
} from "./index";
import { limitOverrides } from "@/db/schema";

const admin = { type: "staff", email: "admin@example.com" } as const;
const DOLLAR = 1_000_000;
let n = 0;

async function failure(work: Promise<unknown>): Promise<CatalogError | InputError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CatalogError || error instanceof InputError) return error;
    throw error;
  }
  throw new Error("expected a CatalogError or an InputError");
}

/** The problems of an input refused: it must be an InputError. */
function problemsOf(error: CatalogError | InputError): readonly Issue[] {
  expect(error).toBeInstanceOf(InputError);
  return (error as InputError).problems;
}

describe.skipIf(skipWithoutDatabase())("budgets on Postgres", () => {
  const t = useTestDatabase("budgets");

  async function endpoint(extra: { currency?: string; archived?: boolean } = {}) {
    n += 1;
    const [row] = await t.db
      .insert(endpoints)
      .values({
        key: `llm.m${n}`,
        name: `model ${n}`,
        unit: "tokens",
        perCallMax: 4000,
        currency: extra.currency ?? "USD",
        archivedAt: extra.archived ? new Date() : null,
      })
      .returning();
    if (!row) throw new Error("no endpoint");
    return row;
  }

  async function budget(overrides: Partial<BudgetSpecInput> = {}) {
    n += 1;
    const members = overrides.members ?? [(await endpoint()).key, (await endpoint()).key];
    const spec: BudgetSpecInput = {
      key: `llm.budget-${n}`,
      name: "LLM spend",
      scope: "global",
      window: "utc_day",
      value: 200 * DOLLAR,
      min: 0,
      max: 500 * DOLLAR,
      default: 200 * DOLLAR,
      members,
      ...overrides,
    };
    const row = await createBudget(t.db, { spec, actor: admin, reason: "setup" });
    return { row, members, key: row.key };
  }

  const lastEvent = async (key: string) => (await t.db.select().from(auditEvents).where(eq(auditEvents.target, key)).orderBy(desc(auditEvents.id)).limit(1))[0];

  async function snapshot() {
    return {
      budgets: await t.db.select().from(budgets).orderBy(asc(budgets.id)),
      members: await t.db.select().from(budgetMembers).orderBy(asc(budgetMembers.budgetId), asc(budgetMembers.endpointId)),
      overrides: await t.db.select().from(limitOverrides).orderBy(asc(limitOverrides.limitId), asc(limitOverrides.caller)),
      audit: (await t.db.select({ n: count() }).from(auditEvents))[0]?.n,
    };
  }

  it("creates a budget with its members and one budget.create event naming it", async () => {
    const a = await endpoint();
    const b = await endpoint();
    const c = await endpoint();
    const { row, key } = await budget({ members: [a.key, b.key, c.key] });
    expect(row).toMatchObject({ value: 200 * DOLLAR, scope: "global", window: "utc_day", version: 1 });
    const found = await readBudget(t.db, key);
    expect(found.spec.members).toEqual([a.key, b.key, c.key].sort());
    const event = await lastEvent(key);
    expect(event).toMatchObject({ action: "budget.create", actorType: "staff", actor: admin.email, target: key, appliedValue: 200 * DOLLAR, reason: "setup" });
    expect(event?.details).toMatchObject({
      budgetId: row.id,
      worstCase: `at most $200.00 a day across ${[a.key, b.key, c.key].join(", ").replace(/, ([^,]*)$/, " and $1")}`,
    });
  });

  it("states the worst case in money, global and per account", () => {
    const members = ["llm.gpt-4o", "llm.claude-sonnet", "llm.embed"];
    expect(budgetSentence({ scope: "global", window: "utc_day", billingDay: 1, value: 200 * DOLLAR, currency: "USD", members })).toBe(
      "at most $200.00 a day across llm.gpt-4o, llm.claude-sonnet and llm.embed",
    );
    expect(budgetSentence({ scope: "account", window: "utc_day", billingDay: 1, value: 2 * DOLLAR, currency: "USD", members })).toBe(
      "at most $2.00 a day for each account across llm.gpt-4o, llm.claude-sonnet and llm.embed",
    );
    expect(budgetSentence({ scope: "global", window: "billing_month", billingDay: 15, value: 5000 * DOLLAR, currency: "USD", members: ["sms.otp"] })).toBe(
      "at most $5,000.00 a billing month (from the 15th) across sms.otp",
    );
  });

  describe("bad input is an error naming the field, and changes nothing", () => {
    const cases: [string, () => Promise<Partial<BudgetSpecInput>>, string][] = [
      ["no members", async () => ({ members: [] }), "members"],
      ["a member that does not exist", async () => ({ members: [(await endpoint()).key, "llm.nope"] }), "members[1]"],
      ["an archived member", async () => ({ members: [(await endpoint({ archived: true })).key] }), "members[0]"],
      ["a member in another currency", async () => ({ members: [(await endpoint()).key, (await endpoint({ currency: "EUR" })).key] }), "members[1]"],
      ["a duplicate member", async () => ({ members: ["llm.m1", "llm.m1"] }), "members[1]"],
      ["an unknown window", async () => ({ window: "first_hit" as never }), "window"],
      ["an unknown scope", async () => ({ scope: "caller" as never }), "scope"],
      ["overrides on a global budget", async () => ({ overrides: [{ caller: "acme", value: DOLLAR, reason: "vip" }] }), "overrides"],
      ["a value outside the bounds", async () => ({ value: 600 * DOLLAR }), "value"],
      ["a fractional micro", async () => ({ value: 1.5 }), "value"],
      ["a currency that is no code", async () => ({ currency: "usd" }), "currency"],
    ];
    it.each(cases)("%s", async (_what, patch, path) => {
      const extra = await patch();
      const before = await snapshot();
      const members = extra.members ?? [(await endpoint()).key];
      const error = await failure(
        createBudget(t.db, {
          spec: {
            key: `bad.b${(n += 1)}`,
            name: "x",
            scope: "global",
            window: "utc_day",
            value: DOLLAR,
            min: 0,
            max: 500 * DOLLAR,
            default: DOLLAR,
            members,
            ...extra,
          },
          actor: admin,
          reason: "r",
        }),
      );
      expect(error.code).toBe("invalid_input");
      expect(problemsOf(error).map((p) => p.path)).toContain(path);
      const after = await snapshot();
      expect({ ...after }).toEqual(before);
    });

    it("a reason is required", async () => {
      const e = await endpoint();
      const error = await failure(
        createBudget(t.db, {
          spec: {
            key: `bad.r${(n += 1)}`,
            name: "x",
            scope: "global",
            window: "utc_day",
            value: DOLLAR,
            min: 0,
            max: 2 * DOLLAR,
            default: DOLLAR,
            members: [e.key],
          },
          actor: admin,
          reason: " ",
        }),
      );
      expect(error.code).toBe("reason_required");
    });

    it("a duplicate key", async () => {
      const { key, members } = await budget();
      const before = await snapshot();
      const error = await failure(
        createBudget(t.db, {
          spec: { key, name: "x", scope: "global", window: "utc_day", value: DOLLAR, min: 0, max: 2 * DOLLAR, default: DOLLAR, members },
          actor: admin,
          reason: "r",
        }),
      );
      expect(error.code).toBe("duplicate_key");
      expect(await snapshot()).toEqual(before);
    });
  });

  it("updates name, members, thresholds and bounds in one budget.update; new bounds pull the value in; a stale version is a conflict", async () => {
    const { row, key, members } = await budget();
    const added = await endpoint();
    const changes = await updateBudget(t.db, {
      key,
      expectedVersion: row.version,
      // Members are only added here: removing one is a raise (its own test below).
      fields: { name: "LLM spend, all models", members: [...members, added.key], alertThresholds: [80, 50], min: 0, max: 100 * DOLLAR, default: 100 * DOLLAR },
      actor: admin,
      reason: "new model",
    });
    expect(changes.map((c) => c.field).sort()).toEqual(["alertThresholds", "default", "max", "members", "name", "value"]);
    const after = await readBudget(t.db, key);
    expect(after.spec).toMatchObject({
      name: "LLM spend, all models",
      members: [...members, added.key].sort(),
      alertThresholds: [50, 80],
      value: 100 * DOLLAR,
      max: 100 * DOLLAR,
    });
    expect(after.budget.version).toBe(row.version + 1);
    const event = await lastEvent(key);
    expect(event).toMatchObject({ action: "budget.update", previousValue: 200 * DOLLAR, appliedValue: 100 * DOLLAR, clamped: true });
    expect(event?.details).toMatchObject({ budgetId: row.id, changes: { members: { before: [...members].sort(), after: [...members, added.key].sort() } } });

    const before = await snapshot();
    const stale = await failure(
      updateBudget(t.db, {
        key,
        expectedVersion: row.version,
        fields: { name: "again", members: after.spec.members, min: 0, max: DOLLAR * 100, default: DOLLAR },
        actor: admin,
        reason: "r",
      }),
    );
    expect(stale).toBeInstanceOf(CatalogConflictError);
    expect((stale as CatalogConflictError).currentVersion).toBe(row.version + 1);
    expect(await snapshot()).toEqual(before);
  });

  it("update refuses a new archived member, a member in another currency and an empty list, changing nothing", async () => {
    const { row, key, members } = await budget();
    const archived = await endpoint({ archived: true });
    const euro = await endpoint({ currency: "EUR" });
    const base = { name: "x", min: 0, max: 500 * DOLLAR, default: DOLLAR };
    for (const [list, path] of [
      [[...members, archived.key], "members[2]"],
      [[...members, euro.key], "members[2]"],
      [[], "members"],
    ] as const) {
      const before = await snapshot();
      const error = await failure(updateBudget(t.db, { key, expectedVersion: row.version, fields: { ...base, members: list }, actor: admin, reason: "r" }));
      expect(problemsOf(error).map((p) => p.path)).toContain(path);
      expect(await snapshot()).toEqual(before);
    }
  });

  describe("adjust", () => {
    it("clamps into the bounds and logs the raw input, previous, applied and the clamp", async () => {
      const { row, key } = await budget({ min: 50 * DOLLAR });
      const r = await adjustBudget(t.db, { key, input: "150", expectedVersion: row.version, actor: admin, reason: "quiet day" });
      expect(r).toMatchObject({ kind: "lower", previous: 200 * DOLLAR, applied: 150 * DOLLAR, clamped: null });
      const under = await adjustBudget(t.db, { key, input: "10.5", expectedVersion: r.version, actor: admin, reason: "less" });
      expect(under).toMatchObject({ applied: 50 * DOLLAR, typed: 10_500_000, clamped: "min" });
      expect(await lastEvent(key)).toMatchObject({
        action: "budget.adjust",
        rawInput: "10.5",
        previousValue: 150 * DOLLAR,
        appliedValue: 50 * DOLLAR,
        clamped: true,
        reason: "less",
      });
      // Raises need a second admin (lib/changes); the setup path stands in for the approval here.
      const approved = { actor: admin, changeControl: setupControl("test") };
      const clamp = await adjustBudget(t.db, { key, input: "99.999999", expectedVersion: under.version, reason: "r", ...approved });
      expect(clamp.applied).toBe(99_999_999);
      const over = await adjustBudget(t.db, { key, input: "900.5", confirm: "900.5", expectedVersion: clamp.version, reason: "more", ...approved });
      expect(over).toMatchObject({ applied: 500 * DOLLAR, typed: 900_500_000, clamped: "max" });
      expect(await lastEvent(key)).toMatchObject({
        action: "budget.adjust",
        rawInput: "900.5",
        previousValue: 99_999_999,
        appliedValue: 500 * DOLLAR,
        clamped: true,
        reason: "more",
      });
    });

    it("a raise to 5x or more is typed twice", async () => {
      const { row, key } = await budget({ value: 10 * DOLLAR });
      const before = await snapshot();
      const error = await failure(adjustBudget(t.db, { key, input: "50", expectedVersion: row.version, actor: admin, reason: "r" }));
      expect(error.code).toBe("confirmation_required");
      expect(await snapshot()).toEqual(before);
      expect((await failure(adjustBudget(t.db, { key, input: "50", confirm: "49", expectedVersion: row.version, actor: admin, reason: "r" }))).code).toBe(
        "confirmation_required",
      );
      // Confirmed, it is still a raise: a second admin on top of the retyping.
      await expect(adjustBudget(t.db, { key, input: "50", confirm: "50.00", expectedVersion: row.version, actor: admin, reason: "r" })).rejects.toMatchObject({
        code: "approval_required",
      });
      expect(await snapshot()).toEqual(before);
      const approved = setupControl("test");
      const r = await adjustBudget(t.db, {
        key,
        input: "50",
        confirm: "50.00",
        expectedVersion: row.version,
        actor: admin,
        reason: "r",
        changeControl: approved,
      });
      expect(r.applied).toBe(50 * DOLLAR);
      // Just under 5x needs no confirmation.
      expect((await adjustBudget(t.db, { key, input: "249.99", expectedVersion: r.version, actor: admin, reason: "r", changeControl: approved })).applied).toBe(
        249_990_000,
      );
    });

    it.each(["1e9", "500abc", "-5", "", "1,000", "0.0000001"])("refuses %j: nothing saved, the attempt audited as budget.rejected", async (input) => {
      const { row, key } = await budget();
      const before = await snapshot();
      const error = await failure(adjustBudget(t.db, { key, input, expectedVersion: row.version, actor: admin, reason: "r" }));
      expect(error.code).toBe("invalid_input");
      expect(problemsOf(error)[0]?.path).toBe("input");
      const after = await snapshot();
      expect(after.budgets).toEqual(before.budgets);
      expect(await lastEvent(key)).toMatchObject({ action: "budget.rejected", rawInput: input, appliedValue: null });
    });

    it("a stale version is a conflict and changes nothing", async () => {
      const { row, key } = await budget();
      await adjustBudget(t.db, { key, input: "150", expectedVersion: row.version, actor: admin, reason: "r" });
      const before = await snapshot();
      const error = await failure(adjustBudget(t.db, { key, input: "100", expectedVersion: row.version, actor: admin, reason: "r" }));
      expect(error).toBeInstanceOf(CatalogConflictError);
      expect(await snapshot()).toEqual(before);
    });

    it("0 kills and a value on a killed budget restores it", async () => {
      const { row, key } = await budget();
      const kill = await adjustBudget(t.db, { key, input: "0", expectedVersion: row.version, actor: admin, reason: "stop" });
      expect(kill.kind).toBe("kill");
      expect((await readBudget(t.db, key)).budget).toMatchObject({ value: 0, valueBeforeKill: 200 * DOLLAR, killedBy: admin.email });
      expect((await lastEvent(key))?.action).toBe("budget.kill");
      const back = await adjustBudget(t.db, { key, input: "150", expectedVersion: kill.version, actor: admin, reason: "go" });
      expect(back.kind).toBe("restore");
      expect((await lastEvent(key))?.action).toBe("budget.restore");
    });
  });

  it("kill keeps the value for restore; restore puts it back; twice is an error", async () => {
    const { key } = await budget();
    expect(await killBudget(t.db, { key, actor: admin })).toMatchObject({ previous: 200 * DOLLAR, applied: 0 });
    expect(await lastEvent(key)).toMatchObject({ action: "budget.kill", previousValue: 200 * DOLLAR, appliedValue: 0, reason: null });
    expect((await readBudget(t.db, key)).spec).toMatchObject({ value: 200 * DOLLAR, killed: true });
    expect((await failure(killBudget(t.db, { key, actor: admin }))).code).toBe("unchanged");
    expect(await restoreBudget(t.db, { key, actor: admin, reason: "fixed" })).toMatchObject({ previous: 0, applied: 200 * DOLLAR });
    expect(await lastEvent(key)).toMatchObject({ action: "budget.restore", previousValue: 0, appliedValue: 200 * DOLLAR });
    expect((await failure(restoreBudget(t.db, { key, actor: admin }))).code).toBe("unchanged");
  });

  it("archive and unarchive, each audited", async () => {
    const { key } = await budget();
    await setBudgetArchived(t.db, { key, archived: true, actor: admin, reason: "old" });
    expect((await readBudget(t.db, key)).spec.archived).toBe(true);
    expect((await lastEvent(key))?.action).toBe("budget.archive");
    expect((await failure(setBudgetArchived(t.db, { key, archived: true, actor: admin, reason: "old" }))).code).toBe("unchanged");
    // An unarchive takes a second admin (change control).
    await expect(setBudgetArchived(t.db, { key, archived: false, actor: admin, reason: "back" })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "budget.unarchive" },
    });
    expect((await readBudget(t.db, key)).spec.archived).toBe(true);
    await setBudgetArchived(t.db, { key, archived: false, actor: admin, reason: "back", changeControl: setupControl("test") });
    expect((await lastEvent(key))?.action).toBe("budget.unarchive");
  });

  it.each(["1e9", "500abc", "-5", ""])("refuses an override typed %j, saves nothing, and audits the attempt as budget.rejected", async (input) => {
    const { key } = await budget({ scope: "account", value: 2 * DOLLAR, max: 10 * DOLLAR, default: 2 * DOLLAR });
    const before = await snapshot();
    const error = await failure(setBudgetOverride(t.db, { key, caller: "acme", input, actor: admin, reason: "big customer" }));
    expect(error.code).toBe("invalid_input");
    // Nothing saved; only the attempt's audit event is new.
    const after = await snapshot();
    expect([after.budgets, after.members, after.overrides]).toEqual([before.budgets, before.members, before.overrides]);
    expect(await lastEvent(key)).toMatchObject({ action: "budget.rejected", rawInput: input, appliedValue: null });
    expect((await lastEvent(key))?.details).toMatchObject({ caller: "acme", override: true });
  });

  it("overrides: per account only, clamped into the bounds, 0 blocks, remove returns the account to the budget's value", async () => {
    const { key } = await budget({ scope: "account", value: 2 * DOLLAR, max: 10 * DOLLAR, default: 2 * DOLLAR });
    // Above the budget's own $2 (a raise: lib/changes/plan-paths.int.test.ts): built here as setup.
    const set = await setBudgetOverride(t.db, {
      key,
      caller: "  acme ",
      input: "25",
      actor: admin,
      reason: "big customer",
      changeControl: setupControl("test"),
    });
    expect(set).toMatchObject({ caller: "acme", previous: null, applied: 10 * DOLLAR, clamped: "max" });
    expect(await lastEvent(key)).toMatchObject({ action: "budget.override.set", rawInput: "25", appliedValue: 10 * DOLLAR, clamped: true });
    expect((await lastEvent(key))?.details).toMatchObject({ caller: "acme" });
    expect((await setBudgetOverride(t.db, { key, caller: "acme", input: "0", actor: admin, reason: "abuse" })).applied).toBe(0);
    expect((await readBudget(t.db, key)).spec.overrides).toEqual([{ caller: "acme", value: 0, reason: "abuse" }]);
    // Removing a 0 override puts the budget's $2 back: a raise, refused alone; as setup here.
    await expect(removeBudgetOverride(t.db, { key, caller: "acme", actor: admin, reason: "ok" })).rejects.toMatchObject({ code: "approval_required" });
    expect((await removeBudgetOverride(t.db, { key, caller: "acme", actor: admin, reason: "ok", changeControl: setupControl("test") })).previous).toBe(0);
    expect(await lastEvent(key)).toMatchObject({ action: "budget.override.remove", previousValue: 0 });
    expect((await failure(removeBudgetOverride(t.db, { key, caller: "acme", actor: admin, reason: "ok" }))).code).toBe("not_found");
    // The audit log filters on a kind of three parts, and on the budget family.
    const listed = (await listAuditEvents(t.db, { action: "budget.override.set", limit: 200 })).events.filter((e) => e.target === key);
    expect(listed.map((e) => e.appliedValue)).toEqual([0, 10 * DOLLAR]);
    expect((await listAuditEvents(t.db, { action: "budget", limit: 200 })).events.filter((e) => e.target === key).map((e) => e.action)).toEqual([
      "budget.override.remove",
      "budget.override.set",
      "budget.override.set",
      "budget.create",
    ]);

    const global = await budget();
    const before = await snapshot();
    const error = await failure(setBudgetOverride(t.db, { key: global.key, caller: "acme", input: "1", actor: admin, reason: "r" }));
    expect(problemsOf(error)[0]?.message).toContain("global budget");
    expect(await snapshot()).toEqual(before);
  });

  it("an edit waits for a reservation in flight on any member (its endpoint lock, shared) and commits after it", async () => {
    const { key, members } = await budget();
    const [member] = await t.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.key, members[1] ?? ""));
    const reservation = await holdTransaction(t.db, (tx) =>
      tx.execute(sql`select pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(${member?.id ?? 0}))`),
    );
    let done = false;
    const kill = killBudget(t.db, { key, actor: admin, reason: "stop" }).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    expect((await readBudget(t.db, key)).budget.value).toBe(200 * DOLLAR);
    await reservation.release();
    expect((await kill).applied).toBe(0);
    expect((await readBudget(t.db, key)).budget.value).toBe(0);
  });

  it("a membership change also waits for a reservation in flight on a member it is about to gain", async () => {
    const { row, key, members } = await budget();
    const gained = await endpoint();
    const reservation = await holdTransaction(t.db, (tx) => tx.execute(sql`select pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(${gained.id}))`));
    let done = false;
    const update = updateBudget(t.db, {
      key,
      expectedVersion: row.version,
      fields: { name: "x", members: [...members, gained.key], min: 0, max: 500 * DOLLAR, default: DOLLAR },
      actor: admin,
      reason: "r",
    }).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    await reservation.release();
    await update;
    expect((await readBudget(t.db, key)).spec.members).toContain(gained.key);
  });

  it("an endpoint's currency cannot change while a budget in another currency counts it", async () => {
    const { members } = await budget();
    const [e] = await t.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.key, members[0] ?? ""));
    if (!e) throw new Error("no endpoint");
    const fields = { name: e.name, unit: e.unit, currency: "EUR", perCallMax: e.perCallMax, parts: [{ name: "units", price: "0" }] };
    expect(EndpointFields.safeParse(fields).success).toBe(true);
    const before = await snapshot();
    const error = await failure(updateEndpoint(t.db, { key: e.key, expectedVersion: e.version, fields, actor: admin, reason: "euro" }));
    expect(problemsOf(error)[0]).toMatchObject({ path: "currency", message: expect.stringContaining("counts in budget") });
    expect(await snapshot()).toEqual(before);
    expect((await t.db.select().from(endpoints).where(eq(endpoints.id, e.id)))[0]?.currency).toBe("USD");
  });
});
