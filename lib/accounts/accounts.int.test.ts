import { InputError } from "@/lib/errors";
import { and, asc, count, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { apiKeyActor } from "@/lib/audit/record";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { AccountError, assignPlan, assignPlans, blockAccount, getAccount, MAX_BULK_ROWS, unblockAccount } from "./index";
import { setupControl } from "@/lib/changes";
import { insertOverride, insertPlanValue } from "@/lib/limits/test-fixtures";

// Data built on purpose (values above the own, a switch, an unblock): change control is tested in
// lib/changes/plan-kinds.int.test.ts; here the verbs' own rules are.
const control = setupControl("test");

// The account verbs on real Postgres: assignments one by one and in bulk (all or nothing, every
// bad row named, audited per account with who made it), the 10,000-row cap, block and unblock, and
// two bulk bodies over the same accounts in opposite orders running at once without a deadlock.

const billing = apiKeyActor({ prefix: "abcd1234", name: "billing service" });
const admin = { type: "staff", email: "admin@example.com" } as const;
let n = 0;
const fresh = (label: string) => `acct_${label}_${++n}`;

async function failure(work: Promise<unknown>): Promise<AccountError | InputError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AccountError || error instanceof InputError) return error;
    throw error;
  }
  throw new Error("expected an AccountError or an InputError");
}

/** A bulk refusal names its rows: an AccountError invalid_rows. */
function rowsOf(error: AccountError | InputError): AccountError {
  if (!(error instanceof AccountError)) throw new Error(`expected the rows refused, got ${error.message}`);
  return error;
}

describe.skipIf(skipWithoutDatabase())("accounts on Postgres", () => {
  const t = useTestDatabase("accounts", { max: 8 });

  async function plan(key: string): Promise<number> {
    const [existing] = await t.db.select({ id: plans.id }).from(plans).where(eq(plans.key, key));
    if (existing) return existing.id;
    const [row] = await t.db.insert(plans).values({ key, name: key.toUpperCase() }).returning({ id: plans.id });
    if (!row) throw new Error("no plan");
    return row.id;
  }
  const row = async (account: string) => (await t.db.select().from(accounts).where(eq(accounts.account, account)))[0];
  const events = (action: string, target?: string) =>
    t.db
      .select()
      .from(auditEvents)
      .where(target === undefined ? eq(auditEvents.action, action) : and(eq(auditEvents.action, action), eq(auditEvents.target, target)))
      .orderBy(asc(auditEvents.id));
  const accountCount = async () => (await t.db.select({ n: count() }).from(accounts))[0]?.n ?? 0;

  it("assigns a plan, audited with the API key that did it; the same plan again changes and audits nothing", async () => {
    const pro = await plan("pro");
    const account = fresh("assign");
    const result = await assignPlan(t.db, { account: `  ${account}\n`, planKey: "pro", actor: billing });
    expect(result).toEqual({ account, plan: "pro", previous: "default", previousWasDefault: true, changed: true });
    expect(await row(account)).toMatchObject({ planId: pro, planSetBy: "ck_abcd1234 (billing service)" });
    const [event] = await events("account.plan", account);
    expect(event).toMatchObject({
      actorType: "api_key",
      actor: "ck_abcd1234 (billing service)",
      rawInput: "pro",
      details: { plan: "pro", previous: "default", previousWasDefault: true },
    });

    const again = await assignPlan(t.db, { account, planKey: "pro", actor: billing });
    expect(again.changed).toBe(false);
    expect(await events("account.plan", account)).toHaveLength(1);

    await plan("free");
    const down = await assignPlan(t.db, { account, planKey: "free", actor: admin, reason: "downgrade" });
    expect([down.previous, down.plan, down.previousWasDefault]).toEqual(["pro", "free", false]);
    expect((await events("account.plan", account)).at(-1)).toMatchObject({
      actorType: "staff",
      actor: "admin@example.com",
      reason: "downgrade",
      details: { previous: "pro", plan: "free" },
    });
  });

  it("assigning the default plan's key stores that plan, so a later switch of the default leaves the account where it was put", async () => {
    const [def] = await t.db.select({ id: plans.id }).from(plans).where(eq(plans.isDefault, true));
    const account = fresh("default");
    const result = await assignPlan(t.db, { account, planKey: "default", actor: billing });
    expect(result).toMatchObject({ changed: true, previous: "default", previousWasDefault: true });
    expect((await row(account))?.planId).toBe(def?.id);
    expect((await getAccount(t.db, account)).planAssigned).toBe(true);
  });

  it("refuses an unknown plan and a bad account id, naming them; nothing is saved, the attempt is audited", async () => {
    const before = await accountCount();
    const unknown = await failure(assignPlan(t.db, { account: fresh("x"), planKey: "platinum", actor: billing }));
    expect([unknown.code, unknown.message]).toEqual(["unknown_plan", "unknown plan 'platinum'"]);
    const control = await failure(assignPlan(t.db, { account: "acct\u0000evil", planKey: "pro", actor: billing }));
    expect([control.code, control.message]).toEqual(["invalid_input", "the billing account must not contain control characters"]);
    const bell = await failure(assignPlan(t.db, { account: "acct\u0007", planKey: "pro", actor: billing }));
    expect(bell.code).toBe("invalid_input");
    const long = await failure(assignPlan(t.db, { account: "a".repeat(300), planKey: "pro", actor: billing }));
    expect([long.code, long.message]).toEqual(["invalid_input", "the billing account must be 200 characters or fewer"]);
    const blank = await failure(assignPlan(t.db, { account: "   ", planKey: "pro", actor: billing }));
    expect(blank.code).toBe("invalid_input");
    expect(await accountCount()).toBe(before);
    const rejected = await events("account.rejected");
    expect(rejected.map((e) => (e.details as { error: string }).error)).toEqual(
      expect.arrayContaining(["unknown plan 'platinum'", "the billing account must not contain control characters"]),
    );
    expect(rejected.every((e) => e.actorType === "api_key")).toBe(true);
    // A control character is stored replaced, never as itself.
    expect(rejected.map((e) => e.target)).toContain("acct\uFFFDevil");
  });

  it("a bulk body with bad rows assigns nothing and names every bad row with its index", async () => {
    await plan("pro");
    const good = Array.from({ length: 50 }, () => ({ account: fresh("bulk"), plan: "pro" }));
    const rows = [
      ...good.slice(0, 10),
      { account: "acct\u0001bad", plan: "pro" },
      ...good.slice(10, 20),
      { account: "x".repeat(300), plan: "pro" },
      { account: good[0]?.account ?? "", plan: "free" },
      { account: fresh("bulk"), plan: "platinum" },
      ...good.slice(20),
    ];
    const before = await accountCount();
    const error = rowsOf(await failure(assignPlans(t.db, { rows, actor: billing })));
    expect(error.code).toBe("invalid_rows");
    expect(error.rowCount).toBe(4);
    expect(error.rows.map((r) => [r.index, r.code])).toEqual([
      [10, "invalid_input"],
      [21, "invalid_input"],
      [22, "duplicate_account"],
      [23, "unknown_plan"],
    ]);
    expect(error.rows[2]?.message).toContain("row 0");
    expect(error.message).toMatch(/^4 of 54 row\(s\) refused, nothing was assigned: row 10/);
    expect(await accountCount()).toBe(before);
    expect(
      await t.db
        .select()
        .from(accounts)
        .where(
          inArray(
            accounts.account,
            good.map((g) => g.account),
          ),
        ),
    ).toEqual([]);
    const [rejected] = (await events("account.rejected")).slice(-1);
    expect(rejected?.details).toMatchObject({ rows: 54, refused: 4 });
  });

  it("names at most 100 bad rows but counts them all", async () => {
    const rows = Array.from({ length: 250 }, (_, i) => ({ account: fresh("many"), plan: i % 2 ? "nope" : "pro" }));
    const error = rowsOf(await failure(assignPlans(t.db, { rows, actor: billing })));
    expect([error.rowCount, error.rows.length, error.rows[0]?.index]).toEqual([125, 100, 1]);
  });

  it("refuses 10,001 rows before reading anything; takes 10,000 in one transaction, one audit event per changed account", { timeout: 60_000 }, async () => {
    const pro = await plan("pro");
    const rows = Array.from({ length: MAX_BULK_ROWS + 1 }, (_, i) => ({ account: `acct_cap_${i}`, plan: "pro" }));
    const before = await accountCount();
    const error = rowsOf(await failure(assignPlans(t.db, { rows, actor: billing })));
    expect([error.code, error.message]).toEqual(["too_many", "at most 10000 accounts at once, got 10001: nothing was assigned"]);
    expect(await accountCount()).toBe(before);

    const ten = rows.slice(0, MAX_BULK_ROWS);
    // One already on pro: counted unchanged, not audited again.
    await assignPlan(t.db, { account: "acct_cap_7", planKey: "pro", actor: billing });
    const result = await assignPlans(t.db, { rows: ten, actor: billing, reason: "nightly sync" });
    expect([result.assigned, result.unchanged]).toEqual([MAX_BULK_ROWS - 1, 1]);
    expect((await t.db.select({ n: count() }).from(accounts).where(eq(accounts.planId, pro)))[0]?.n).toBeGreaterThanOrEqual(MAX_BULK_ROWS);
    const audited = await t.db
      .select({ n: count() })
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "account.plan"), eq(auditEvents.reason, "nightly sync")));
    expect(audited[0]?.n).toBe(MAX_BULK_ROWS - 1);
  });

  it(
    "two bulk bodies over the same accounts in opposite orders, again and again at once: no deadlock, the last commit wins whole",
    { timeout: 60_000 },
    async () => {
      await plan("pro");
      await plan("free");
      for (let round = 0; round < 6; round++) {
        const names = Array.from({ length: 400 }, (_, i) => `acct_race_${round}_${String(i).padStart(4, "0")}`);
        // Half exist already, half are new: both the insert and the update path are raced.
        await assignPlans(t.db, { rows: names.filter((_, i) => i % 2 === 0).map((account) => ({ account, plan: "free" })), actor: billing });
        const forward = names.map((account) => ({ account, plan: "pro" }));
        const backward = [...names].reverse().map((account) => ({ account, plan: "free" }));
        const results = await Promise.allSettled([assignPlans(t.db, { rows: forward, actor: billing }), assignPlans(t.db, { rows: backward, actor: admin })]);
        expect(results.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))).toEqual(["ok", "ok"]);
        const planIds = new Set((await t.db.select({ planId: accounts.planId }).from(accounts).where(inArray(accounts.account, names))).map((r) => r.planId));
        expect(planIds.size).toBe(1);
      }
    },
  );

  it("block and unblock: audited with a reason, registered if unseen, refused when there is nothing to do", async () => {
    const account = fresh("block");
    expect((await failure(blockAccount(t.db, { account, actor: admin, reason: " " }))).code).toBe("reason_required");
    const blocked = await blockAccount(t.db, { account, actor: admin, reason: "chargeback fraud" });
    expect(blocked).toMatchObject({ account, blockedBy: "admin@example.com", reason: "chargeback fraud" });
    expect(await row(account)).toMatchObject({ blockedBy: "admin@example.com", blockReason: "chargeback fraud", planId: null });
    const again = await failure(blockAccount(t.db, { account, actor: billing, reason: "again" }));
    expect(again.code).toBe("unchanged");
    expect((await row(account))?.blockedBy).toBe("admin@example.com");
    expect((await getAccount(t.db, account)).blocked).toMatchObject({ by: "admin@example.com", reason: "chargeback fraud" });

    expect((await failure(unblockAccount(t.db, { account, actor: admin, changeControl: control, reason: "" }))).code).toBe("reason_required");
    const lifted = await unblockAccount(t.db, { account, actor: admin, changeControl: control, reason: "resolved with the bank" });
    expect(lifted).toMatchObject({ account, wasBlockedBy: "admin@example.com", blockReason: "chargeback fraud" });
    expect(await row(account)).toMatchObject({ blockedAt: null, blockedBy: null, blockReason: null });
    expect((await failure(unblockAccount(t.db, { account, actor: admin, changeControl: control, reason: "twice" }))).code).toBe("unchanged");
    expect((await failure(blockAccount(t.db, { account: "a\u0000", actor: admin, reason: "x" }))).code).toBe("invalid_input");

    const [block] = await events("account.block", account);
    const [unblock] = await events("account.unblock", account);
    expect(block).toMatchObject({ actorType: "staff", actor: "admin@example.com", reason: "chargeback fraud" });
    expect(unblock).toMatchObject({ reason: "resolved with the bank", details: { was: { blockedBy: "admin@example.com", blockReason: "chargeback fraud" } } });
  });

  it("shows what binds the account on each per-caller ceiling: kill or block, else override, else plan, else the ceiling", async () => {
    const gold = await plan("gold");
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 10 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 5 },
      ],
    });
    const [, units, calls] = e.ceilingIds;
    if (units === undefined || calls === undefined) throw new Error("no ceilings");
    const account = fresh("show");
    const ceilingOf = async (id: number) => (await getAccount(t.db, account)).ceilings.find((c) => c.ceilingId === id);
    expect(await ceilingOf(units)).toMatchObject({ value: 10, source: "ceiling", endpoint: e.key });
    await assignPlan(t.db, { account, planKey: "gold", actor: admin });
    await insertPlanValue(t.db, "ceiling", units, { planId: gold, value: 100 });
    expect(await ceilingOf(units)).toMatchObject({ value: 100, source: "plan" });
    await insertOverride(t.db, "ceiling", units, { caller: account, value: 7, reason: "test" });
    expect(await ceilingOf(units)).toMatchObject({ value: 7, source: "override" });
    expect(await ceilingOf(calls)).toMatchObject({ value: 5, source: "ceiling" });
    const view = await getAccount(t.db, account);
    expect([view.known, view.plan.key, view.planAssigned, view.blocked]).toEqual([true, "gold", true, null]);
    await blockAccount(t.db, { account, actor: admin, reason: "test" });
    expect(await ceilingOf(units)).toMatchObject({ value: 0, source: "blocked" });
    await unblockAccount(t.db, { account, actor: admin, changeControl: control, reason: "test" });
    expect(await ceilingOf(units)).toMatchObject({ value: 7, source: "override" });
    const unseen = await getAccount(t.db, fresh("unseen"));
    expect([unseen.known, unseen.plan.key, unseen.planAssigned]).toEqual([false, "default", false]);
  });

  it("refuses a lone surrogate in a bulk row by naming the row, instead of failing the whole body in the database", async () => {
    await plan("surrogate");
    const error = await assignPlans(t.db, {
      rows: [
        { account: fresh("ok"), plan: "surrogate" },
        { account: "bad\ud800x", plan: "surrogate" },
      ],
      actor: admin,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccountError);
    expect((error as AccountError).rows.map((r) => [r.index, r.code])).toEqual([[1, "invalid_input"]]);
  });
});
