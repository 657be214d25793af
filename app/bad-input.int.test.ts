import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { type Db, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { SessionStaff } from "@/app/_lib/session";
import { handleReserve } from "@/app/api/v1/_lib/reserve-handler";
import { handleResolve } from "@/app/api/v1/_lib/resolve-handler";
import { apiRequest, errorCode, makeKey, read } from "@/app/api/v1/_lib/test-support";
import { checkUrl } from "@/lib/http/strict-input";
import { AuditFilters } from "@/lib/audit/log";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { RefusalPosition } from "@/lib/refusals/filters";
import { acknowledgeAlertsCore, createDestinationCore, deleteDestinationCore, setDestinationEnabledCore } from "./(dashboard)/alerts/alert-action-core";
import { createApiKeyCore, revokeApiKeyCore } from "./(dashboard)/api-keys/api-key-action-core";
import { killAllCore, killEndpointCore, restoreEndpointCore } from "./(dashboard)/control-action-core";
import { adjustCeilingCore, removeOverrideCore, setBoundsCore, setOverrideCore } from "./(dashboard)/endpoints/[key]/ceiling-action-core";
import { exportRefusalsRequest } from "./(dashboard)/refusals/export/export-core";
import { addStaffCore, changeRoleCore, setDisabledCore } from "./(dashboard)/staff/staff-action-core";
import { form } from "@/app/_lib/test-form";

// The bad inputs of the security review, endpoint by endpoint: each is refused with a 400 or a
// form error naming the field, and none changes anything but the audit trail of a rejection.

const NUL = "\u0000";
const CONTROLS = [NUL, "\u0001", "\u0008", "\u001b", "\u007f", "\u009b"];
const MB = "x".repeat(1024 * 1024);
const LOOSE_IDS = ["0x0A", "1e1", "10.0", " 10", "+10", "-1", "1,0", "١٠", ""];

/** Everything but the audit log's rejection rows: what "nothing changed" compares. */
async function snapshot(db: Db): Promise<string> {
  const tables = resultRows<{ name: string }>(
    await db.execute(sql`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`),
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const where = name === "audit_events" ? sql` where action not like '%.rejected'` : sql``;
    const rows = resultRows<{ h: string | null }>(
      await db.execute(sql`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${sql.identifier(name)} t${where}`),
    );
    parts.push(`${name}:${rows[0]?.h ?? ""}`);
  }
  return parts.join("\n");
}

type FormCore = (deps: ActionDeps, formData: FormData) => Promise<{ status: string; error?: string }>;

describe.skipIf(skipWithoutDatabase())("one strict input boundary: every bad input refused, nothing changed", () => {
  const t = useTestDatabase("bad_input");
  let key = "";
  let ceilingId = "";
  let version = "";
  let apiKey = "";
  const admin: SessionStaff = { id: 1, email: "admin@test.local", role: "admin" };
  const deps = (): ActionDeps => ({ session: async () => admin, db: async () => t.db, revalidate: () => {} });

  beforeAll(async () => {
    const ep = await createEndpoint(t.db);
    key = ep.key;
    const c = ep.ceilings[0];
    ceilingId = String(c?.id ?? 0);
    version = String(c?.version ?? 1);
    apiKey = (await makeKey(t.db, { endpoints: [key], account: "acct_bad" })).secret;
  });

  // Valid forms for each core; a case replaces one field with a bad value.
  const good = (): Record<string, [FormCore, Record<string, string | string[]>]> => ({
    "ceiling.kill": [killEndpointCore, { endpointKey: key, reason: "incident" }],
    "ceiling.restore": [restoreEndpointCore, { endpointKey: key, reason: "fixed" }],
    "ceiling.kill_all": [killAllCore, { reason: "incident" }],
    "ceiling.adjust": [adjustCeilingCore, { ceilingId, expectedVersion: version, input: "90", reason: "tune" }],
    "ceiling.bounds": [setBoundsCore, { ceilingId, expectedVersion: version, min: "1", max: "500", reason: "tune" }],
    "ceiling.override": [setOverrideCore, { ceilingId, caller: "acct_x", input: "5", reason: "vip" }],
    "ceiling.override_remove": [removeOverrideCore, { ceilingId, caller: "acct_x", reason: "done" }],
    "api_key.create": [createApiKeyCore, { name: "k", binding: "account", account: "acct_k", endpointKeys: [key] }],
    "api_key.revoke": [revokeApiKeyCore, { id: "999999" }],
    "staff.add": [addStaffCore, { email: "new@example.com", role: "viewer", name: "New" }],
    "staff.role": [changeRoleCore, { email: "nobody@example.com", role: "viewer" }],
    "staff.disable": [setDisabledCore, { email: "nobody@example.com", disabled: "true" }],
    "alert.acknowledge": [acknowledgeAlertsCore, { alertId: "999999" }],
    "alert_destination.create": [createDestinationCore, { name: "ops", kind: "webhook", target: "https://hooks.example.com/x" }],
    "alert_destination.enable": [setDestinationEnabledCore, { id: "999999", enabled: "true" }],
    "alert_destination.delete": [deleteDestinationCore, { id: "999999" }],
  });

  const formCases: [string, string, string][] = [];
  for (const [action, [, fields]] of Object.entries({ ...good() })) {
    for (const field of Object.keys(fields)) {
      for (const c of CONTROLS) formCases.push([action, field, `bad${c}value`]);
      formCases.push([action, field, MB]);
    }
  }
  for (const action of ["ceiling.adjust", "ceiling.bounds"]) {
    for (const id of LOOSE_IDS) formCases.push([action, "ceilingId", id], [action, "expectedVersion", id]);
  }
  for (const action of ["api_key.revoke", "alert_destination.enable", "alert_destination.delete"]) {
    for (const id of LOOSE_IDS) formCases.push([action, "id", id]);
  }
  formCases.push(["staff.add", "email", `${"a".repeat(1016)}@example.com`], ["staff.add", "email", `${"a".repeat(243)}@example.com`]);

  it(`refuses ${formCases.length} bad form values with a form error and changes nothing`, async () => {
    const before = await snapshot(t.db);
    const forms = good();
    for (const [action, field, value] of formCases) {
      const entry = forms[action];
      if (!entry) throw new Error(`no form for ${action}`);
      const [core, fields] = entry;
      const result = await core(deps(), form({ ...fields, [field]: value }));
      expect(result.status, `${action} ${field}=${JSON.stringify(value.slice(0, 20))}`).toBe("error");
      expect(result.error, `${action} ${field}`).not.toMatch(/could not be saved/);
    }
    expect(await snapshot(t.db)).toBe(before);
  });

  it("names the field, and audits what an admin typed as *.rejected with the raw input escaped", async () => {
    const result = await killEndpointCore(deps(), form({ endpointKey: key, reason: `oops${NUL}` }));
    expect(result).toMatchObject({ status: "error", error: expect.stringContaining("reason") });
    const rows = resultRows<{ action: string; target: string; raw: string }>(
      await t.db.execute(sql`select action, target, raw_input as raw from audit_events where action = 'ceiling.kill.rejected' order by id desc limit 1`),
    );
    expect(rows[0]).toEqual({ action: "ceiling.kill.rejected", target: "reason", raw: "oops\\u0000" });
  });

  it("never writes a refused password or secret into the audit log", async () => {
    const password = `correct-horse-battery${NUL}`;
    const result = await addStaffCore(deps(), form({ email: "new@test.local", role: "viewer", password }));
    expect(result).toMatchObject({ status: "error", code: "invalid_input", error: expect.stringContaining("password") });
    const rows = resultRows<{ target: string; raw: string; details: string }>(
      await t.db.execute(
        sql`select target, raw_input as raw, details::text as details from audit_events where action = 'staff.add.rejected' order by id desc limit 1`,
      ),
    );
    expect(rows[0]).toMatchObject({ target: "password", raw: "(secret not recorded)" });
    expect(JSON.stringify(rows[0])).not.toContain("correct-horse");
  });

  it("never writes a refused webhook URL into the audit log: it carries its token", async () => {
    const target = "https://hooks.slack.com/services/T000/B000/XXXXSECRETTOKENXXXX\u0007";
    const result = await createDestinationCore(deps(), form({ name: "On call", kind: "slack", target }));
    expect(result).toMatchObject({ status: "error", code: "invalid_input" });
    const rows = resultRows<{ target: string; raw: string }>(
      await t.db.execute(sql`select target, raw_input as raw from audit_events where action = 'alert_destination.create.rejected' order by id desc limit 1`),
    );
    expect(rows[0]).toEqual({ target: "target", raw: "(secret not recorded)" });
  });

  it("refuses a field sent twice instead of acting on one of the two", async () => {
    const before = await snapshot(t.db);
    expect(await killEndpointCore(deps(), form({ endpointKey: [key, "other.endpoint"] }))).toEqual({
      status: "error",
      error: "endpointKey was sent more than once",
      code: "invalid_input",
    });
    expect(await revokeApiKeyCore(deps(), form({ id: ["1", "2"] }))).toMatchObject({ status: "error", error: "id was sent more than once" });
    expect(await snapshot(t.db)).toBe(before);
  });

  it("refuses a forged call whose form is not a form", async () => {
    for (const notAForm of [{}, "x", null, [["endpointKey", key]]]) {
      expect(await killEndpointCore(deps(), notAForm as unknown as FormData)).toEqual({
        status: "error",
        error: "the action takes a form",
        code: "invalid_input",
      });
    }
  });

  const jsonCases: [string, string][] = [
    ...CONTROLS.flatMap((c): [string, string][] => [
      [`endpoint with ${JSON.stringify(c)}`, JSON.stringify({ endpoint: `${"k"}${c}`, amount: 1 })],
      [`caller with ${JSON.stringify(c)}`, JSON.stringify({ endpoint: "x", amount: 1, caller: `a${c}` })],
      [`destination with ${JSON.stringify(c)}`, JSON.stringify({ endpoint: "x", amount: 1, destination: `a${c}@example.com` })],
      [`idempotencyKey with ${JSON.stringify(c)}`, JSON.stringify({ endpoint: "x", amount: 1, idempotencyKey: `k${c}` })],
      [`a key with ${JSON.stringify(c)}`, `{"endpoint":"x","amount":1,"a${c === NUL ? "\\u0000" : JSON.stringify(c).slice(1, -1)}":1}`],
    ]),
    ["two amount keys", '{"endpoint":"E","amount":100000,"amount":1}'],
    ["two endpoint keys", '{"endpoint":"other","endpoint":"E","amount":1}'],
    ["a repeated key spelt with an escape", '{"endpoint":"E","amount":1,"\\u0061mount":2}'],
  ];

  it(`answers ${jsonCases.length} bad reservation bodies with 400 and charges nothing`, async () => {
    // The key's last use is recorded at most once a minute, by design: record it before comparing.
    await handleReserve(apiRequest("/api/v1/reservations", { key: apiKey, raw: "{" }), { db: async () => t.db });
    const before = await snapshot(t.db);
    for (const [what, raw] of jsonCases) {
      const answer = await read(
        await handleReserve(apiRequest("/api/v1/reservations", { key: apiKey, raw: raw.replaceAll('"E"', JSON.stringify(key)) }), { db: async () => t.db }),
      );
      expect(answer.status, what).toBe(400);
      expect(errorCode(answer), what).toMatch(/^(duplicate_field|invalid_characters)$/);
    }
    const dup = await read(
      await handleReserve(apiRequest("/api/v1/reservations", { key: apiKey, raw: `{"endpoint":${JSON.stringify(key)},"amount":100000,"amount":1}` }), {
        db: async () => t.db,
      }),
    );
    expect(errorCode(dup)).toBe("duplicate_field");
    const settle = await read(
      await handleResolve(
        apiRequest("/api/v1/reservations/00000000-0000-4000-8000-000000000000/settle", { key: apiKey, raw: `{"actual":1,"actual":2}` }),
        "00000000-0000-4000-8000-000000000000",
        "settle",
        { db: async () => t.db },
      ),
    );
    expect(settle.status).toBe(400);
    expect(await snapshot(t.db)).toBe(before);
  });

  const urlCases: [string, string][] = [
    ["/endpoints/%00", ""],
    ["/endpoints/%E0%A4%A", ""],
    ["/api/v1/endpoints/%E0%A4%A", ""],
    ["/api/v1/endpoints/a%1Fb", ""],
    ...["caller", "destination", "actor", "endpoint", "action", "gate", "from", "to", "before", "after", "cursor"].flatMap((p): [string, string][] => [
      ["/refusals", `?${p}=%00`],
      ["/refusals/export", `?${p}=%00`],
      ["/audit", `?${p}=%00`],
      ["/refusals", `?${p}=%E0%A4%A`],
      ["/audit", `?${p}=%1b%5B31m`],
    ]),
    ["/refusals", "?%00=1"],
    ["/api/v1/endpoints/x", "?caller=%00"],
  ];

  it(`refuses ${urlCases.length} broken paths and query strings before any page parses them`, () => {
    for (const [path, search] of urlCases) expect(checkUrl(path, search), `${path}${search}`).not.toBeNull();
    expect(checkUrl("/refusals", "?caller=acct_1&destination=a%40b.com&from=2026-01-01")).toBeNull();
    expect(checkUrl("/endpoints/email.subscribe", "")).toBeNull();
  });

  it("refuses impossible cursor times and CSV filters with control characters", async () => {
    for (const cursor of ["2026-13-45T99:99:99.000000Z_1", "2026-02-30T00:00:00.000000Z_1", "2026-01-01T24:00:00.000000Z_1"]) {
      expect(RefusalPosition.safeParse({ before: cursor }).success, cursor).toBe(false);
      expect(RefusalPosition.safeParse({ after: cursor }).success, cursor).toBe(false);
      expect(AuditFilters.safeParse({ cursor }).success, cursor).toBe(false);
    }
    expect(RefusalPosition.safeParse({ before: "2026-01-01T23:59:59.123456Z_1" }).success).toBe(true);
    expect(AuditFilters.safeParse({ cursor: "2026-01-01T23:59:59.123456Z_1" }).success).toBe(true);
    const before = await snapshot(t.db);
    for (const field of ["caller", "destination", "endpoint", "gate", "from", "to"]) {
      const response = await exportRefusalsRequest(
        { session: async () => admin, db: async () => t.db },
        new Request("http://127.0.0.1:3000/refusals/export", {
          method: "POST",
          headers: { host: "127.0.0.1:3000", "sec-fetch-site": "same-origin" },
          body: new URLSearchParams({ [field]: `a${NUL}` }),
        }),
      );
      expect(response.status, field).toBe(400);
    }
    expect(await snapshot(t.db)).toBe(before);
  });
});
