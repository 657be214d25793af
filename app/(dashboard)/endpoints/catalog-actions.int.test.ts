import { asc, count, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { auditEvents, ceilings, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { createEndpoint } from "@/lib/catalog";
import { addCeilingCore, archiveEndpointCore, createEndpointCore, removeCeilingCore, unarchiveEndpointCore, updateEndpointCore } from "./catalog-action-core";
import { form } from "@/app/_lib/test-form";

// The catalog's server actions are public POST endpoints: each checks the role itself. A call from
// no session, a viewer or an operator changes nothing; an admin's goes through.

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;

const parts = (...rows: { name: string; price: string }[]) => JSON.stringify(rows);
const fields = {
  name: "OTP",
  unit: "messages",
  parts: parts({ name: "units", price: "0.0079" }),
  currency: "USD",
  planAllowance: "3000",
  billingDay: "1",
  perCallMax: "1",
  throttlePerMinute: "",
};
const day = { metric: "units", scope: "global", window: "utc_day", value: "100", min: "0", max: "150", default: "100", alertThresholds: "50, 80, 100" };
let n = 0;

describe.skipIf(skipWithoutDatabase())("catalog server actions", () => {
  const t = useTestDatabase("catalog_actions");

  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });

  async function snapshot() {
    return {
      endpoints: await t.db.select().from(endpoints).orderBy(asc(endpoints.id)),
      ceilings: await t.db.select().from(ceilings).orderBy(asc(ceilings.id)),
      audit: (await t.db.select({ n: count() }).from(auditEvents))[0]?.n,
    };
  }

  async function existing() {
    n += 1;
    const key = `sms.a${n}`;
    const row = await createEndpoint(t.db, {
      spec: {
        key,
        name: "x",
        unit: "messages",
        parts: [{ name: "units", price: "0.000001" }],
        perCallMax: 1,
        ceilings: [
          { metric: "units", scope: "global", window: "utc_day", value: 10, min: 0, max: 20, default: 10 },
          { metric: "units", scope: "global", window: "billing_month", value: 100, min: 0, max: 200, default: 100 },
        ],
      },
      actor: { type: "system", name: "test" },
      reason: "setup",
    });
    const rows = await t.db.select().from(ceilings).where(eq(ceilings.endpointId, row.id)).orderBy(asc(ceilings.id));
    return { key, version: row.version, ceilingId: rows[1]?.id ?? 0 };
  }

  const cases: { name: string; core: Core; form: (e: Awaited<ReturnType<typeof existing>>) => FormData }[] = [
    { name: "create", core: createEndpointCore, form: () => form({ key: `sms.new${(n += 1)}`, ...fields, ceilings: JSON.stringify([day]), reason: "r" }) },
    { name: "update", core: updateEndpointCore, form: (e) => form({ key: e.key, expectedVersion: String(e.version), ...fields, reason: "r" }) },
    { name: "add ceiling", core: addCeilingCore, form: (e) => form({ key: e.key, ...day, scope: "caller", value: "5", default: "5", reason: "r" }) },
    { name: "remove ceiling", core: removeCeilingCore, form: (e) => form({ key: e.key, ceilingId: String(e.ceilingId), reason: "r" }) },
    { name: "archive", core: archiveEndpointCore, form: (e) => form({ key: e.key, reason: "r" }) },
  ];

  for (const c of cases) {
    for (const role of [null, "viewer", "operator"] as const) {
      it(`${c.name} as ${role ?? "no session"} is refused and changes nothing`, async () => {
        const e = await existing();
        const before = await snapshot();
        const state = await c.core(deps(role), c.form(e));
        expect(state).toEqual({ status: "error", error: role === null ? "Sign in required" : `Your role (${role}) cannot do this` });
        expect(await snapshot()).toEqual(before);
      });
    }
    it(`${c.name} as an admin goes through`, async () => {
      const e = await existing();
      const state = await c.core(deps("admin"), c.form(e));
      expect(state.status, JSON.stringify(state)).toBe("ok");
    });
  }

  it("unarchive, even as an admin, needs a second admin: approval_required, it stays archived", async () => {
    const e = await existing();
    expect((await archiveEndpointCore(deps("admin"), form({ key: e.key, reason: "r" }))).status).toBe("ok");
    const before = await snapshot();
    expect(await unarchiveEndpointCore(deps("admin"), form({ key: e.key, reason: "back" }))).toMatchObject({ status: "error", code: "approval_required" });
    expect(await snapshot()).toEqual(before);
  });

  it("a larger per-call max or a new ceiling above its default, even from an admin, needs a second admin", async () => {
    const e = await existing();
    const before = await snapshot();
    expect(
      await updateEndpointCore(deps("admin"), form({ key: e.key, expectedVersion: String(e.version), ...fields, perCallMax: "2", reason: "r" })),
    ).toMatchObject({ status: "error", code: "approval_required" });
    expect(await addCeilingCore(deps("admin"), form({ key: e.key, ...day, scope: "caller", value: "6", default: "5", reason: "r" }))).toMatchObject({
      status: "error",
      code: "approval_required",
    });
    expect(await snapshot()).toEqual(before);
  });

  // Typed by a person: each bad number is an error next to its field, and nothing is saved.
  const typos: [string, Record<string, string>, string][] = [
    ["a price of 1e9", { parts: parts({ name: "units", price: "1e9" }) }, "parts[0].price"],
    ["500abc", { perCallMax: "500abc" }, "perCallMax"],
    ["-5", { billingDay: "-5" }, "billingDay"],
    ["an empty per-call max", { perCallMax: "" }, "perCallMax"],
    ["a price of 0.5abc", { parts: parts({ name: "input", price: "0.0000025" }, { name: "output", price: "0.5abc" }) }, "parts[1].price"],
    ["a price of -1", { parts: parts({ name: "units", price: "-1" }) }, "parts[0].price"],
    ["an empty price", { parts: parts({ name: "units", price: "" }) }, "parts[0].price"],
    ["a price finer than a pico", { parts: parts({ name: "units", price: "0.0000000000001" }) }, "parts[0].price"],
    ["a price above $1,000", { parts: parts({ name: "units", price: "1000.5" }) }, "parts[0].price"],
    ["a part named twice", { parts: parts({ name: "input", price: "1" }, { name: "input", price: "2" }) }, "parts[1].name"],
    ["a bad part name", { parts: parts({ name: "Input Tokens", price: "1" }) }, "parts[0].name"],
    ["no parts", { parts: "[]" }, "parts"],
    ["nine parts", { parts: parts(...Array.from({ length: 9 }, (_, i) => ({ name: `p${i}`, price: "1" }))) }, "parts"],
    ["parts that are not JSON", { parts: "units=1" }, "parts"],
    ["a billing day of 29", { billingDay: "29" }, "billingDay"],
  ];
  it.each(typos)("create refuses %s, naming the field", async (_what, patch, field) => {
    const before = await snapshot();
    const state = await createEndpointCore(
      deps("admin"),
      form({ key: `sms.typo${(n += 1)}`, ...fields, ...patch, ceilings: JSON.stringify([day]), reason: "r" }),
    );
    expect(state.status).toBe("error");
    if (state.status === "error") expect(Object.keys(state.fieldErrors ?? {})).toContain(field);
    const after = await snapshot();
    expect({ endpoints: after.endpoints, ceilings: after.ceilings }).toEqual({ endpoints: before.endpoints, ceilings: before.ceilings });
    // Nothing saved, but what was typed is in the audit log for staff to see.
    const [rejected] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "endpoint.rejected")).orderBy(desc(auditEvents.id)).limit(1);
    expect(rejected?.rawInput).toContain(JSON.stringify(Object.values(patch)[0]));
    expect(after.audit).toBe((before.audit ?? 0) + 1);
  });

  it("refuses a control character at the form boundary, before the catalog sees it, and audits the raw value", async () => {
    const before = await snapshot();
    const state = await createEndpointCore(
      deps("admin"),
      form({ key: `sms.nul${(n += 1)}`, ...fields, name: "OTP\u0000", ceilings: JSON.stringify([day]), reason: "r" }),
    );
    expect(state).toMatchObject({ status: "error", code: "invalid_input" });
    const after = await snapshot();
    expect(after.endpoints).toEqual(before.endpoints);
    const [rejected] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "endpoint.create.rejected")).orderBy(desc(auditEvents.id)).limit(1);
    expect(rejected?.target).toBe("name");
  });

  it("reports a bad price and a bad number together, each at its field", async () => {
    const state = await createEndpointCore(
      deps("admin"),
      form({
        key: `sms.two${(n += 1)}`,
        ...fields,
        perCallMax: "x",
        parts: parts({ name: "units", price: "1e9" }),
        ceilings: JSON.stringify([day]),
        reason: "r",
      }),
    );
    expect(state.status === "error" && state.fieldErrors).toMatchObject({
      perCallMax: expect.stringContaining("got 'x'"),
      "parts[0].price": expect.stringContaining("got '1e9'"),
    });
  });

  it("saves priced parts from the form exactly, and an edit of a price is one audited change", async () => {
    const key = `llm.parts${(n += 1)}`;
    const created = await createEndpointCore(
      deps("admin"),
      form({
        key,
        ...fields,
        unit: "tokens",
        parts: parts({ name: "input", price: "0.0000025" }, { name: "output", price: "0.00001" }),
        ceilings: JSON.stringify([day]),
        reason: "r",
      }),
    );
    expect(created.status, JSON.stringify(created)).toBe("ok");
    const [row] = await t.db.select().from(endpoints).where(eq(endpoints.key, key));
    expect(row?.parts).toEqual([
      { name: "input", pricePico: 2_500_000 },
      { name: "output", pricePico: 10_000_000 },
    ]);
    const updated = await updateEndpointCore(
      deps("admin"),
      form({
        key,
        expectedVersion: String(row?.version),
        ...fields,
        unit: "tokens",
        parts: parts({ name: "input", price: "0.000003" }, { name: "output", price: "0.00001" }),
        reason: "new price",
      }),
    );
    expect(updated).toMatchObject({ status: "ok", message: `Saved ${key}: parts changed.` });
  });

  it("names a bad ceiling number by its row", async () => {
    const state = await createEndpointCore(
      deps("admin"),
      form({ key: `sms.row${(n += 1)}`, ...fields, ceilings: JSON.stringify([{ ...day, max: "1e3" }]), reason: "r" }),
    );
    expect(state.status === "error" && state.fieldErrors?.["ceilings[0].max"]).toContain("must be a whole number, got '1e3'");
  });
});
