import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, count, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { assignPlanCore, unblockAccountCore } from "@/app/(dashboard)/accounts/account-action-core";
import { approveChangeCore, askForApprovalCore } from "@/app/(dashboard)/changes/change-action-core";
import { setDefaultPlanCore, setPlanValueCore } from "@/app/(dashboard)/plans/plan-action-core";
import { removeOverrideCore, setOverrideCore } from "@/app/(dashboard)/endpoints/[key]/ceiling-action-core";
import { removeBudgetOverride, setBudgetOverride } from "@/lib/budgets/overrides";
import { budgetOn } from "@/lib/plans/test-fixtures";
import { handleAssignPlan, handleAssignPlans } from "@/app/api/v1/_lib/accounts-handler";
import type { ApiDeps } from "@/app/api/v1/_lib/deps";
import { apiRequest, makeAccountsKey } from "@/app/api/v1/_lib/test-support";
import { accounts, changeRequests, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { assignPlan, assignPlans, blockAccount } from "@/lib/accounts";
import { exportCatalog } from "@/lib/catalog/file";
import { createPlan, setDefaultPlan, setPlanKeyAssignable, setPlanValue } from "@/lib/plans";
import { perCallerEndpoint, planKey } from "@/lib/plans/test-fixtures";
import { runApplyFile } from "@/scripts/ceilings-file";
import { runAccounts } from "@/scripts/ceilings-accounts";
import { parsePlansArgs, runPlans } from "@/scripts/ceilings-plans";
import { parseChangesArgs, runChanges } from "@/scripts/ceilings-changes";
import { createStaffToken } from "@/lib/staff-tokens";
import { approveChange, ChangeControlError, setupControl } from "./index";
import { staffMember } from "./test-fixtures";
import type { Requester } from "./types";
import { listOverrides } from "@/lib/limits/overrides";
import { planValuesOn } from "@/lib/limits/test-fixtures";

// Plans and accounts under "raising takes two people", path by path: the dashboard's server
// actions, PUT /api/v1/accounts/{account}, POST /api/v1/accounts:bulk, the CLI and a catalog file.
// On each, one admin asks and a second approves (the value in force after), and the lone path is
// refused. An API key cannot ask: it moves accounts only to tighter plans or to a plan two admins
// marked key_assignable, which many parallel key moves cannot get round.

const control = setupControl("plan paths test");
const setup = { type: "system", name: "plan paths test" } as const;
let n = 0;
const fresh = (label: string) => `acct_pp_${label}_${++n}_${Date.now().toString(36)}`;

describe.skipIf(skipWithoutDatabase())("plans and accounts: a loosening takes two people on every path", () => {
  const t = useTestDatabase("plan_paths", { max: 12 });
  const api: ApiDeps = { db: async () => t.db };

  const deps = (who: Requester): ActionDeps => ({
    session: async () => ({ id: who.staffId, email: who.email, role: who.role }),
    db: async () => t.db,
    revalidate: () => {},
  });

  /** A per-caller ceiling (own 10), a tight plan (5) and a loose one (500). */
  async function world() {
    const e = await perCallerEndpoint(t.db);
    const tight = (await createPlan(t.db, { key: planKey("tight"), name: "Tight", actor: setup, reason: "setup" })).key;
    const loose = (await createPlan(t.db, { key: planKey("loose"), name: "Loose", actor: setup, reason: "setup" })).key;
    await setPlanValue(t.db, { planKey: tight, target: { ceilingId: e.caller.id }, input: "5", actor: setup, reason: "setup" });
    await setPlanValue(t.db, {
      planKey: loose,
      target: { ceilingId: e.caller.id },
      input: "500",
      confirm: "500",
      actor: setup,
      reason: "setup",
      changeControl: control,
    });
    return { e, tight, loose, a: await staffMember(t.db, "admin"), b: await staffMember(t.db, "admin") };
  }
  const planValue = async (key: string, ceilingId: number) => {
    const [plan] = await t.db.select({ id: plans.id }).from(plans).where(eq(plans.key, key));
    return (await planValuesOn(t.db, "ceiling", ceilingId)).find((v) => v.planId === plan?.id)?.value ?? null;
  };
  const planOf = async (account: string) => {
    const [row] = await t.db.select({ key: plans.key }).from(accounts).innerJoin(plans, eq(plans.id, accounts.planId)).where(eq(accounts.account, account));
    return row?.key ?? null;
  };
  const lastRequest = async (kind: string) => {
    const [row] = await t.db.select().from(changeRequests).where(eq(changeRequests.kind, kind)).orderBy(changeRequests.id);
    const rows = await t.db.select().from(changeRequests).where(eq(changeRequests.kind, kind));
    return rows.sort((x, y) => y.id - x.id)[0] ?? row;
  };
  async function refused(work: Promise<unknown>): Promise<ChangeControlError> {
    try {
      await work;
    } catch (error) {
      if (error instanceof ChangeControlError) return error;
      throw error;
    }
    throw new Error("expected a ChangeControlError");
  }

  it("dashboard: a plan value above the one in force is refused alone, asked by one admin, applied by a second; lowering is one person's", async () => {
    const { e, tight, loose, a, b } = await world();
    const direct = await setPlanValueCore(deps(a), form({ key: loose, ceilingId: String(e.caller.id), input: "800", reason: "bigger customers" }));
    expect(direct).toMatchObject({ status: "error", code: "approval_required" });
    expect(await planValue(loose, e.caller.id)).toBe(500);
    // 5x or more of what binds is typed twice on the ask too.
    expect(
      await askForApprovalCore(deps(a), form({ kind: "plan.value", key: tight, ceilingId: String(e.caller.id), input: "50", reason: "much bigger" })),
    ).toMatchObject({ status: "error", code: "confirmation_required" });
    expect(
      await askForApprovalCore(
        deps(a),
        form({ kind: "plan.value", key: tight, ceilingId: String(e.caller.id), input: "50", confirm: "50", reason: "much bigger" }),
      ),
    ).toMatchObject({ status: "ok" });
    const asked = await askForApprovalCore(
      deps(a),
      form({ kind: "plan.value", key: loose, ceilingId: String(e.caller.id), input: "800", reason: "bigger customers" }),
    );
    expect(asked.status, JSON.stringify(asked)).toBe("ok");
    const request = await lastRequest("plan.value");
    expect(request).toMatchObject({ state: "pending", requestedById: a.staffId, worstCaseBefore: 500, worstCaseAfter: 800 });
    expect(await planValue(loose, e.caller.id)).toBe(500);
    expect(await approveChangeCore(deps(a), form({ id: String(request?.id) }))).toMatchObject({ status: "error", code: "own_request" });
    expect(await approveChangeCore(deps(b), form({ id: String(request?.id) }))).toMatchObject({ status: "ok" });
    expect(await planValue(loose, e.caller.id)).toBe(800);
    expect(await setPlanValueCore(deps(a), form({ key: loose, ceilingId: String(e.caller.id), input: "300", reason: "back down" }))).toMatchObject({
      status: "ok",
    });
    expect(await planValue(loose, e.caller.id)).toBe(300);
  });

  it("dashboard: a looser account plan, an unblock and a looser default are asked and applied by a second admin; tighter moves are one person's", async () => {
    const { tight, loose, a, b } = await world();
    const account = fresh("dash");
    await assignPlan(t.db, { account, planKey: tight, actor: setup });
    expect(await assignPlanCore(deps(a), form({ account, plan: loose, reason: "upgrade" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect(await planOf(account)).toBe(tight);
    expect((await askForApprovalCore(deps(a), form({ kind: "account.plan", account, plan: loose, reason: "upgrade" }))).status).toBe("ok");
    const move = await lastRequest("account.plan");
    expect(await approveChangeCore(deps(b), form({ id: String(move?.id) }))).toMatchObject({ status: "ok" });
    expect(await planOf(account)).toBe(loose);
    // Back to the tighter plan: at once.
    expect(await assignPlanCore(deps(a), form({ account, plan: tight, reason: "downgrade" }))).toMatchObject({ status: "ok" });
    expect(await planOf(account)).toBe(tight);

    await blockAccount(t.db, { account, actor: setup, reason: "fraud" });
    expect(await unblockAccountCore(deps(a), form({ account, reason: "cleared" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect((await askForApprovalCore(deps(a), form({ kind: "account.unblock", account, reason: "cleared" }))).status).toBe("ok");
    const unblock = await lastRequest("account.unblock");
    expect((await t.db.select().from(accounts).where(eq(accounts.account, account)))[0]?.blockedAt).not.toBeNull();
    expect(await approveChangeCore(deps(b), form({ id: String(unblock?.id) }))).toMatchObject({ status: "ok" });
    expect((await t.db.select().from(accounts).where(eq(accounts.account, account)))[0]?.blockedAt).toBeNull();

    expect(await setDefaultPlanCore(deps(a), form({ key: loose, reason: "everyone richer" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect((await askForApprovalCore(deps(a), form({ kind: "plan.default", key: loose, reason: "everyone richer" }))).status).toBe("ok");
    const dflt = await lastRequest("plan.default");
    expect(await approveChangeCore(deps(b), form({ id: String(dflt?.id) }))).toMatchObject({ status: "ok" });
    expect((await t.db.select().from(plans).where(eq(plans.isDefault, true)))[0]?.key).toBe(loose);
    // Back to the seeded default (sets nothing: the own 10, tighter than 500): one person.
    await setDefaultPlan(t.db, { planKey: "default", actor: setup, reason: "back" });
  });

  it("overrides: one above what binds the account (its plan first) is asked and applied by a second admin; lower is one person's; removing one below its plan is a raise", async () => {
    const { e, loose, a, b } = await world();
    const account = fresh("ovr");
    await assignPlans(t.db, { rows: [{ account, plan: loose }], actor: setup, changeControl: control });
    const override = async () => (await listOverrides(t.db, "ceiling", [e.caller.id])).find((o) => o.caller === account)?.value ?? null;
    // Its plan gives it 500: 300 is lower, one person's; 900 is above, a raise.
    expect(await setOverrideCore(deps(a), form({ ceilingId: String(e.caller.id), caller: account, input: "300", reason: "trial" }))).toMatchObject({
      status: "ok",
    });
    expect(await setOverrideCore(deps(a), form({ ceilingId: String(e.caller.id), caller: account, input: "900", reason: "big" }))).toMatchObject({
      status: "error",
      code: "approval_required",
    });
    expect(await override()).toBe(300);
    expect(
      (await askForApprovalCore(deps(a), form({ kind: "ceiling.override", ceilingId: String(e.caller.id), caller: account, input: "900", reason: "big" })))
        .status,
    ).toBe("ok");
    const asked = await lastRequest("ceiling.override");
    expect(await approveChangeCore(deps(b), form({ id: String(asked?.id) }))).toMatchObject({ status: "ok" });
    expect(await override()).toBe(900);
    expect(await setOverrideCore(deps(a), form({ ceilingId: String(e.caller.id), caller: account, input: "100", reason: "calm down" }))).toMatchObject({
      status: "ok",
    });
    // Removing 100 puts the plan's 500 back: a raise.
    expect(await removeOverrideCore(deps(a), form({ ceilingId: String(e.caller.id), caller: account, reason: "back to plan" }))).toMatchObject({
      status: "error",
      code: "approval_required",
    });
    expect(await override()).toBe(100);

    const budget = await budgetOn(t.db);
    const money = async () => (await listOverrides(t.db, "budget", [budget.id])).find((o) => o.caller === account)?.value ?? null;
    expect((await refused(setBudgetOverride(t.db, { key: budget.key, caller: account, input: "5", actor: setup, reason: "big" }))).code).toBe(
      "approval_required",
    );
    await setBudgetOverride(t.db, { key: budget.key, caller: account, input: "1.50", actor: setup, reason: "small" });
    expect((await refused(removeBudgetOverride(t.db, { key: budget.key, caller: account, actor: setup, reason: "r" }))).code).toBe("approval_required");
    expect(await money()).toBe(1_500_000);
  });

  it("a request goes stale, applying nothing, when what was in force moved: the plan's value, the account's plan", async () => {
    const { e, tight, loose, a, b } = await world();
    const asked = await askForApprovalCore(deps(a), form({ kind: "plan.value", key: loose, ceilingId: String(e.caller.id), input: "700", reason: "more" }));
    expect(asked.status).toBe("ok");
    const valueRequest = await lastRequest("plan.value");
    await setPlanValue(t.db, { planKey: loose, target: { ceilingId: e.caller.id }, input: "400", actor: setup, reason: "lowered meanwhile" });
    const stale = await approveChange(t.db, { id: valueRequest?.id ?? 0, approver: b });
    expect([stale.applied, stale.request.state, stale.message]).toEqual([false, "stale", expect.stringContaining("value 500 → 400")]);
    expect(await planValue(loose, e.caller.id)).toBe(400);

    const account = fresh("stale");
    expect((await askForApprovalCore(deps(a), form({ kind: "account.plan", account, plan: loose, reason: "upgrade" }))).status).toBe("ok");
    const move = await lastRequest("account.plan");
    await assignPlan(t.db, { account, planKey: tight, actor: setup });
    const moved = await approveChange(t.db, { id: move?.id ?? 0, approver: b });
    expect([moved.applied, moved.request.state]).toEqual([false, "stale"]);
    expect(await planOf(account)).toBe(tight);
  });

  it("HTTP: a key's move to a looser plan is refused (plan_not_key_assignable, rows named); two admins mark the plan assignable once, then keys move accounts onto it", async () => {
    const { tight, loose, a, b } = await world();
    const key = (await makeAccountsKey(t.db)).secret;
    const put = async (account: string, plan: string) => {
      const r = await handleAssignPlan(apiRequest(`/api/v1/accounts/${account}`, { key, method: "PUT", body: { plan } }), account, api);
      return { status: r.status, body: JSON.parse(r.body) as { error?: { code: string }; rows?: { index: number; code: string }[] } };
    };
    const one = fresh("http");
    const refusedPut = await put(one, loose);
    expect([refusedPut.status, refusedPut.body.error?.code]).toEqual([403, "plan_not_key_assignable"]);
    expect(await planOf(one)).toBeNull();
    expect((await put(one, tight)).status).toBe(200);

    const x = fresh("bulk");
    const y = fresh("bulk");
    const bulkBody = {
      accounts: [
        { account: x, plan: tight },
        { account: y, plan: loose },
      ],
    };
    const bulk = await handleAssignPlans(apiRequest("/api/v1/accounts:bulk", { key, body: bulkBody }), api);
    const bulkAnswer = JSON.parse(bulk.body) as { error?: { code: string }; rows?: { index: number; code: string }[]; refused?: number };
    expect([bulk.status, bulkAnswer.error?.code, bulkAnswer.rows, bulkAnswer.refused]).toEqual([
      403,
      "plan_not_key_assignable",
      [expect.objectContaining({ index: 1, code: "loosens" })],
      1,
    ]);
    expect([await planOf(x), await planOf(y)]).toEqual([null, null]);

    // Marking the plan assignable by key is itself a raise: refused alone, asked, approved once.
    expect((await refused(setPlanKeyAssignable(t.db, { planKey: loose, assignable: true, actor: setup, reason: "billing upgrades" }))).code).toBe(
      "approval_required",
    );
    expect((await askForApprovalCore(deps(a), form({ kind: "plan.key_assignable", key: loose, reason: "billing upgrades" }))).status).toBe("ok");
    const mark = await lastRequest("plan.key_assignable");
    expect((await approveChange(t.db, { id: mark?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await put(one, loose)).status).toBe(200);
    expect((await handleAssignPlans(apiRequest("/api/v1/accounts:bulk", { key, body: bulkBody }), api)).status).toBe(200);
    expect([await planOf(one), await planOf(x), await planOf(y)]).toEqual([loose, tight, loose]);
    // Unmarking is one person's.
    await setPlanKeyAssignable(t.db, { planKey: loose, assignable: false, actor: setup, reason: "stop" });
    expect((await put(fresh("after"), loose)).body.error?.code).toBe("plan_not_key_assignable");
  });

  it("many parallel key moves to a looser plan not assignable by key: exactly 0 applied; parallel tighter moves: all applied", async () => {
    const { tight, loose } = await world();
    const key = (await makeAccountsKey(t.db)).secret;
    const up = Array.from({ length: 16 }, () => fresh("up"));
    const down = Array.from({ length: 16 }, () => fresh("down"));
    await assignPlans(t.db, { rows: down.map((account) => ({ account, plan: loose })), actor: setup, changeControl: control });
    const put = (account: string, plan: string) =>
      handleAssignPlan(apiRequest(`/api/v1/accounts/${account}`, { key, method: "PUT", body: { plan } }), account, api);
    const answers = await Promise.all([...up.map((a) => put(a, loose)), ...down.map((a) => put(a, tight))]);
    const statuses = answers.map((r) => r.status);
    expect(statuses.slice(0, 16).filter((s) => s === 403).length).toBe(16);
    expect(statuses.slice(16).filter((s) => s === 200).length).toBe(16);
    const [onLoose] = await t.db
      .select({ n: count() })
      .from(accounts)
      .innerJoin(plans, eq(plans.id, accounts.planId))
      .where(and(inArray(accounts.account, up), eq(plans.key, loose)));
    const [onTight] = await t.db
      .select({ n: count() })
      .from(accounts)
      .innerJoin(plans, eq(plans.id, accounts.planId))
      .where(and(inArray(accounts.account, down), eq(plans.key, tight)));
    expect([onLoose?.n, onTight?.n]).toEqual([0, 16]);
  });

  it("CLI: plans set and accounts bulk above what binds are refused without a token; with the asker's token they are asked, and a second admin's approval applies them", async () => {
    const { e, tight, loose, a, b } = await world();
    const cli = { type: "cli", name: "tester" } as const;
    const lines: string[] = [];
    const out = (l: string) => lines.push(l);
    const tokenA = (await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret;
    const set = (env: Record<string, string>) =>
      runPlans(t.db, parsePlansArgs(["set", loose, "--ceiling", String(e.caller.id), "900", "--reason", "more"], env), cli, out);
    const alone = await refused(set({}));
    expect([alone.code, alone.message]).toEqual(["approval_required", expect.stringContaining("CEILINGS_STAFF_TOKEN=cst_")]);
    await set({ CEILINGS_STAFF_TOKEN: tokenA });
    expect(lines.join("\n")).toContain("asked for approval: request #");
    expect(await planValue(loose, e.caller.id)).toBe(500);
    const request = await lastRequest("plan.value");
    expect(request).toMatchObject({ requestedBy: a.email, requestedVia: "cli" });
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect(await planValue(loose, e.caller.id)).toBe(900);

    const rows = [fresh("cli"), fresh("cli")];
    const file = join(mkdtempSync(join(tmpdir(), "plans-test-")), "bulk.csv");
    writeFileSync(file, `account,plan\n${rows.map((r) => `${r},${loose}`).join("\n")}\n`);
    const bulkAlone = await refused(runAccounts(t.db, ["bulk", file], { reason: "upgrade", actor: cli }));
    expect(bulkAlone.code).toBe("approval_required");
    // A bare --as (a name, no proof) is refused, even when the code building the call skips the parser.
    await expect(runAccounts(t.db, ["bulk", file], { reason: "upgrade", actor: cli, who: { as: a.email } })).rejects.toThrow(/--as alone is refused/);
    await runAccounts(t.db, ["bulk", file], { reason: "upgrade", actor: cli, who: { token: tokenA } });
    expect([await planOf(rows[0] ?? ""), await planOf(rows[1] ?? "")]).toEqual([null, null]);
    const bulk = await lastRequest("account.plan");
    expect(bulk?.summary).toContain("2 account(s)");
    expect(bulk?.requestedBy).toBe(a.email);
    expect((await approveChange(t.db, { id: bulk?.id ?? 0, approver: b })).applied).toBe(true);
    expect([await planOf(rows[0] ?? ""), await planOf(rows[1] ?? "")]).toEqual([loose, loose]);
    expect(tight).toBeTruthy();
  });

  it("CLI: one person cannot ask as someone else and approve it themselves (the reviewer's attack): asking proves who asks with the personal token", async () => {
    const { e, loose, a: alice, b: bob } = await world();
    const cli = { type: "cli", name: "tester" } as const;
    const tokenOf = async (who: Requester) => (await createStaffToken(t.db, { staffId: who.staffId, name: "laptop" })).secret;
    const [aliceToken, bobToken] = [await tokenOf(alice), await tokenOf(bob)];
    const plansCli = (argv: string[], env: Record<string, string>) => runPlans(t.db, parsePlansArgs(argv, env), cli, () => undefined);
    const decide = (argv: string[], token: string) => runChanges(t.db, parseChangesArgs(argv, { CEILINGS_STAFF_TOKEN: token }), () => undefined);
    const setTo = (value: string) => ["set", loose, "--ceiling", String(e.caller.id), value, "--reason", "x", "--as", bob.email];
    const before = await t.db.select({ n: count() }).from(changeRequests);

    // 1. Ask as bob with no token: refused before anything is asked (the parser), and at run time too.
    expect(() => parsePlansArgs(setTo("600"), {})).toThrow(
      /needs your own credential, not a name: --as alone is refused.*Personal tokens \(\/tokens\).*CEILINGS_STAFF_TOKEN/,
    );
    await expect(
      runPlans(t.db, { verb: "set", plan: loose, target: { ceilingId: e.caller.id }, value: "600", reason: "x", who: { as: bob.email } }, cli, () => undefined),
    ).rejects.toThrow(/--as alone is refused/);
    // Alice's token naming bob: refused, not mixed up.
    await expect(plansCli(setTo("600"), { CEILINGS_STAFF_TOKEN: aliceToken })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining(`(${alice.email})`),
    });
    // Cancel and the catalog file's ask are the same claim of a name: refused alone.
    expect(() => parseChangesArgs(["cancel", "1", "--as", bob.email], {})).toThrow(/cancel needs your own credential, not a name/);
    expect(await t.db.select({ n: count() }).from(changeRequests)).toEqual(before);
    expect(await planValue(loose, e.caller.id)).toBe(500);

    // 2. Asked with bob's own token, approved with alice's: two people, applied.
    await plansCli(setTo("600"), { CEILINGS_STAFF_TOKEN: bobToken });
    const asked = await lastRequest("plan.value");
    expect(asked).toMatchObject({ state: "pending", requestedBy: bob.email });
    await decide(["approve", String(asked?.id ?? 0)], aliceToken);
    expect(await planValue(loose, e.caller.id)).toBe(600);

    // 3. Asked with alice's token, approved with alice's: one person, refused.
    await plansCli(["set", loose, "--ceiling", String(e.caller.id), "700", "--reason", "x"], { CEILINGS_STAFF_TOKEN: aliceToken });
    const own = await lastRequest("plan.value");
    expect(own).toMatchObject({ state: "pending", requestedBy: alice.email });
    await expect(decide(["approve", String(own?.id ?? 0)], aliceToken)).rejects.toMatchObject({ code: "own_request" });
    expect(await planValue(loose, e.caller.id)).toBe(600);
  });

  it("catalog file: a plan value raised in the file is refused without a token (and with a bare --as), asked with the token like the file's other raises, applied by a second admin", async () => {
    const { e, loose, a, b } = await world();
    const catalog = await exportCatalog(t.db);
    const edited = {
      ...catalog,
      plans: (catalog.plans ?? []).map((p) =>
        p.key === loose ? { ...p, ceilings: (p.ceilings ?? []).map((c) => (c.endpoint === e.key ? { ...c, value: 700 } : c)) } : p,
      ),
    };
    const file = join(mkdtempSync(join(tmpdir(), "plans-test-")), "catalog.json");
    writeFileSync(file, JSON.stringify(edited));
    const apply = (who: { as?: string; token?: string }) =>
      runApplyFile(t.db, { file, reason: "file raise", confirmRaise: false, breakGlass: false, osUser: "tester", ...who }, () => undefined);
    expect((await refused(apply({}))).code).toBe("approval_required");
    // A name alone does not ask: a bare --as is refused, nothing of the file is made.
    await expect(apply({ as: a.email })).rejects.toThrow(/--as alone is refused/);
    expect(await planValue(loose, e.caller.id)).toBe(500);
    await apply({ token: (await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret });
    expect(await planValue(loose, e.caller.id)).toBe(500);
    const request = await lastRequest("plan.value");
    expect(request).toMatchObject({ state: "pending", requestedVia: "cli" });
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect(await planValue(loose, e.caller.id)).toBe(700);
  });
});
