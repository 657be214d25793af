import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { auditEvents } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { insertRefusals } from "@/lib/refusals/test-fixtures";
import type { SessionStaff } from "@/app/_lib/session";
import { exportRefusalsCore, exportRefusalsRequest } from "./export-core";

describe.skipIf(skipWithoutDatabase())("refusal export checks the role itself and masks for non-admins", () => {
  const t = useTestDatabase("refusal_export");
  let key = "";
  beforeAll(async () => {
    const ep = await createEndpoint(t.db, { key: "sms.reset" });
    key = ep.key;
    await insertRefusals(t.db, [
      { endpointId: ep.endpointId, endpointKey: ep.key, at: new Date(), gate: "cooldown", caller: "acct_7h3k9q89", destination: "+14155554567", count: 3 },
      {
        endpointId: ep.endpointId,
        endpointKey: ep.key,
        at: new Date(Date.now() - 1000),
        gate: "ceiling",
        caller: "john.doe@gmail.com",
        destination: "+14155550000",
      },
    ]);
  });

  const as = (role: Role | null) => ({
    session: async (): Promise<SessionStaff | null> => (role ? { id: 1, email: `${role}@test.local`, role } : null),
    db: async () => t.db,
    now: () => new Date("2025-06-10T12:00:00Z"),
  });

  it("refuses a visitor without a session", async () => {
    const response = await exportRefusalsCore(as(null), {});
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: { code: "unauthenticated", message: "Sign in required" } });
  });

  it("rejects invalid filters with 400 and says which", async () => {
    const response = await exportRefusalsCore(as("viewer"), { gate: "nonsense" });
    expect(response.status).toBe(400);
    expect(await response.clone().json()).toMatchObject({ error: { code: "invalid_input", message: expect.stringContaining("gate") } });
    expect(JSON.stringify(await response.json())).toContain("gate");
  });

  for (const role of ["viewer", "operator"] as const) {
    it(`gives a ${role} the rows with callers and destinations masked`, async () => {
      const response = await exportRefusalsCore(as(role), { endpoint: key });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-disposition")).toBe('attachment; filename="refusals-2025-06-10-120000.csv"');
      expect(response.headers.get("content-type")).toContain("text/csv");
      const body = await response.text();
      expect(body).toContain("acct_***89,+1******4567");
      expect(body).toContain("j***@g***.com,+1******0000");
      expect(body).not.toContain("acct_7h3k9q89");
      expect(body).not.toContain("4155554567");
      expect(body).not.toContain("john.doe");
    });
  }

  it("gives an admin the rows in full, filtered, and records every export in the audit log", async () => {
    const response = await exportRefusalsCore(as("admin"), { endpoint: key, gate: "cooldown" });
    const lines = (await response.text()).trimEnd().split("\r\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("sms.reset,cooldown,3,acct_7h3k9q89,+14155554567");
    const audits = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "refusals.export")).orderBy(auditEvents.id);
    expect(audits.map((a) => [a.actor, a.details])).toEqual([
      ["viewer@test.local", { masked: true, filters: { endpoint: key } }],
      ["operator@test.local", { masked: true, filters: { endpoint: key } }],
      ["admin@test.local", { masked: false, filters: { endpoint: key, gate: "cooldown" } }],
    ]);
  });
});

describe.skipIf(skipWithoutDatabase())("refusal export changes nothing on a GET or a cross-origin POST", () => {
  const t = useTestDatabase("refusal_export_csrf");
  const deps = {
    session: async (): Promise<SessionStaff | null> => ({ id: 1, email: "admin@test.local", role: "admin" }),
    db: async () => t.db,
  };
  const url = "http://127.0.0.1:3000/refusals/export";
  const exports = async () => (await t.db.select().from(auditEvents).where(eq(auditEvents.action, "refusals.export"))).length;
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);

  it("answers a GET, even a signed-in one with filters, with 405 and writes no audit row", async () => {
    const response = await exportRefusalsRequest(deps, new Request(`${url}?gate=cooldown`, { headers: { host: "127.0.0.1:3000" } }));
    expect(response.status).toBe(405);
    expect(response.headers.get("content-type")).not.toContain("text/csv");
    expect(await exports()).toBe(0);
  });

  it("refuses a POST another origin started, and writes nothing", async () => {
    const cases: Record<string, string>[] = [
      { host: "127.0.0.1:3000", origin: "http://127.0.0.1:4000", "sec-fetch-site": "same-site" },
      { host: "127.0.0.1:3000", origin: "http://evil.example" },
      { host: "127.0.0.1:3000" },
    ];
    for (const headers of cases) {
      const response = await exportRefusalsRequest(deps, new Request(url, { method: "POST", headers, body: form({ gate: "cooldown" }) }));
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ error: { code: "cross_origin" } });
    }
    expect(await exports()).toBe(0);
  });

  it("exports and audits a POST from its own page", async () => {
    const response = await exportRefusalsRequest(
      deps,
      new Request(url, {
        method: "POST",
        headers: { host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000", "sec-fetch-site": "same-origin" },
        body: form({ gate: "cooldown" }),
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/csv");
    await response.text();
    expect(await exports()).toBe(1);
  });
});
