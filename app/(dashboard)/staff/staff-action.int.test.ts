import { asc } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { auditEvents } from "@/db/schema/audit-events";
import { staff } from "@/db/schema/staff";
import { addStaff, type SessionStaff } from "@/lib/auth";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { addStaffCore, changeRoleCore, setDisabledCore } from "./staff-action-core";
import { form } from "@/app/_lib/test-form";

const PASSWORD = "correct horse battery";

describe.skipIf(skipWithoutDatabase())("staff server actions", () => {
  const t = useTestDatabase("staff_actions");
  let viewer: SessionStaff;
  let operator: SessionStaff;
  let admin: SessionStaff;
  let revalidated: string[];

  // Only the session lookup is chosen by the test; the guard, parsing and database are the real ones.
  const deps = (who: SessionStaff | null): ActionDeps => ({
    session: async () => who,
    db: async () => t.db,
    revalidate: (path) => revalidated.push(path),
    bcryptCost: 4,
  });
  const snapshot = async () => ({
    staff: await t.db.select().from(staff).orderBy(asc(staff.id)),
    audit: await t.db.select().from(auditEvents).orderBy(asc(auditEvents.id)),
  });

  beforeAll(async () => {
    const actor = { type: "cli", name: "test" } as const;
    const add = async (email: string, role: SessionStaff["role"]) => {
      const { staff: s } = await addStaff(t.db, { email, role, password: PASSWORD, actor, bcryptCost: 4 });
      return { id: s.id, email: s.email, role: s.role };
    };
    admin = await add("admin@example.com", "admin");
    operator = await add("op@example.com", "operator");
    viewer = await add("viewer@example.com", "viewer");
  });

  it("refuses a viewer, an operator and a visitor on every staff action, and nothing changes", async () => {
    const before = await snapshot();
    revalidated = [];
    const calls = [
      (d: ActionDeps) => addStaffCore(d, form({ email: "new@example.com", role: "admin", password: PASSWORD })),
      (d: ActionDeps) => changeRoleCore(d, form({ email: "viewer@example.com", role: "admin" })),
      (d: ActionDeps) => changeRoleCore(d, form({ email: "admin@example.com", role: "viewer" })),
      (d: ActionDeps) => setDisabledCore(d, form({ email: "admin@example.com", disabled: "true" })),
    ];
    for (const call of calls) {
      expect(await call(deps(viewer))).toEqual({ status: "error", error: "Your role (viewer) cannot do this" });
      expect(await call(deps(operator))).toEqual({ status: "error", error: "Your role (operator) cannot do this" });
      expect(await call(deps(null))).toEqual({ status: "error", error: "Sign in required" });
    }
    expect(await snapshot()).toEqual(before);
    expect(revalidated).toEqual([]);
  });

  it("lets an admin add, change and disable staff, each with an audit row in their name", async () => {
    revalidated = [];
    const added = await addStaffCore(deps(admin), form({ email: "New@Example.com", role: "viewer", password: "" }));
    expect(added).toMatchObject({ status: "ok", secret: expect.stringMatching(/^[A-Za-z0-9_-]{20}$/) });
    expect(await changeRoleCore(deps(admin), form({ email: "new@example.com", role: "operator" }))).toMatchObject({ status: "ok" });
    expect(await setDisabledCore(deps(admin), form({ email: "new@example.com", disabled: "true" }))).toEqual({
      status: "ok",
      message: "new@example.com is disabled.",
    });
    const { audit } = await snapshot();
    expect(audit.filter((e) => e.target === "new@example.com").map((e) => [e.actorType, e.actor, e.action])).toEqual([
      ["staff", "admin@example.com", "staff.add"],
      ["staff", "admin@example.com", "staff.role"],
      ["staff", "admin@example.com", "staff.disable"],
    ]);
    expect(revalidated).toEqual(["/staff", "/staff", "/staff"]);
  });

  it("answers bad input and refused changes with clear messages", async () => {
    expect(await addStaffCore(deps(admin), form({ email: "nope", role: "admin" }))).toEqual({
      status: "error",
      error: "'nope' is not an email address",
      code: "invalid_input",
    });
    expect(await changeRoleCore(deps(admin), form({ email: "op@example.com", role: "root" }))).toEqual({
      status: "error",
      error: "role must be one of viewer, operator, admin, got 'root'",
      code: "invalid_input",
    });
    expect(await setDisabledCore(deps(admin), form({ email: "admin@example.com", disabled: "true" }))).toEqual({
      status: "error",
      error: "cannot disable 'admin@example.com': they are the last active admin",
      code: "last_admin",
    });
  });
});
