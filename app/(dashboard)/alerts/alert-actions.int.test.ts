import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Role } from "@/lib/auth/roles";
import { alertDestinations, alerts, auditEvents } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { fireAlert } from "@/lib/alerts";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { acknowledgeAlertsCore, createDestinationCore, deleteDestinationCore, setDestinationEnabledCore } from "./alert-action-core";
import { form } from "@/app/_lib/test-form";

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

describe.skipIf(skipWithoutDatabase())("alert server actions check the role themselves", () => {
  const t = useTestDatabase("alert_actions", { max: 3 });

  const deps = (who: Role | null, revalidated: string[] = []): ActionDeps => ({
    session: async () => (who === null ? null : { id: 7, email: `${who}@t`, role: who }),
    db: async () => t.db,
    revalidate: (path) => revalidated.push(path),
  });

  let n = 0;
  async function newAlert(): Promise<number> {
    n += 1;
    await fireAlert(t.db, { kind: "kill", dedupeKey: `kill:test:${n}`, message: `test ${n}` });
    const [row] = await t.db
      .select()
      .from(alerts)
      .where(eq(alerts.dedupeKey, `kill:test:${n}`));
    if (!row) throw new Error("no alert");
    return row.id;
  }

  for (const who of [null, "viewer", "operator", "admin"] as const) {
    const allowed = who !== null && rank[who] >= rank.operator;
    it(`acknowledge as ${who ?? "no session"} is ${allowed ? "allowed and audited" : "refused, changing nothing"}`, async () => {
      const id = await newAlert();
      const revalidated: string[] = [];
      const result = await acknowledgeAlertsCore(deps(who, revalidated), form({ alertId: id }));
      const [row] = await t.db.select().from(alerts).where(eq(alerts.id, id));
      const audit = await t.db
        .select()
        .from(auditEvents)
        .where(eq(auditEvents.target, `alert:${id}`));
      if (allowed) {
        expect(result).toEqual({ status: "ok", message: "Acknowledged 1 alert(s)." });
        expect(row?.acknowledgedBy).toBe(`${who}@t`);
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({ action: "alert.ack", actor: `${who}@t`, actorType: "staff" });
        expect(revalidated).toEqual(["/"]);
      } else {
        expect(result).toEqual({ status: "error", error: who === null ? "Sign in required" : `Your role (${who}) cannot do this` });
        expect(row?.acknowledgedAt).toBeNull();
        expect(audit).toHaveLength(0);
        expect(revalidated).toEqual([]);
      }
    });
  }

  it("acknowledging twice keeps the first acknowledgement and audits once", async () => {
    const id = await newAlert();
    await acknowledgeAlertsCore(deps("operator"), form({ alertId: id }));
    expect(await acknowledgeAlertsCore(deps("admin"), form({ alertId: [id] }))).toEqual({ status: "ok", message: "Already acknowledged." });
    const [row] = await t.db.select().from(alerts).where(eq(alerts.id, id));
    expect(row?.acknowledgedBy).toBe("operator@t");
    expect(
      await t.db
        .select()
        .from(auditEvents)
        .where(eq(auditEvents.target, `alert:${id}`)),
    ).toHaveLength(1);
  });

  it("acknowledges several at once, and refuses unknown or malformed ids clearly", async () => {
    const a = await newAlert();
    const b = await newAlert();
    expect(await acknowledgeAlertsCore(deps("operator"), form({ alertId: [a, b] }))).toEqual({ status: "ok", message: "Acknowledged 2 alert(s)." });
    expect(await acknowledgeAlertsCore(deps("operator"), form({ alertId: 999_999 }))).toEqual({
      status: "error",
      error: "no alert with id 999999",
      code: "not_found",
    });
    expect(await acknowledgeAlertsCore(deps("operator"), form({ alertId: "x" }))).toMatchObject({ status: "error" });
    expect(await acknowledgeAlertsCore(deps("operator"), form({}))).toEqual({
      status: "error",
      error: "choose at least one alert to acknowledge",
      code: "invalid_input",
    });
  });

  for (const who of [null, "viewer", "operator", "admin"] as const) {
    const allowed = who === "admin";
    it(`destinations as ${who ?? "no session"}: ${allowed ? "create, disable, delete, each audited" : "refused"}`, async () => {
      const name = `hook ${who ?? "anon"} ${Date.now()}`;
      const created = await createDestinationCore(deps(who), form({ name, kind: "webhook", target: "https://example.com/hook" }));
      const rows = await t.db.select().from(alertDestinations).where(eq(alertDestinations.name, name));
      if (!allowed) {
        expect(created).toMatchObject({ status: "error" });
        expect(rows).toHaveLength(0);
        // Even against a destination that exists, nothing changes.
        const [other] = await t.db
          .insert(alertDestinations)
          .values({ name: `${name} x`, kind: "slack", target: "https://example.com/s", createdBy: "t" })
          .returning();
        expect(await setDestinationEnabledCore(deps(who), form({ id: other?.id ?? 0, enabled: "false" }))).toMatchObject({ status: "error" });
        expect(await deleteDestinationCore(deps(who), form({ id: other?.id ?? 0 }))).toMatchObject({ status: "error" });
        const [still] = await t.db
          .select()
          .from(alertDestinations)
          .where(eq(alertDestinations.id, other?.id ?? 0));
        expect(still?.enabled).toBe(true);
        return;
      }
      expect(created).toMatchObject({ status: "ok" });
      const [row] = rows;
      if (!row) throw new Error("not created");
      // A generic webhook always gets a secret to sign with.
      expect(row.signingSecret).toMatch(/^[0-9a-f]{64}$/);
      expect(await setDestinationEnabledCore(deps(who), form({ id: row.id, enabled: "false" }))).toMatchObject({ status: "ok" });
      expect(await deleteDestinationCore(deps(who), form({ id: row.id }))).toMatchObject({ status: "ok" });
      const audit = await t.db
        .select()
        .from(auditEvents)
        .where(eq(auditEvents.target, `alert_destination:${row.id}`));
      expect(audit.map((a) => a.action)).toEqual(["alert_destination.create", "alert_destination.disable", "alert_destination.delete"]);
      expect(JSON.stringify(audit)).not.toContain(row.signingSecret ?? "never");
    });
  }

  it("refuses a destination URL that is not http(s), with a clear message", async () => {
    const result = await createDestinationCore(deps("admin"), form({ name: "x", kind: "slack", target: "file:///etc/passwd" }));
    expect(result).toEqual({ status: "error", error: "the URL must start with http:// or https://", code: "invalid_input" });
  });

  it("adds an e-mail destination from the form's fields, storing the password reference and never a password", async () => {
    const fields = {
      name: "inbox",
      kind: "email",
      target: "oncall@example.com",
      smtpHost: "smtp.example.com",
      smtpPort: "587",
      smtpTls: "starttls",
      smtpUsername: "alerts",
      smtpPasswordRef: "env:CEILINGS_SECRET_SMTP",
      emailFrom: "Ceilings <alerts@example.com>",
    };
    expect(await createDestinationCore(deps("admin"), form(fields))).toMatchObject({ status: "ok" });
    const [row] = await t.db.select().from(alertDestinations).where(eq(alertDestinations.name, "inbox"));
    expect(row).toMatchObject({ kind: "email", smtpHost: "smtp.example.com", smtpPort: 587, smtpTls: "starttls", smtpPasswordRef: "env:CEILINGS_SECRET_SMTP" });
    const refused = await createDestinationCore(deps("admin"), form({ ...fields, name: "leak", smtpPasswordRef: "env:NEXTAUTH_SECRET" }));
    expect(refused).toMatchObject({ status: "error", error: expect.stringContaining("CEILINGS_SECRET_") });
  });
});
