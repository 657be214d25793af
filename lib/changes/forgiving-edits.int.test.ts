import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { askForApprovalCore } from "@/app/(dashboard)/changes/change-action-core";
import { updateEndpointCore } from "@/app/(dashboard)/endpoints/catalog-action-core";
import { changeRequests, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createBudget } from "@/lib/budgets";
import { exportCatalog, updateEndpoint } from "@/lib/catalog";
import { createEndpoint } from "@/lib/catalog/change";
import { recentlyRemovedParts } from "@/lib/catalog/re-add";
import { reserve } from "@/lib/enforcement/reserve";
import { createStaffToken } from "@/lib/staff-tokens";
import { runApplyFile } from "@/scripts/ceilings-file";
import { approveChange, type Requester, requestChange } from "./index";
import { staffMember } from "./test-fixtures";

// Two edits of an endpoint that forgave spend by one person (review of issue 33): a new billing
// day, which starts a new billing month for the endpoint's billing_month counters, and a part
// removed and added back cheaper. Each, from the lib verb, the dashboard and a catalog file, is
// refused alone and asked for instead; a second admin's approval puts it in force.

const DOLLAR = 1_000_000;
let n = 0;

type Part = { name: string; price: string };

describe.skipIf(skipWithoutDatabase())("edits that forgive spend take two people", () => {
  const t = useTestDatabase("forgiving_edits", { max: 8 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "forgive-"));

  /** An endpoint at billing day 1; `monthly`: with a global billing_month ceiling of 1,000 units. */
  async function endpoint(p: { monthly?: boolean; parts?: Part[] } = {}) {
    n += 1;
    const key = `fg.e${n}`;
    const admin = await staffMember(t.db, "admin");
    const ceilings = [
      { metric: "units", scope: "global", window: "utc_day", value: 5000, min: 0, max: 100_000, default: 5000 },
      ...(p.monthly ? [{ metric: "units", scope: "global", window: "billing_month", value: 1000, min: 0, max: 100_000, default: 1000 }] : []),
    ] as const;
    await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "units",
        parts: p.parts ?? [{ name: "units", price: "0.000001" }],
        perCallMax: 1000,
        billingDay: 1,
        ceilings: [...ceilings],
      },
      actor: { type: "staff", email: admin.email },
      reason: "fixture",
    });
    return key;
  }

  const row = async (key: string) => {
    const [e] = await t.db.select().from(endpoints).where(eq(endpoints.key, key));
    if (!e) throw new Error(`no endpoint ${key}`);
    return e;
  };
  const actor = (r: Requester) => ({ type: "staff", email: r.email }) as const;
  const deps = (r: Requester): ActionDeps => ({
    session: async () => ({ id: r.staffId, email: r.email, role: r.role }),
    db: async () => t.db,
    revalidate: () => {},
  });
  const pair = async () => ({ a: await staffMember(t.db, "admin"), b: await staffMember(t.db, "admin") });
  const edit = async (key: string, r: Requester, over: { billingDay?: number; parts?: Part[] }) => {
    const e = await row(key);
    const parts = over.parts ?? e.parts.map((p) => ({ name: p.name, price: (p.pricePico / 1e12).toFixed(12) }));
    return updateEndpoint(t.db, {
      key,
      expectedVersion: e.version,
      fields: {
        name: key,
        unit: "units",
        parts,
        currency: "USD",
        planAllowance: null,
        billingDay: over.billingDay ?? e.billingDay,
        perCallMax: e.perCallMax,
        throttlePerMinute: null,
        throttleFailOpen: false,
      },
      actor: actor(r),
      reason: "edit",
    });
  };
  const requestsOf = (kind: string, key: string) =>
    t.db
      .select()
      .from(changeRequests)
      .where(sql`${changeRequests.kind} = ${kind} and ${changeRequests.change}->>'endpointKey' = ${key}`);

  // ---- the billing day ---------------------------------------------------------------------------

  it("a new billing day on an endpoint with a billing_month ceiling: refused alone with the ask; asked (the month's spend shown as forgiven), approved by a second admin, in force", async () => {
    const key = await endpoint({ monthly: true });
    const { a, b } = await pair();
    // The month is used up: 1,000 of 1,000.
    expect((await reserve(t.db, { endpoint: key, amount: 1000 })).status).toBe("granted");
    expect((await reserve(t.db, { endpoint: key, amount: 1 })).status).toBe("refused");
    await expect(edit(key, a, { billingDay: 2 })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "endpoint.billing_day", change: { endpointKey: key, billingDay: 2 } },
    });
    expect((await row(key)).billingDay).toBe(1);
    // Any other day moves the month's start too (it starts on the billing day): each is refused.
    await expect(edit(key, a, { billingDay: 28 })).rejects.toMatchObject({ code: "approval_required" });
    const r = await requestChange(t.db, {
      kind: "endpoint.billing_day",
      change: { endpointKey: key, billingDay: 2 },
      requester: a,
      reason: "the provider moved our invoice",
    });
    expect(r).toMatchObject({ state: "pending", endpointId: (await row(key)).id, before: { billingDay: 1 }, after: { billingDay: 2 } });
    expect(r.summary).toContain("forgives units/month 1,000 counted");
    // The worst case a day: nothing left of the month before (the day's 5,000 is bound by it); a whole month after.
    expect({ before: r.worstCaseBefore, after: r.worstCaseAfter }).toEqual({ before: 0, after: 1000 });
    expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect((await row(key)).billingDay).toBe(2);
    // What the change forgave: the month starts again.
    expect((await reserve(t.db, { endpoint: key, amount: 1 })).status).toBe("granted");
    // Asking for the day in force is nothing to ask.
    await expect(
      requestChange(t.db, { kind: "endpoint.billing_day", change: { endpointKey: key, billingDay: 2 }, requester: a, reason: "r" }),
    ).rejects.toMatchObject({ code: "unchanged" });
  });

  it("a new billing day on an endpoint without a billing_month ceiling is instant (nothing counted by the month), and not a raise to ask", async () => {
    const key = await endpoint();
    const { a } = await pair();
    await edit(key, a, { billingDay: 15 });
    expect((await row(key)).billingDay).toBe(15);
    await expect(
      requestChange(t.db, { kind: "endpoint.billing_day", change: { endpointKey: key, billingDay: 3 }, requester: a, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_a_raise" });
  });

  it("a new billing day from the dashboard: the save is refused (approval_required, askKind), the ask goes through with the form's day, a second admin approves", async () => {
    const key = await endpoint({ monthly: true });
    const { a, b } = await pair();
    const e = await row(key);
    const fields = {
      key,
      expectedVersion: String(e.version),
      name: key,
      unit: "units",
      parts: JSON.stringify([{ name: "units", price: "0.000001" }]),
      currency: "USD",
      planAllowance: "",
      billingDay: "9",
      perCallMax: "1000",
      throttlePerMinute: "",
      reason: "invoice moved",
    };
    expect(await updateEndpointCore(deps(a), form(fields))).toMatchObject({ status: "error", code: "approval_required", askKind: "endpoint.billing_day" });
    expect(await askForApprovalCore(deps(a), form({ ...fields, kind: "endpoint.billing_day" }))).toMatchObject({ status: "ok" });
    const [request] = await requestsOf("endpoint.billing_day", key);
    expect(request?.change).toEqual({ endpointKey: key, billingDay: 9 });
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).billingDay).toBe(9);
  });

  it("a catalog file's new billing day is refused without a token, asked with the asker's while the file's other changes apply, in force when approved", async () => {
    const key = await endpoint({ monthly: true });
    const { a, b } = await pair();
    const current = await exportCatalog(t.db);
    n += 1;
    const file = path.join(dir, `day${n}.json`);
    writeFileSync(
      file,
      JSON.stringify({ ...current, endpoints: current.endpoints.map((e) => (e.key === key ? { ...e, name: "renamed", billingDay: 20 } : e)) }),
    );
    const apply = (token?: string) =>
      runApplyFile(t.db, { file, reason: "file change", confirmRaise: false, osUser: "ci", breakGlass: false, ...(token ? { token } : {}) }, () => {});
    await expect(apply()).rejects.toMatchObject({ code: "approval_required" });
    expect((await row(key)).name).toBe(key);
    await apply((await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret);
    expect(await row(key)).toMatchObject({ name: "renamed", billingDay: 1 });
    const asked = await requestsOf("endpoint.billing_day", key);
    expect(asked.map((r) => r.change)).toEqual([{ endpointKey: key, billingDay: 20 }]);
    expect((await approveChange(t.db, { id: asked[0]?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).billingDay).toBe(20);
  });

  // ---- a part removed and added back cheaper ----------------------------------------------------

  const AB = [
    { name: "a", price: "0.00001" },
    { name: "b", price: "0.000005" },
  ];
  const B = [{ name: "b", price: "0.000005" }];
  const pico = (parts: Part[]) => parts.map((p) => ({ name: p.name, pricePico: Math.round(Number(p.price) * 1e12) }));

  async function charged() {
    const key = await endpoint({ parts: AB });
    n += 1;
    await createBudget(t.db, {
      spec: {
        key: `fg.b${n}`,
        name: `fg.b${n}`,
        scope: "global",
        window: "utc_day",
        value: 10 * DOLLAR,
        min: 0,
        max: 100 * DOLLAR,
        default: 10 * DOLLAR,
        members: [key],
      },
      actor: { type: "system", name: "fixture" },
      reason: "fixture",
    });
    return key;
  }

  it("a part removed and added back below its old price (under its name or another) is refused alone with the ask; asked, approved, in force; at its old price it is instant", async () => {
    const key = await charged();
    const { a, b } = await pair();
    // Removing a part only tightens (calls naming it are refused): instant.
    await edit(key, a, { parts: B });
    const back = [...B, { name: "a", price: "0.000005" }];
    await expect(edit(key, a, { parts: back })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "endpoint.prices", change: { endpointKey: key, parts: pico(back) } },
    });
    // Under another name: the same price cut.
    await expect(edit(key, a, { parts: [...B, { name: "c", price: "0.000005" }] })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "endpoint.prices" },
    });
    expect((await row(key)).parts).toEqual(pico(B));
    const r = await requestChange(t.db, { kind: "endpoint.prices", change: { endpointKey: key, parts: pico(back) }, requester: a, reason: "a is cheaper now" });
    expect(r.summary).toContain("below part a (10000000) removed");
    expect((await approveChange(t.db, { id: r.id, approver: b })).applied).toBe(true);
    expect((await row(key)).parts).toEqual(pico(back));
    // Added back at the price it had: instant. A day later the removal no longer counts.
    const other = await charged();
    await edit(other, a, { parts: B });
    await edit(other, a, { parts: [...B, { name: "a", price: "0.00001" }] });
    expect((await row(other)).parts).toEqual(pico([...B, { name: "a", price: "0.00001" }]));
    const id = (await row(other)).id;
    expect(await recentlyRemovedParts(t.db, id)).toEqual(pico([{ name: "a", price: "0.00001" }]));
    expect(await recentlyRemovedParts(t.db, id, new Date(Date.now() + 25 * 3600_000))).toEqual([]);
  });

  it("a part renamed cheaper in one edit (a removed, c added below it) is a raise too", async () => {
    const key = await charged();
    const { a } = await pair();
    await expect(edit(key, a, { parts: [...B, { name: "c", price: "0.000007" }] })).rejects.toMatchObject({
      code: "approval_required",
      ask: { kind: "endpoint.prices" },
    });
  });

  it("a part added back cheaper from the dashboard: refused with askKind, asked with the form's parts, approved", async () => {
    const key = await charged();
    const { a, b } = await pair();
    await edit(key, a, { parts: B });
    const e = await row(key);
    const back = [...B, { name: "a", price: "0.000005" }];
    const fields = {
      key,
      expectedVersion: String(e.version),
      name: key,
      unit: "units",
      parts: JSON.stringify(back),
      currency: "USD",
      planAllowance: "",
      billingDay: "1",
      perCallMax: "1000",
      throttlePerMinute: "",
      reason: "a back",
    };
    expect(await updateEndpointCore(deps(a), form(fields))).toMatchObject({ status: "error", code: "approval_required", askKind: "endpoint.prices" });
    expect(await askForApprovalCore(deps(a), form({ ...fields, kind: "endpoint.prices" }))).toMatchObject({ status: "ok" });
    const [request] = await requestsOf("endpoint.prices", key);
    expect((await approveChange(t.db, { id: request?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).parts).toEqual(pico(back));
  });

  it("a catalog file adding a part back cheaper than one removed by an earlier file: refused without a token, asked with the asker's, in force when approved", async () => {
    const key = await charged();
    const { a, b } = await pair();
    const write = async (parts: Part[]) => {
      const current = await exportCatalog(t.db);
      n += 1;
      const file = path.join(dir, `parts${n}.json`);
      writeFileSync(file, JSON.stringify({ ...current, endpoints: current.endpoints.map((e) => (e.key === key ? { ...e, parts } : e)) }));
      return (token?: string) =>
        runApplyFile(t.db, { file, reason: "file change", confirmRaise: false, osUser: "ci", breakGlass: false, ...(token ? { token } : {}) }, () => {});
    };
    await (
      await write(B)
    )();
    expect((await row(key)).parts).toEqual(pico(B));
    const back = [...B, { name: "a", price: "0.000005" }];
    const apply = await write(back);
    await expect(apply()).rejects.toMatchObject({ code: "approval_required" });
    await apply((await createStaffToken(t.db, { staffId: a.staffId, name: "laptop" })).secret);
    expect((await row(key)).parts).toEqual(pico(B));
    const asked = await requestsOf("endpoint.prices", key);
    expect(asked.map((r) => r.change)).toEqual([{ endpointKey: key, parts: pico(back) }]);
    expect((await approveChange(t.db, { id: asked[0]?.id ?? 0, approver: b })).applied).toBe(true);
    expect((await row(key)).parts).toEqual(pico(back));
  });
});
