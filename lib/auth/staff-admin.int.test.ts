import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { auditEvents } from "@/db/schema/audit-events";
import { staff } from "@/db/schema/staff";
import type { AuditActor } from "@/lib/audit/record";
import { verifyPassword } from "./password";
import { addStaff, changeStaffRole, disableStaff, enableStaff, setStaffPassword } from "./staff-admin";
import { StaffAdminError } from "./staff-errors";

const cli: AuditActor = { type: "cli", name: "ops-user" };
const ann: AuditActor = { type: "staff", email: "ann@example.com" };
const COST = 4;

describe.skipIf(skipWithoutDatabase())("staff administration on Postgres", () => {
  const t = useTestDatabase("auth_staff_admin");

  const row = async (email: string) => {
    const [r] = await t.db.select().from(staff).where(eq(staff.email, email));
    if (!r) throw new Error(`no row for ${email}`);
    return r;
  };
  const auditFor = (email: string) => t.db.select().from(auditEvents).where(eq(auditEvents.target, email)).orderBy(asc(auditEvents.id));

  it("writes an audit row for every change, naming who made it", async () => {
    const added = await addStaff(t.db, { email: "Ann@Example.com", role: "admin", password: "correct horse battery", actor: cli, bcryptCost: COST });
    expect(added.generatedPassword).toBeNull();
    const generated = await addStaff(t.db, { email: "dee@example.com", role: "viewer", actor: ann, bcryptCost: COST });
    expect(generated.generatedPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(await verifyPassword(generated.generatedPassword ?? "", (await row("dee@example.com")).passwordHash)).toBe(true);

    await changeStaffRole(t.db, { email: "dee@example.com", role: "operator", actor: ann });
    await disableStaff(t.db, { email: "dee@example.com", actor: ann });
    await enableStaff(t.db, { email: "dee@example.com", actor: cli });
    await setStaffPassword(t.db, { email: "dee@example.com", actor: cli, bcryptCost: COST });

    const events = (await auditFor("dee@example.com")).map((e) => ({ actorType: e.actorType, actor: e.actor, action: e.action, details: e.details }));
    expect(events).toEqual([
      { actorType: "staff", actor: "ann@example.com", action: "staff.add", details: { role: "viewer" } },
      { actorType: "staff", actor: "ann@example.com", action: "staff.role", details: { from: "viewer", to: "operator" } },
      { actorType: "staff", actor: "ann@example.com", action: "staff.disable", details: null },
      { actorType: "cli", actor: "ops-user", action: "staff.enable", details: null },
      { actorType: "cli", actor: "ops-user", action: "staff.password", details: { generated: true } },
    ]);
    expect(JSON.stringify(await auditFor("dee@example.com"))).not.toContain("$2");
    expect((await auditFor("ann@example.com"))[0]).toMatchObject({ actorType: "cli", actor: "ops-user", action: "staff.add" });
  });

  it("ends sessions on demotion, disable and password change, but not on promotion or enable", async () => {
    await addStaff(t.db, { email: "eve@example.com", role: "viewer", password: "correct horse battery", actor: cli, bcryptCost: COST });
    const versions: number[] = [(await row("eve@example.com")).sessionVersion];
    const step = async (change: () => Promise<unknown>) => {
      await change();
      versions.push((await row("eve@example.com")).sessionVersion);
    };
    await step(() => changeStaffRole(t.db, { email: "eve@example.com", role: "admin", actor: cli }));
    await step(() => changeStaffRole(t.db, { email: "eve@example.com", role: "operator", actor: cli }));
    await step(() => disableStaff(t.db, { email: "eve@example.com", actor: cli }));
    await step(() => enableStaff(t.db, { email: "eve@example.com", actor: cli }));
    await step(() => setStaffPassword(t.db, { email: "eve@example.com", password: "another good password", actor: cli, bcryptCost: COST }));
    expect(versions).toEqual([1, 1, 2, 3, 3, 4]);
  });

  it("refuses with a typed error: unknown member, duplicate email", async () => {
    await expect(disableStaff(t.db, { email: "ghost@example.com", actor: cli })).rejects.toThrow(
      new StaffAdminError("not_found", "no staff member with email 'ghost@example.com'"),
    );
    await expect(addStaff(t.db, { email: "ANN@example.com", role: "viewer", actor: cli, bcryptCost: COST })).rejects.toThrow(
      "staff member 'ann@example.com' already exists",
    );
  });

  it("never leaves the team without an active admin, even when two admins demote each other at once", async () => {
    const only = await createTestDatabase("auth_last_admin");
    try {
      await addStaff(only.db, { email: "solo@example.com", role: "admin", password: "correct horse battery", actor: cli, bcryptCost: COST });
      await expect(disableStaff(only.db, { email: "solo@example.com", actor: cli })).rejects.toThrow("last active admin");
      await expect(changeStaffRole(only.db, { email: "solo@example.com", role: "viewer", actor: cli })).rejects.toThrow("last active admin");

      await addStaff(only.db, { email: "duo@example.com", role: "admin", password: "correct horse battery", actor: cli, bcryptCost: COST });
      const outcomes = await Promise.allSettled([
        changeStaffRole(only.db, { email: "solo@example.com", role: "viewer", actor: cli }),
        changeStaffRole(only.db, { email: "duo@example.com", role: "viewer", actor: cli }),
      ]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      // The loser is told why, not killed as a deadlock victim.
      const refused = outcomes.find((o) => o.status === "rejected");
      expect(refused?.status === "rejected" ? refused.reason : null).toMatchObject({ code: "last_admin" });
      const admins = await only.db.select().from(staff).where(eq(staff.role, "admin"));
      expect(admins).toHaveLength(1);
    } finally {
      await only.drop();
    }
  });
});
