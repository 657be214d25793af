import { InputError } from "@/lib/errors";
import { count, eq, like, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { auditEvents, ceilings, endpoints } from "@/db/schema";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { killEndpoint } from "@/lib/ceilings";
import { setupControl } from "@/lib/control/context";
import {
  addCeiling,
  applyCatalog,
  CatalogConflictError,
  CatalogError,
  createEndpoint,
  type EndpointSpecInput,
  exportCatalog,
  planCatalog,
  readCatalogEndpoint,
  removeCeiling,
  setEndpointArchived,
  updateEndpoint,
} from "./index";

const admin = { type: "staff", email: "admin@example.com" } as const;
const config = { type: "config", name: "ci" } as const;
let n = 0;

function smsOtp(overrides: Partial<EndpointSpecInput> = {}): EndpointSpecInput {
  n += 1;
  return {
    key: `sms.otp-${n}`,
    name: "One-time code SMS",
    unit: "messages",
    parts: [{ name: "units", price: "0.0079" }],
    planAllowance: 3000,
    billingDay: 15,
    perCallMax: 1,
    throttlePerMinute: 30,
    ceilings: [
      { metric: "units", scope: "global", window: "utc_day", value: 100, min: 0, max: 150, default: 100 },
      { metric: "units", scope: "global", window: "billing_month", value: 3000, min: 0, max: 3000, default: 3000 },
      { metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 60, destinationKind: "phone", value: 1, min: 0, max: 5, default: 1 },
    ],
    ...overrides,
  };
}

async function catalogError(work: Promise<unknown>): Promise<CatalogError | InputError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CatalogError || error instanceof InputError) return error;
    throw error;
  }
  throw new Error("expected a CatalogError or an InputError");
}

describe.skipIf(skipWithoutDatabase())("the endpoint catalog on Postgres", () => {
  const t = useTestDatabase("catalog");

  const auditCount = async () => (await t.db.select({ n: count() }).from(auditEvents))[0]?.n ?? 0;
  const endpointCount = async () => (await t.db.select({ n: count() }).from(endpoints))[0]?.n ?? 0;

  it("creates an endpoint with its ceilings and cooldown in one audited step", async () => {
    const spec = smsOtp();
    const row = await createEndpoint(t.db, { spec, actor: admin, reason: "new OTP provider" });
    const read = await readCatalogEndpoint(t.db, row.key);
    expect(read.ceilings.map((c) => [c.scope, c.window, c.value, c.destinationKind])).toEqual([
      ["global", "utc_day", 100, null],
      ["global", "billing_month", 3000, null],
      ["destination", "first_hit", 1, "phone"],
    ]);
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.endpointId, row.id));
    expect(event).toMatchObject({ action: "endpoint.create", actor: "admin@example.com", reason: "new OTP provider", endpointKey: row.key });
    expect(event?.details).toMatchObject({ after: { name: "One-time code SMS", perCallMax: 1 } });
  });

  it("refuses an endpoint without a global ceiling, saying why, and saves nothing", async () => {
    const before = await endpointCount();
    const error = await catalogError(
      createEndpoint(t.db, {
        spec: smsOtp({ ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 5, min: 0, max: 10, default: 5 }] }),
        actor: admin,
        reason: "r",
      }),
    );
    expect(error.code).toBe("invalid_input");
    expect(error.message).toContain("without one its worst case is unbounded");
    expect(await endpointCount()).toBe(before);
  });

  // Each bad input names its field and changes nothing.
  const badInputs: [string, Partial<EndpointSpecInput>, string][] = [
    ["a key with spaces", { key: "sms otp" }, "key"],
    ["a key in upper case", { key: "SMS.otp" }, "key"],
    ["a key with NUL", { key: "sms.otp\u0000" }, "key"],
    ["a key of 200 characters", { key: "a".repeat(200) }, "key"],
    ["a price of -1", { parts: [{ name: "units", price: "-1" }] }, "parts[0].price"],
    ["a price of 1e9", { parts: [{ name: "units", price: "1e9" }] }, "parts[0].price"],
    ["a price of 0.5abc", { parts: [{ name: "units", price: "0.5abc" }] }, "parts[0].price"],
    ["an empty price", { parts: [{ name: "units", price: "" }] }, "parts[0].price"],
    [
      "a price finer than a pico",
      {
        parts: [
          { name: "input", price: "0.0000025" },
          { name: "output", price: "0.0000000000001" },
        ],
      },
      "parts[1].price",
    ],
    ["a price above $1,000 a unit", { parts: [{ name: "units", price: "1000.01" }] }, "parts[0].price"],
    ["a price as a JSON number", { parts: [{ name: "units", price: 0.0079 as unknown as string }] }, "parts[0].price"],
    [
      "a part named twice",
      {
        parts: [
          { name: "input", price: "0.1" },
          { name: "input", price: "0.2" },
        ],
      },
      "parts[1].name",
    ],
    ["a part name in upper case", { parts: [{ name: "Input", price: "0.1" }] }, "parts[0].name"],
    ["a part name with a space", { parts: [{ name: "cached input", price: "0.1" }] }, "parts[0].name"],
    ["no parts", { parts: [] }, "parts"],
    ["nine parts", { parts: Array.from({ length: 9 }, (_, i) => ({ name: `p${i}`, price: "0.1" })) }, "parts"],
    ["the old unitPriceMicros outside a file", { unitPriceMicros: 7900 } as Partial<EndpointSpecInput>, "unitPriceMicros"],
    ["a billing day of 29", { billingDay: 29 }, "billingDay"],
    ["a billing day of 0", { billingDay: 0 }, "billingDay"],
    ["a name with a NUL", { name: "OTP\u0000" }, "name"],
    [
      "bounds with min > max",
      { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 5, min: 10, max: 5, default: 5 }] },
      "ceilings[0].min",
    ],
    [
      "a default outside its bounds",
      { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 5, min: 0, max: 10, default: 50 }] },
      "ceilings[0].default",
    ],
    [
      "a value outside its bounds",
      { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 500, min: 0, max: 10, default: 5 }] },
      "ceilings[0].value",
    ],
    [
      "a cooldown without a window",
      {
        ceilings: [
          { metric: "units", scope: "global", window: "utc_day", value: 5, min: 0, max: 10, default: 5 },
          { metric: "calls", scope: "destination", window: "first_hit", value: 1, min: 0, max: 5, default: 1 },
        ],
      },
      "ceilings[1].windowSeconds",
    ],
    [
      "a ceiling of an unknown metric",
      { ceilings: [{ metric: "dollars" as "units", scope: "global", window: "utc_day", value: 5, min: 0, max: 10, default: 5 }] },
      "ceilings[0].metric",
    ],
    ["an unknown field", { colour: "red" } as Partial<EndpointSpecInput>, "colour"],
  ];
  it.each(badInputs)("refuses %s, naming the field", async (_what, patch, field) => {
    const before = { endpoints: await endpointCount(), audit: await auditCount() };
    const error = await catalogError(createEndpoint(t.db, { spec: smsOtp(patch), actor: admin, reason: "r" }));
    expect(error.code).toBe("invalid_input");
    expect((error as InputError).problems.some((p) => p.path === field || p.message.includes(`"${field}"`))).toBe(true);
    expect({ endpoints: await endpointCount(), audit: await auditCount() }).toEqual(before);
  });

  it("gives an endpoint created without parts the one part 'units', free until priced", async () => {
    const { parts: _p, ...spec } = smsOtp();
    const row = await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
    expect(row.parts).toEqual([{ name: "units", pricePico: 0 }]);
  });

  it("refuses a duplicate key, also of an archived endpoint", async () => {
    const spec = smsOtp();
    await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
    await setEndpointArchived(t.db, { key: spec.key, archived: true, actor: admin, reason: "retired" });
    const error = await catalogError(createEndpoint(t.db, { spec, actor: admin, reason: "r" }));
    expect(error.code).toBe("duplicate_key");
  });

  it("edits under an optimistic version: the second of two edits is a conflict", async () => {
    const row = await createEndpoint(t.db, { spec: smsOtp(), actor: admin, reason: "r" });
    const fields = {
      name: "OTP",
      unit: "messages",
      parts: [{ name: "units", price: "0.008" }],
      perCallMax: 1,
      billingDay: 15,
      planAllowance: 3000,
      throttlePerMinute: 30,
    };
    const results = await Promise.allSettled([
      updateEndpoint(t.db, { key: row.key, expectedVersion: row.version, fields: { ...fields, name: "first" }, actor: admin, reason: "a" }),
      updateEndpoint(t.db, { key: row.key, expectedVersion: row.version, fields: { ...fields, name: "second" }, actor: admin, reason: "b" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.find((r) => r.status === "rejected");
    expect(rejected?.status === "rejected" && rejected.reason instanceof CatalogConflictError).toBe(true);
    const events = await t.db.select().from(auditEvents).where(eq(auditEvents.endpointId, row.id));
    const update = events.find((e) => e.action === "endpoint.update");
    expect(update?.details).toMatchObject({
      changes: { parts: { before: [{ name: "units", pricePico: 7_900_000_000 }], after: [{ name: "units", pricePico: 8_000_000_000 }] } },
    });
  });

  it("asks to retype a per-call max raised 5x or more", async () => {
    const row = await createEndpoint(t.db, { spec: smsOtp(), actor: admin, reason: "r" });
    const fields = {
      name: "OTP",
      unit: "messages",
      parts: [{ name: "units", price: "0.0079" }],
      perCallMax: 5,
      billingDay: 15,
      planAllowance: 3000,
      throttlePerMinute: 30,
    };
    expect((await catalogError(updateEndpoint(t.db, { key: row.key, expectedVersion: 1, fields, actor: admin, reason: "bulk" }))).code).toBe(
      "confirmation_required",
    );
    // Confirmed, a larger per-call max is still a raise: a second admin (change control) on top.
    await expect(updateEndpoint(t.db, { key: row.key, expectedVersion: 1, fields, actor: admin, reason: "bulk", confirm: "5" })).rejects.toMatchObject({
      code: "approval_required",
    });
    expect((await readCatalogEndpoint(t.db, row.key)).endpoint.perCallMax).toBe(1);
    await updateEndpoint(t.db, { key: row.key, expectedVersion: 1, fields, actor: admin, reason: "bulk", confirm: "5", changeControl: setupControl("test") });
    expect((await readCatalogEndpoint(t.db, row.key)).endpoint.perCallMax).toBe(5);
  });

  it("adds and removes ceilings, but never the last global one", async () => {
    const spec = smsOtp({ ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100, min: 0, max: 150, default: 100 }] });
    const row = await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
    const caller = await addCeiling(t.db, {
      key: row.key,
      ceiling: { metric: "units", scope: "caller", window: "utc_day", value: 5, min: 0, max: 20, default: 5 },
      actor: admin,
      reason: "per account",
    });
    const [global] = (await readCatalogEndpoint(t.db, row.key)).ceilings.filter((c) => c.scope === "global");
    if (!global) throw new Error("no global ceiling");
    const last = await catalogError(removeCeiling(t.db, { key: row.key, ceilingId: global.id, actor: admin, reason: "r" }));
    expect(last.code).toBe("last_global_ceiling");
    expect(last.message).toContain("worst case is unbounded");
    await removeCeiling(t.db, { key: row.key, ceilingId: caller.id, actor: admin, reason: "not needed" });
    const actions = (await t.db.select().from(auditEvents).where(eq(auditEvents.endpointId, row.id)).orderBy(auditEvents.id)).map((e) => e.action);
    expect(actions).toEqual(["endpoint.create", "ceiling.add", "ceiling.remove"]);
    // A value 5x above its default needs the retype; the same ceiling twice is refused.
    const big = { metric: "units", scope: "global", window: "billing_month", value: 600, min: 0, max: 1000, default: 100 } as const;
    expect((await catalogError(addCeiling(t.db, { key: row.key, ceiling: big, actor: admin, reason: "r" }))).code).toBe("confirmation_required");
    await expect(addCeiling(t.db, { key: row.key, ceiling: big, actor: admin, reason: "r", confirm: "600" })).rejects.toMatchObject({
      code: "approval_required",
    });
    await addCeiling(t.db, { key: row.key, ceiling: big, actor: admin, reason: "r", confirm: "600", changeControl: setupControl("test") });
    expect((await catalogError(addCeiling(t.db, { key: row.key, ceiling: { ...big, value: 100 }, actor: admin, reason: "r" }))).code).toBe("invalid_input");
  });

  describe("as a file", () => {
    it("exports, and applying the export to a fresh database reproduces the catalog; a second apply changes nothing", async () => {
      const spec = smsOtp({ overrides: [] });
      await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
      await killEndpoint(t.db, { endpointKey: spec.key, actor: admin, reason: "incident" });
      const exported = await exportCatalog(t.db);
      const text = JSON.stringify(exported, null, 2);
      const fresh = await createTestDatabase("catalog_fresh");
      try {
        // Rebuilding a database from its export is setup: an earlier test's ceiling above its default
        // (added under setupControl) is created as it was, not asked for.
        const result = await applyCatalog(fresh.db, {
          text,
          actor: config,
          reason: "restore from file",
          confirmRaise: true,
          changeControl: setupControl("restore from file"),
        });
        expect(result.changeCount).toBe(exported.endpoints.length);
        expect(result.endpoints.find((e) => e.key === spec.key)?.changes[0]?.lines[0]).toBe(
          `+ new endpoint ${spec.key} (One-time code SMS); parts: units 0.0079`,
        );
        expect(await exportCatalog(fresh.db)).toEqual(exported);
        const again = await planCatalog(fresh.db, text);
        expect(again).toMatchObject({ ok: true, changeCount: 0 });
        const auditBefore = resultRows<{ n: number }>(await fresh.db.execute(sql`select count(*)::int as n from audit_events`))[0]?.n;
        await applyCatalog(fresh.db, { text, actor: config, reason: "twice", confirmRaise: false });
        const auditAfter = resultRows<{ n: number }>(await fresh.db.execute(sql`select count(*)::int as n from audit_events`))[0]?.n;
        expect(auditAfter).toBe(auditBefore);
        const [created] = await fresh.db.select().from(auditEvents).where(eq(auditEvents.endpointKey, spec.key));
        expect(created).toMatchObject({ actorType: "config", actor: "ci", action: "endpoint.create" });
        expect(created?.details).toMatchObject({ sha256: result.sha256 });
        // The kill came along, and the file keeps it: restore is explicit.
        const killed = await fresh.db
          .select()
          .from(ceilings)
          .where(eq(ceilings.endpointId, (await readCatalogEndpoint(fresh.db, spec.key)).endpoint.id));
        expect(killed.every((c) => c.value === 0 && c.valueBeforeKill !== null)).toBe(true);
      } finally {
        await fresh.drop();
      }
    });

    it("writes each part's price as the exact decimal, and reads it back to the pico", async () => {
      const spec = smsOtp({
        unit: "tokens",
        perCallMax: 8000,
        parts: [
          { name: "input", price: "0.0000025" },
          { name: "output", price: "0.00001" },
        ],
      });
      await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
      expect((await readCatalogEndpoint(t.db, spec.key)).endpoint.parts).toEqual([
        { name: "input", pricePico: 2_500_000 },
        { name: "output", pricePico: 10_000_000 },
      ]);
      const exported = (await exportCatalog(t.db)).endpoints.find((e) => e.key === spec.key);
      expect(exported?.parts).toEqual([
        { name: "input", price: "0.0000025" },
        { name: "output", price: "0.00001" },
      ]);
      expect(exported).not.toHaveProperty("unitPriceMicros");
    });

    it("applies an old file that gives unitPriceMicros as the one part 'units', and plans no change after", async () => {
      const spec = smsOtp();
      await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
      const file = await exportCatalog(t.db);
      // As a file was written before parts: a whole-micro price, no parts.
      const old = { ...file, endpoints: file.endpoints.map(({ parts: _p, ...e }) => ({ ...e, unitPriceMicros: e.key === spec.key ? 8000 : 7900 })) };
      const fresh = await createTestDatabase("catalog_legacy");
      try {
        await applyCatalog(fresh.db, {
          text: JSON.stringify(old),
          actor: config,
          reason: "old file",
          confirmRaise: true,
          changeControl: setupControl("old file"),
        });
        expect((await readCatalogEndpoint(fresh.db, spec.key)).endpoint.parts).toEqual([{ name: "units", pricePico: 8_000_000_000 }]);
        expect(await planCatalog(fresh.db, JSON.stringify(old))).toMatchObject({ ok: true, changeCount: 0 });
        const exported = await exportCatalog(fresh.db);
        expect(exported.endpoints.find((e) => e.key === spec.key)?.parts).toEqual([{ name: "units", price: "0.008" }]);
        expect(await planCatalog(fresh.db, JSON.stringify(exported))).toMatchObject({ ok: true, changeCount: 0 });
        // A new price plans as a change of parts, said in decimals.
        const cheaper = {
          ...exported,
          endpoints: exported.endpoints.map((e) => (e.key === spec.key ? { ...e, parts: [{ name: "units", price: "0.0075" }] } : e)),
        };
        const plan = await planCatalog(fresh.db, JSON.stringify(cheaper));
        if (!plan.ok) throw new Error(plan.errors.join("\n"));
        expect(plan.endpoints.flatMap((e) => e.changes.flatMap((c) => c.lines))).toEqual(["~ parts: units 0.008 → units 0.0075"]);
      } finally {
        await fresh.drop();
      }
    });

    it("refuses a file endpoint that gives both parts and unitPriceMicros", async () => {
      const file = await exportCatalog(t.db);
      const both = { ...file, endpoints: file.endpoints.map((e, i) => (i === 0 ? { ...e, unitPriceMicros: 1 } : e)) };
      const plan = await planCatalog(t.db, JSON.stringify(both));
      expect(plan.ok).toBe(false);
      if (!plan.ok) expect(plan.errors.join("\n")).toContain("endpoints[0].unitPriceMicros is the old single price: give parts or unitPriceMicros, not both");
    });

    it("never lifts a kill unless the file says killed: false", async () => {
      const spec = smsOtp();
      await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
      await killEndpoint(t.db, { endpointKey: spec.key, actor: admin, reason: "incident" });
      const file = await exportCatalog(t.db);
      const strip = (killed?: boolean) => ({
        ...file,
        endpoints: file.endpoints.map((e) =>
          e.key === spec.key ? { ...e, ceilings: e.ceilings.map(({ killed: _k, ...c }) => (killed === undefined ? c : { ...c, killed })) } : e,
        ),
      });
      // Written before the kill (no `killed` field): applying it keeps the endpoint killed.
      expect(await planCatalog(t.db, JSON.stringify(strip()))).toMatchObject({ ok: true, changeCount: 0 });
      const restore = await applyCatalog(t.db, { text: JSON.stringify(strip(false)), actor: config, reason: "incident over", confirmRaise: false });
      expect(restore.endpoints[0]?.changes.map((c) => c.action)).toEqual(["ceiling.restore", "ceiling.restore", "ceiling.restore"]);
      const rows = await t.db
        .select()
        .from(ceilings)
        .where(eq(ceilings.endpointId, (await readCatalogEndpoint(t.db, spec.key)).endpoint.id));
      expect(rows.map((c) => c.value).sort((a, b) => a - b)).toEqual([1, 100, 3000]);
    });

    const badFiles: [string, (file: Record<string, unknown>) => unknown, string][] = [
      ["JSON that does not parse", () => "{ not json", "not valid JSON"],
      ["an unknown field", (f) => ({ ...f, extra: 1 }), "extra"],
      ["a duplicate endpoint", (f) => ({ ...f, endpoints: [...(f.endpoints as unknown[]), ...(f.endpoints as unknown[])] }), "listed twice"],
      ["a value outside its bounds (an error, not a clamp)", (f) => patchFirstCeiling(f, { value: 999_999 }), "endpoints[0].ceilings[0].value"],
      ["a ceiling of an unknown metric", (f) => patchFirstCeiling(f, { metric: "dollars" }), "endpoints[0].ceilings[0].metric"],
      ["a price of 1e9", (f) => patchFirstEndpoint(f, { parts: [{ name: "units", price: "1e9" }] }), "endpoints[0].parts[0].price must be a plain decimal"],
      [
        "a price finer than a pico",
        (f) => patchFirstEndpoint(f, { parts: [{ name: "units", price: "0.0000000000001" }] }),
        "endpoints[0].parts[0].price must have at most 12 decimal places",
      ],
      [
        "a part named twice",
        (f) =>
          patchFirstEndpoint(f, {
            parts: [
              { name: "input", price: "1" },
              { name: "input", price: "2" },
            ],
          }),
        "part 'input' is listed twice",
      ],
      [
        "an old price that is not whole",
        (f) => patchFirstEndpoint(f, { parts: undefined, unitPriceMicros: 0.5 }),
        "endpoints[0]: unit price (micros) must be a whole number",
      ],
      ["an endpoint left out", (f) => ({ ...f, endpoints: (f.endpoints as unknown[]).slice(1) }), "is in the database but not in the file"],
    ];
    it.each(badFiles)("refuses %s with its path, and applies nothing", async (_what, mutate, expected) => {
      const file = (await exportCatalog(t.db)) as unknown as Record<string, unknown>;
      const mutated = mutate(file);
      const text = typeof mutated === "string" ? mutated : JSON.stringify(mutated);
      const plan = await planCatalog(t.db, text);
      expect(plan.ok).toBe(false);
      if (!plan.ok) expect(plan.errors.join("\n")).toContain(expected);
      const before = { audit: await auditCount(), catalog: await exportCatalog(t.db) };
      await expect(applyCatalog(t.db, { text, actor: config, reason: "bad", confirmRaise: true })).rejects.toBeInstanceOf(InputError);
      expect({ audit: await auditCount(), catalog: await exportCatalog(t.db) }).toEqual(before);
    });

    it("plans change by change with guarantee sentences and worst cases, and applies all of it or nothing", async () => {
      const spec = smsOtp();
      await createEndpoint(t.db, { spec, actor: admin, reason: "r" });
      const file = await exportCatalog(t.db);
      const target = file.endpoints.find((e) => e.key === spec.key);
      if (!target?.ceilings[0]) throw new Error("missing");
      target.ceilings[0].value = 120;
      target.name = "OTP by SMS";
      const plan = await planCatalog(t.db, JSON.stringify(file));
      if (!plan.ok) throw new Error(plan.errors.join("\n"));
      const lines = plan.endpoints.flatMap((e) => [...e.changes.flatMap((c) => c.lines), ...e.worstCase]).join("\n");
      expect(lines).toContain('"at most 100 messages per UTC day" → "at most 120 messages per UTC day"');
      expect(lines).toContain("worst case per day: $0.79 a day (100 messages) → $0.95 a day (120 messages)");
      // A raise of 5x in the same file: without --confirm-raise nothing applies, not even the name.
      target.ceilings[1] = {
        ...target.ceilings[1],
        value: 3000,
        max: 20_000,
        default: 3000,
        metric: "units",
        scope: "global",
        window: "billing_month",
        min: 0,
        alertThresholds: [50, 80, 100],
      };
      const perCall = { ...target, perCallMax: 10 };
      const raised = { ...file, endpoints: file.endpoints.map((e) => (e.key === spec.key ? perCall : e)) };
      await expect(applyCatalog(t.db, { text: JSON.stringify(raised), actor: config, reason: "r", confirmRaise: false })).rejects.toMatchObject({
        code: "confirmation_required",
      });
      expect((await readCatalogEndpoint(t.db, spec.key)).endpoint.name).toBe("One-time code SMS");
      // Confirmed, its raises still need a second admin (change control): still nothing applies.
      await expect(applyCatalog(t.db, { text: JSON.stringify(raised), actor: config, reason: "r", confirmRaise: true })).rejects.toMatchObject({
        code: "approval_required",
      });
      expect((await readCatalogEndpoint(t.db, spec.key)).endpoint).toMatchObject({ name: "One-time code SMS", perCallMax: 1 });
      // Without the raises (a lower day ceiling, the name), the file applies in one go.
      const lowered = await exportCatalog(t.db);
      const again = lowered.endpoints.find((e) => e.key === spec.key);
      if (!again?.ceilings[0]) throw new Error("missing");
      again.ceilings[0].value = 90;
      again.name = "OTP by SMS";
      await applyCatalog(t.db, { text: JSON.stringify(lowered), actor: config, reason: "r", confirmRaise: false });
      expect((await readCatalogEndpoint(t.db, spec.key)).endpoint).toMatchObject({ name: "OTP by SMS", perCallMax: 1 });
      const changed = await t.db.select().from(auditEvents).where(like(auditEvents.endpointKey, spec.key));
      expect(
        changed
          .filter((e) => e.actorType === "config")
          .map((e) => e.action)
          .sort(),
      ).toEqual(["ceiling.update", "endpoint.update"]);
    });
  });
});

function patchFirstEndpoint(file: Record<string, unknown>, patch: Record<string, unknown>): unknown {
  const [firstEndpoint, ...rest] = file.endpoints as Record<string, unknown>[];
  return { ...file, endpoints: [{ ...firstEndpoint, ...patch }, ...rest] };
}

function patchFirstCeiling(file: Record<string, unknown>, patch: Record<string, unknown>): unknown {
  const [firstEndpoint, ...rest] = file.endpoints as Record<string, unknown>[];
  if (!firstEndpoint) return file;
  const [firstCeiling, ...others] = firstEndpoint.ceilings as Record<string, unknown>[];
  return { ...file, endpoints: [{ ...firstEndpoint, ceilings: [{ ...firstCeiling, ...patch }, ...others] }, ...rest] };
}
