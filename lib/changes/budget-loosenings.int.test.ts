import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { archiveBudgetCore, createBudgetCore, unarchiveBudgetCore, updateBudgetCore } from "@/app/(dashboard)/budgets/budget-action-core";
import { askForApprovalCore } from "@/app/(dashboard)/changes/change-action-core";
import { updateEndpointCore } from "@/app/(dashboard)/endpoints/catalog-action-core";
import { resultRows } from "@/db/client";
import { budgets, changeRequests, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createBudget, readBudget, setBudgetArchived, updateBudget } from "@/lib/budgets";
import { exportCatalog, updateEndpoint } from "@/lib/catalog";
import { createEndpoint } from "@/lib/catalog/change";
import { createStaffToken } from "@/lib/staff-tokens";
import { runApplyFile } from "@/scripts/ceilings-file";
import { approveChange, type Requester, requestChange } from "./index";
import { staffMember } from "./test-fixtures";

// The loosenings that used to be one person's (issue 33, item 2): removing a budget member, an
// unarchive, a price lowered where a budget charges it, a budget archived and re-created looser
// within 24 hours. Each, from each path (the lib verb, the dashboard's server action, a catalog
// file applied from the command line), is refused alone and asked for instead; a second admin's
// approval puts it in force.

const DOLLAR = 1_000_000;
let n = 0;

describe.skipIf(skipWithoutDatabase())("budget loosenings take two people", () => {
  const t = useTestDatabase("budget_loosenings", { max: 8 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "loosen-"));

  async function endpoint(price = "0.000001") {
    n += 1;
    const key = `lo.e${n}`;
    const admin = await staffMember(t.db, "admin");
    await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "units",
        parts: [{ name: "units", price }],
        perCallMax: 10,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000, min: 0, max: 100_000, default: 1000 }],
      },
      actor: { type: "staff", email: admin.email },
      reason: "fixture",
    });
    return key;
  }

  async function budget(p: { members: string[]; value?: number; scope?: "global" | "account"; window?: "utc_day" | "billing_month" }) {
    n += 1;
    const key = `lo.b${n}`;
    const value = p.value ?? 10 * DOLLAR;
    await createBudget(t.db, {
      spec: { key, name: key, scope: p.scope ?? "global", window: p.window ?? "utc_day", value, min: 0, max: 100 * DOLLAR, default: value, members: p.members },
      actor: { type: "system", name: "fixture" },
      reason: "fixture",
    });
    return key;
  }

  const row = async (key: string) => {
    const [b] = await t.db.select().from(budgets).where(eq(budgets.key, key));
    if (!b) throw new Error(`no budget ${key}`);
    return b;
  };
  const fieldsOf = async (key: string) => {
    const { spec } = await readBudget(t.db, key);
    return { name: spec.name, members: spec.members, min: spec.min, max: spec.max, default: spec.default, alertThresholds: spec.alertThresholds };
  };
  const actor = (r: Requester) => ({ type: "staff", email: r.email }) as const;
  const deps = (r: Requester): ActionDeps => ({
    session: async () => ({ id: r.staffId, email: r.email, role: r.role }),
    db: async () => t.db,
    revalidate: () => {},
  });
  const pair = async () => ({ a: await staffMember(t.db, "admin"), b: await staffMember(t.db, "admin") });
  const partsOf = async (key: string) => (await t.db.select({ parts: endpoints.parts }).from(endpoints).where(eq(endpoints.key, key)))[0]?.parts;

  it("the database judges looser by the money worst case a day and a month, at the value and at the max, and by scope", async () => {
    const looser = async (before: [string, string, number, number], after: [string, string, number, number]) => {
      const [r] = resultRows<{ l: boolean }>(
        await t.db.execute(
          sql`select ceilings.budget_loosens(${before[0]}, ${before[1]}, ${before[2]}::bigint, null, ${before[2]}::bigint, ${before[3]}::bigint, ${after[0]}, ${after[1]}, ${after[2]}::bigint, null, ${after[2]}::bigint, ${after[3]}::bigint) as l`,
        ),
      );
      return r?.l;
    };
    expect(await looser(["global", "utc_day", 10, 100], ["global", "utc_day", 10, 100])).toBe(false);
    expect(await looser(["global", "utc_day", 10, 100], ["global", "utc_day", 11, 100])).toBe(true);
    expect(await looser(["global", "utc_day", 10, 100], ["global", "utc_day", 10, 101])).toBe(true);
    expect(await looser(["global", "utc_day", 10, 100], ["account", "utc_day", 1, 100])).toBe(true);
    expect(await looser(["account", "utc_day", 10, 100], ["global", "utc_day", 10, 100])).toBe(false);
    // A month at 10 takes at most 10 a day and 10 a month: tighter than 10 a day (310 a month).
    expect(await looser(["global", "utc_day", 10, 100], ["global", "billing_month", 10, 100])).toBe(false);
    expect(await looser(["global", "utc_day", 10, 100], ["global", "billing_month", 11, 100])).toBe(true);
    // 10 a day after 100 a month: a month may take 310.
    expect(await looser(["global", "billing_month", 100, 1000], ["global", "utc_day", 10, 10])).toBe(true);
    // A killed budget stands for what a restore puts back; a new one's default counts too.
    const [k] = resultRows<{ l: boolean }>(
      await t.db.execute(sql`select ceilings.budget_loosens('global', 'utc_day', 0, 50, 10, 100, 'global', 'utc_day', 40, null, 45, 100) as l`),
    );
    expect(k?.l).toBe(false);
    const [d] = resultRows<{ l: boolean }>(
      await t.db.execute(sql`select ceilings.budget_loosens('global', 'utc_day', 50, null, 50, 100, 'global', 'utc_day', 40, null, 60, 100) as l`),
    );
    expect(d?.l).toBe(true);
  });

  // ---- removing a member ---------------------------------------------------------------------------

  it("removing a member: the verb refuses it alone with the ask; asked by one admin, approved by another, it is in force", async () => {
    const [x, y] = [await endpoint(), await endpoint()];
    const key = await budget({ members: [x, y] });
    const { a, b } = await pair();
    const fields = { ...(await fieldsOf(key)), members: [x] };
    const version = (await row(key)).version;
    await expect(updateBudget(t.db, { key, expectedVersion: version, fields, actor: actor(a), reason: "y moves out" })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "budget.members", change: { budgetKey: key, members: [x] } },
    });
    expect((await readBudget(t.db, key)).spec.members).toEqual([x, y].sort());
    // Adding a member stays instant: it only tightens.
    const z = await endpoint();
    await updateBudget(t.db, { key, expectedVersion: version, fields: { ...fields, members: [x, y, z] }, actor: actor(a), reason: "z joins" });
    const r = await requestChange(t.db, { kind: "budget.members", change: { budgetKey: key, members: [x, z] }, requester: a, reason: "y moves out" });
    expect(r).toMatchObject({ state: "pending", budgetId: (await row(key)).id });
    expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect((await readBudget(t.db, key)).spec.members).toEqual([x, z].sort());
    // Only adding is not a raise: nothing to ask.
    await expect(
      requestChange(t.db, { kind: "budget.members", change: { budgetKey: key, members: [x, y, z] }, requester: a, reason: "back" }),
    ).rejects.toMatchObject({ code: "not_a_raise" });
  });

  it("removing a member from the dashboard: the save is refused (approval_required, askKind), the ask goes through, a second admin approves", async () => {
    const [x, y] = [await endpoint(), await endpoint()];
    const key = await budget({ members: [x, y] });
    const { a, b } = await pair();
    const f = await fieldsOf(key);
    const fields = {
      key,
      expectedVersion: String((await row(key)).version),
      name: f.name,
      members: x,
      min: "0",
      max: "100",
      default: "10",
      alertThresholds: "50, 80, 100",
      reason: "y moves out",
    };
    expect(await updateBudgetCore(deps(a), form(fields))).toMatchObject({ status: "error", code: "approval_required", askKind: "budget.members" });
    expect(await askForApprovalCore(deps(a), form({ ...fields, kind: "budget.members" }))).toMatchObject({ status: "ok" });
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'budget.members' and ${changeRequests.change}->>'budgetKey' = ${key}`);
    expect(request?.change).toEqual({ budgetKey: key, members: [x] });
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await readBudget(t.db, key)).spec.members).toEqual([x]);
  });

  // ---- a price lowered ---------------------------------------------------------------------------

  it("a price lowered where a live budget charges the endpoint: refused alone, asked, approved; elsewhere (or raised) instant", async () => {
    const x = await endpoint("0.002");
    const free = await endpoint("0.002");
    await budget({ members: [x] });
    const { a, b } = await pair();
    const edit = async (key: string, price: string) => {
      const [e] = await t.db.select().from(endpoints).where(eq(endpoints.key, key));
      return updateEndpoint(t.db, {
        key,
        expectedVersion: e?.version ?? 0,
        fields: {
          name: key,
          unit: "units",
          parts: [{ name: "units", price }],
          currency: "USD",
          planAllowance: null,
          billingDay: 1,
          perCallMax: 10,
          throttlePerMinute: null,
          throttleFailOpen: false,
        },
        actor: actor(a),
        reason: "pricing",
      });
    };
    await expect(edit(x, "0.001")).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "endpoint.prices", change: { endpointKey: x, parts: [{ name: "units", pricePico: 1_000_000_000 }] } },
    });
    expect(await partsOf(x)).toEqual([{ name: "units", pricePico: 2_000_000_000 }]);
    await edit(x, "0.003");
    await edit(free, "0.001");
    expect(await partsOf(free)).toEqual([{ name: "units", pricePico: 1_000_000_000 }]);
    const r = await requestChange(t.db, {
      kind: "endpoint.prices",
      change: { endpointKey: x, parts: [{ name: "units", pricePico: 1_000_000_000 }] },
      requester: a,
      reason: "cheaper supplier",
    });
    expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect(await partsOf(x)).toEqual([{ name: "units", pricePico: 1_000_000_000 }]);
  });

  it("a price lowered from the dashboard is asked for with the form's parts and approved by a second admin", async () => {
    const x = await endpoint("0.002");
    await budget({ members: [x] });
    const { a, b } = await pair();
    const [e] = await t.db.select().from(endpoints).where(eq(endpoints.key, x));
    const fields = {
      key: x,
      expectedVersion: String(e?.version),
      name: x,
      unit: "units",
      parts: JSON.stringify([{ name: "units", price: "0.001" }]),
      currency: "USD",
      planAllowance: "",
      billingDay: "1",
      perCallMax: "10",
      throttlePerMinute: "",
      reason: "cheaper",
    };
    expect(await updateEndpointCore(deps(a), form(fields))).toMatchObject({ status: "error", code: "approval_required", askKind: "endpoint.prices" });
    expect(await askForApprovalCore(deps(a), form({ ...fields, kind: "endpoint.prices" }))).toMatchObject({ status: "ok" });
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'endpoint.prices' and ${changeRequests.change}->>'endpointKey' = ${x}`);
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect(await partsOf(x)).toEqual([{ name: "units", pricePico: 1_000_000_000 }]);
  });

  // ---- re-created looser within 24 hours ---------------------------------------------------------

  it("a budget archived and re-created looser within 24 hours over the same members is a raise; as tight, or a day later, it is not", async () => {
    const [x, y] = [await endpoint(), await endpoint()];
    const old = await budget({ members: [x, y], value: 10 * DOLLAR });
    const { a, b } = await pair();
    await setBudgetArchived(t.db, { key: old, archived: true, actor: actor(a), reason: "replace it" });
    const spec = (key: string, over: Record<string, unknown> = {}) => ({
      key,
      name: key,
      scope: "global",
      window: "utc_day",
      value: 20 * DOLLAR,
      min: 0,
      max: 100 * DOLLAR,
      default: 20 * DOLLAR,
      members: [x],
      ...over,
    });
    n += 1;
    const looser = `lo.re${n}`;
    await expect(createBudget(t.db, { spec: spec(looser), actor: actor(a), reason: "again, bigger" })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "budget.create" },
    });
    // Per account at a lower value lets more through; by the month at $15, a day may take $15 (above $10).
    await expect(
      createBudget(t.db, { spec: spec(`${looser}a`, { scope: "account", value: 5 * DOLLAR, default: 5 * DOLLAR }), actor: actor(a), reason: "r" }),
    ).rejects.toMatchObject({ code: "approval_required" });
    await expect(
      createBudget(t.db, { spec: spec(`${looser}m`, { window: "billing_month", value: 15 * DOLLAR, default: 15 * DOLLAR }), actor: actor(a), reason: "r" }),
    ).rejects.toMatchObject({ code: "approval_required" });
    await expect(
      createBudget(t.db, { spec: spec(`${looser}x`, { value: 10 * DOLLAR, default: 10 * DOLLAR, max: 200 * DOLLAR }), actor: actor(a), reason: "r" }),
    ).rejects.toMatchObject({ code: "approval_required" });
    // As tight (same value, same max) is instant; so is $10 by the month (a day $10, a month $10, not 31 days of $10).
    await createBudget(t.db, { spec: spec(`${looser}t`, { value: 10 * DOLLAR, default: 10 * DOLLAR }), actor: actor(a), reason: "the same" });
    await createBudget(t.db, {
      spec: spec(`${looser}mt`, { window: "billing_month", value: 10 * DOLLAR, default: 10 * DOLLAR }),
      actor: actor(a),
      reason: "tighter",
    });
    const r = await requestChange(t.db, { kind: "budget.create", change: { spec: spec(looser) }, requester: a, reason: "again, bigger" });
    expect(r.summary).toContain(`looser than ${old}`);
    expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect((await row(looser)).value).toBe(20 * DOLLAR);
    // 25 hours after the archive the comparison is over.
    await t.ownerDb
      .update(budgets)
      .set({ archivedAt: new Date(Date.now() - 25 * 3600_000) })
      .where(eq(budgets.key, old));
    await createBudget(t.db, { spec: spec(`${looser}late`, { members: [y] }), actor: actor(a), reason: "a day later" });
  });

  it("a budget re-created looser from the dashboard: refused, asked with the form, approved", async () => {
    const x = await endpoint();
    const old = await budget({ members: [x], value: 10 * DOLLAR });
    const { a, b } = await pair();
    expect(await archiveBudgetCore(deps(a), form({ key: old, reason: "replace" }))).toMatchObject({ status: "ok" });
    n += 1;
    const key = `lo.dash${n}`;
    const fields = {
      key,
      name: key,
      currency: "USD",
      scope: "global",
      window: "utc_day",
      billingDay: "1",
      value: "30",
      min: "0",
      max: "100",
      default: "30",
      alertThresholds: "50, 80, 100",
      members: x,
      reason: "bigger",
    };
    expect(await createBudgetCore(deps(a), form(fields))).toMatchObject({ status: "error", code: "approval_required", askKind: "budget.create" });
    expect(await askForApprovalCore(deps(a), form({ ...fields, kind: "budget.create" }))).toMatchObject({ status: "ok" });
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'budget.create' and ${changeRequests.change}#>>'{spec,key}' = ${key}`);
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).value).toBe(30 * DOLLAR);
  });

  it("archiving a budget and creating a looser one over its members at the same time: exactly one of the two goes through alone", async () => {
    const { a } = await pair();
    for (let round = 0; round < 6; round += 1) {
      const z = await endpoint();
      const old = await budget({ members: [z], value: 10 * DOLLAR });
      n += 1;
      const key = `lo.race${n}`;
      const outcomes = await Promise.allSettled([
        setBudgetArchived(t.db, { key: old, archived: true, actor: actor(a), reason: "replace" }),
        createBudget(t.db, {
          spec: { key, name: key, scope: "global", window: "utc_day", value: 20 * DOLLAR, min: 0, max: 100 * DOLLAR, default: 20 * DOLLAR, members: [z] },
          actor: actor(a),
          reason: "bigger",
        }),
      ]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ code: "approval_required" });
    }
  });

  it("a catalog file that archives a budget while a looser one created today shares its members asks for the archive", async () => {
    const z = await endpoint();
    const old = await budget({ members: [z], value: 10 * DOLLAR });
    await budget({ members: [z], value: 30 * DOLLAR });
    const { a, b } = await pair();
    n += 1;
    const current = await exportCatalog(t.db);
    const file = path.join(dir, `c${n}.json`);
    writeFileSync(file, JSON.stringify({ ...current, budgets: (current.budgets ?? []).map((bu) => (bu.key === old ? { ...bu, archived: true } : bu)) }));
    const apply = (token?: string) =>
      runApplyFile(t.db, { file, reason: "tidy up", confirmRaise: true, osUser: "ci", breakGlass: false, ...(token ? { token } : {}) }, () => {});
    await expect(apply()).rejects.toMatchObject({ code: "approval_required" });
    await apply((await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret);
    expect((await row(old)).archivedAt).toBeNull();
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'budget.archive' and ${changeRequests.change}->>'budgetKey' = ${old}`);
    expect(request?.state).toBe("pending");
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(old)).archivedAt).not.toBeNull();
  });

  it("a budget created archived frees nothing: a file that creates one and a larger live one over the same members applies alone", async () => {
    const z = await endpoint();
    n += 1;
    const current = await exportCatalog(t.db);
    const file = path.join(dir, `c${n}.json`);
    const b = (key: string, value: number, archived: boolean) => ({
      key,
      name: key,
      scope: "global",
      window: "utc_day",
      value,
      min: 0,
      max: 100 * DOLLAR,
      default: value,
      members: [z],
      archived,
    });
    writeFileSync(
      file,
      JSON.stringify({ ...current, budgets: [...(current.budgets ?? []), b(`lo.was${n}`, DOLLAR, true), b(`lo.now${n}`, 5 * DOLLAR, false)] }),
    );
    await runApplyFile(t.db, { file, reason: "export applied elsewhere", confirmRaise: true, osUser: "ci", breakGlass: false }, () => {});
    expect((await row(`lo.now${n}`)).value).toBe(5 * DOLLAR);
  });

  it("the other way round: a looser budget created beside one, then the old one archived; the archive is the raise, from the verb and the dashboard", async () => {
    const x = await endpoint();
    const first = await budget({ members: [x], value: 10 * DOLLAR });
    await budget({ members: [x], value: 5 * DOLLAR });
    const { a, b } = await pair();
    // Replaced by a tighter one, archiving is instant.
    await setBudgetArchived(t.db, { key: first, archived: true, actor: actor(a), reason: "the tighter one does it" });
    const y = await endpoint();
    const old = await budget({ members: [y], value: 10 * DOLLAR });
    const bigger = await budget({ members: [y], value: 30 * DOLLAR });
    await expect(setBudgetArchived(t.db, { key: old, archived: true, actor: actor(a), reason: "replaced" })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "budget.archive", change: { budgetKey: old } },
    });
    expect(await archiveBudgetCore(deps(a), form({ key: old, reason: "replaced" }))).toMatchObject({
      status: "error",
      code: "approval_required",
      askKind: "budget.archive",
    });
    expect((await row(old)).archivedAt).toBeNull();
    expect(await askForApprovalCore(deps(a), form({ key: old, kind: "budget.archive", reason: "replaced by the bigger one" }))).toMatchObject({ status: "ok" });
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'budget.archive' and ${changeRequests.change}->>'budgetKey' = ${old}`);
    expect(request?.summary).toContain(bigger);
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(old)).archivedAt).not.toBeNull();
  });

  // ---- unarchive -----------------------------------------------------------------------------------

  it("unarchiving a budget from the dashboard is refused alone and applied once a second admin approves", async () => {
    const x = await endpoint();
    const key = await budget({ members: [x] });
    const { a, b } = await pair();
    await setBudgetArchived(t.db, { key, archived: true, actor: actor(a), reason: "pause" });
    expect(await unarchiveBudgetCore(deps(a), form({ key, reason: "back" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect(await askForApprovalCore(deps(a), form({ key, kind: "budget.unarchive", reason: "back" }))).toMatchObject({ status: "ok" });
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = 'budget.unarchive' and ${changeRequests.change}->>'budgetKey' = ${key}`);
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).archivedAt).toBeNull();
  });

  // ---- a catalog file, from the command line ----------------------------------------------------------

  it("a catalog file: a member removed, a price lowered and a looser re-created budget are refused without a token, asked with the asker's token, applied when approved", async () => {
    const [x, y] = [await endpoint("0.002"), await endpoint()];
    const key = await budget({ members: [x, y] });
    const old = await budget({ members: [y], value: 10 * DOLLAR });
    const { a, b } = await pair();
    n += 1;
    const fresh = `lo.file${n}`;
    const current = await exportCatalog(t.db);
    const file = path.join(dir, `c${n}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        ...current,
        endpoints: current.endpoints.map((e) => (e.key === x ? { ...e, parts: [{ name: "units", price: "0.001" }] } : e)),
        budgets: [
          ...(current.budgets ?? []).map((bu) => (bu.key === key ? { ...bu, members: [x] } : bu.key === old ? { ...bu, archived: true } : bu)),
          { key: fresh, name: fresh, scope: "global", window: "utc_day", value: 20 * DOLLAR, min: 0, max: 100 * DOLLAR, default: 20 * DOLLAR, members: [y] },
        ],
      }),
    );
    const apply = (token?: string) =>
      runApplyFile(t.db, { file, reason: "file change", confirmRaise: true, osUser: "ci", breakGlass: false, ...(token ? { token } : {}) }, () => {});
    await expect(apply()).rejects.toMatchObject({ code: "approval_required" });
    expect((await row(old)).archivedAt).toBeNull();
    await apply((await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret);
    // The file's other change (the archive) is made; the three raises wait.
    expect((await row(old)).archivedAt).not.toBeNull();
    expect((await readBudget(t.db, key)).spec.members).toEqual([x, y].sort());
    expect(await partsOf(x)).toEqual([{ name: "units", pricePico: 2_000_000_000 }]);
    expect(await t.db.select().from(budgets).where(eq(budgets.key, fresh))).toEqual([]);
    const asked = await t.db.select().from(changeRequests).where(eq(changeRequests.requestedBy, a.email));
    expect(asked.map((r) => r.kind).sort()).toEqual(["budget.create", "budget.members", "endpoint.prices"]);
    for (const r of asked) expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect((await readBudget(t.db, key)).spec.members).toEqual([x]);
    expect(await partsOf(x)).toEqual([{ name: "units", pricePico: 1_000_000_000 }]);
    expect((await row(fresh)).value).toBe(20 * DOLLAR);
  });
});
