import { readFileSync } from "node:fs";
import path from "node:path";
import { inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { auditEvents, staff, staffGrants } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { addStaff, changeStaffRole, setStaffPassword } from "@/lib/auth/staff-admin";
import { lineageText, listStaffGrants } from "@/lib/auth/staff-lineage";
import { createEndpoint, first, readCeiling } from "@/lib/ceilings/test-fixtures";
import { acknowledgeBreakGlass, approveChange, breakGlass, rejectChange, requestChange } from "./index";
import { staffMember } from "./test-fixtures";

// Independence, not inequality: an approver or acknowledger is neither the requester nor anyone
// who controls, or is controlled by, the requester through any chain of staff grants (created,
// promoted, password set). First in the database itself, as the app role writing SQL; then through
// lib/changes and the staff verbs that record the grants.

let n = 0;

describe.skipIf(skipWithoutDatabase())("independence of the second person", () => {
  const t = useTestDatabase("changes_independence", { max: 8 });

  /** A staff row; with `by`, a grant from that member, as lib/auth/staff-admin.ts writes it. */
  async function member(role: "operator" | "admin", by?: number, kind: "create" | "promote" | "password" = "create"): Promise<number> {
    n += 1;
    const [row] = await t.db
      .insert(staff)
      .values({ email: `m${n}-${Date.now().toString(36)}@ind.local`, role, passwordHash: "x" })
      .returning({ id: staff.id });
    if (!row) throw new Error("no staff row");
    if (by !== undefined) await grant(row.id, by, kind);
    return row.id;
  }

  async function grant(staffId: number, by: number, kind: "create" | "promote" | "password" = "create"): Promise<void> {
    await t.db.insert(staffGrants).values({ staffId, grantedById: by, grantedBy: `staff #${by}`, kind, role: kind === "password" ? null : "admin" });
  }

  /** A pending (or, with breakGlass, applied) request row written as SQL: no lib in the way. */
  async function requestRow(requestedById: number, breakGlass = false): Promise<number> {
    const rows = resultRows<{ id: number }>(
      await t.db.execute(sql`
        insert into change_requests (kind, change, before, after, summary, reason, requested_by_id, requested_by, expires_at, state, break_glass)
        values ('ceiling.value', '{}', '{}', '{}', 'sql', 'sql', ${requestedById}, 'someone', now() + interval '1 day',
          ${breakGlass ? "applied" : "pending"}::change_request_state, ${breakGlass})
        returning id`),
    );
    return first(rows).id;
  }

  const decide = (id: number, by: number, state = "applied") =>
    t.db.execute(
      sql`update change_requests set state = ${state}::change_request_state, decided_by_id = ${by}, decided_by = 'x', decided_at = now() where id = ${id}`,
    );
  const acknowledge = (id: number, by: number) =>
    t.db.execute(sql`update change_requests set acknowledged_by_id = ${by}, acknowledged_by = 'x', acknowledged_at = now() where id = ${id}`);
  const refused = { cause: { constraint_name: "change_requests_independent", code: "23514" } };

  async function independent(a: number, b: number): Promise<boolean> {
    return first(resultRows<{ ok: boolean }>(await t.db.execute(sql`select ceilings.staff_independent(${a}::int, ${b}::int) as ok`))).ok;
  }

  it("in SQL: A creates operator Y, Y asks, A approves or rejects: refused by the database", async () => {
    const a = await member("admin");
    const y = await member("operator", a);
    const id = await requestRow(y);
    await expect(decide(id, a)).rejects.toMatchObject(refused);
    await expect(decide(id, a, "rejected")).rejects.toMatchObject(refused);
    // The same row decided by an admin nobody in the chain made: accepted.
    const b = await member("admin");
    await decide(id, b);
  });

  it("in SQL: A creates admin X, X creates admin Z, Z approves A's request: refused (a chain, either way round)", async () => {
    const a = await member("admin");
    const x = await member("admin", a);
    const z = await member("admin", x);
    await expect(decide(await requestRow(a), z)).rejects.toMatchObject(refused);
    // And Z asking, A (the top of Z's chain) approving.
    await expect(decide(await requestRow(z), a)).rejects.toMatchObject(refused);
    expect(await independent(a, z)).toBe(false);
    expect(await independent(z, a)).toBe(false);
    const path = first(resultRows<{ p: unknown }>(await t.db.execute(sql`select ceilings.staff_control_path(${a}::int, ${z}::int) as p`))).p;
    expect(path).toEqual([
      { by: a, kind: "create", of: x },
      { by: x, kind: "create", of: z },
    ]);
  });

  it("in SQL: A acknowledges a break glass made by X, whom A created: refused; an independent admin may", async () => {
    const a = await member("admin");
    const x = await member("admin", a);
    const id = await requestRow(x, true);
    await expect(acknowledge(id, a)).rejects.toMatchObject(refused);
    await expect(acknowledge(id, x)).rejects.toMatchObject(refused);
    await acknowledge(id, await member("admin"));
  });

  it("in SQL: a promotion and a password set make a chain too; a cancellation by the requester stays allowed", async () => {
    const a = await member("admin");
    const p = await member("admin", a, "promote");
    const q = await member("admin", p, "password");
    const id = await requestRow(a);
    await expect(decide(id, q)).rejects.toMatchObject(refused);
    await decide(id, a, "cancelled");
    expect(await t.db.execute(sql`select state from change_requests where id = ${id}`)).toMatchObject([{ state: "cancelled" }]);
    // A cancelled row turned into a decision by the requester is still refused.
    await expect(t.db.execute(sql`update change_requests set state = 'applied' where id = ${id}`)).rejects.toMatchObject({ cause: { code: "23514" } });
  });

  it("in SQL: a decided row is final (a rejection UPDATEd to applied, an expiry to applied: refused); a decision needs a decider unless it is a break glass", async () => {
    const a = await member("admin");
    const b = await member("admin");
    const rejected = await requestRow(a);
    await decide(rejected, b, "rejected");
    // b is independent of a, so the independence rule alone would let this pass: the decision is final.
    await expect(t.db.execute(sql`update change_requests set state = 'applied' where id = ${rejected}`)).rejects.toMatchObject({
      cause: { code: "23514", constraint_name: "change_requests_decided_final" },
    });
    const expired = await requestRow(a);
    await t.db.execute(sql`update change_requests set state = 'expired', decided_at = now() where id = ${expired}`);
    await expect(decide(expired, b)).rejects.toMatchObject({ cause: { code: "23514", constraint_name: "change_requests_decided_final" } });
    // Written already decided with nobody deciding: refused, applied or rejected alike.
    const row = (state: string, breakGlass: boolean, decidedBy: number | null = null) =>
      t.db.execute(sql`
        insert into change_requests (kind, change, before, after, summary, reason, requested_by_id, requested_by, expires_at, state, break_glass, decided_by_id)
        values ('ceiling.value', '{}', '{}', '{}', 'sql', 'sql', ${a}, 'someone', now() + interval '1 day', ${state}::change_request_state, ${breakGlass}, ${decidedBy})`);
    await expect(row("applied", false)).rejects.toMatchObject({ cause: { code: "23514", constraint_name: "change_requests_decided_by" } });
    await expect(row("rejected", false)).rejects.toMatchObject({ cause: { code: "23514", constraint_name: "change_requests_decided_by" } });
    // Written decided by someone not independent of the requester: refused on INSERT too.
    const x = await member("admin", a);
    await expect(row("applied", false, x)).rejects.toMatchObject(refused);
    // What the worker and the requester write without a second person stays valid.
    for (const state of ["pending", "expired", "stale"]) await row(state, false);
    await row("applied", true);
  });

  it("siblings made by the same admin ARE independent of each other (the rule as written); their maker is not", async () => {
    const a = await member("admin");
    const s1 = await member("admin", a);
    const s2 = await member("admin", a);
    expect(await independent(s1, s2)).toBe(true);
    await decide(await requestRow(s1), s2);
    expect(await independent(a, s1)).toBe(false);
  });

  it("a cycle of grants ends: both members of a cycle depend on each other, an outsider on neither", async () => {
    const p = await member("admin");
    const q = await member("admin", p);
    await grant(p, q, "password");
    const outsider = await member("admin");
    expect(await independent(p, q)).toBe(false);
    expect(await independent(q, p)).toBe(false);
    expect(await independent(p, outsider)).toBe(true);
    expect(await independent(p, p)).toBe(false);
    expect(first(resultRows<{ ok: boolean | null }>(await t.db.execute(sql`select ceilings.staff_independent(null, ${p}::int) as ok`))).ok).toBe(false);
  });

  it("staff_grants is append-only for the app role", async () => {
    const a = await member("admin");
    await member("admin", a);
    await expect(t.db.execute(sql`update staff_grants set granted_by_id = null where granted_by_id = ${a}`)).rejects.toMatchObject({
      cause: { code: "42501" },
    });
    await expect(t.db.execute(sql`delete from staff_grants where granted_by_id = ${a}`)).rejects.toMatchObject({ cause: { code: "42501" } });
    // The owner is bound by the trigger too.
    await expect(t.ownerDb.execute(sql`delete from staff_grants where granted_by_id = ${a}`)).rejects.toMatchObject({ cause: { code: "42501" } });
  });

  it("the staff verbs record the grants in their transaction: add (create), role up (promote), password (by someone else); the CLI is a root", async () => {
    const root = await addStaff(t.db, {
      email: `root${Date.now()}@ind.local`,
      role: "admin",
      password: "correct horse battery",
      actor: { type: "cli", name: "ops" },
      bcryptCost: 4,
    });
    const made = await addStaff(t.db, {
      email: `made${Date.now()}@ind.local`,
      role: "operator",
      password: "correct horse battery",
      actor: { type: "staff", email: root.staff.email },
      bcryptCost: 4,
    });
    await changeStaffRole(t.db, { email: made.staff.email, role: "admin", actor: { type: "staff", email: root.staff.email } });
    await changeStaffRole(t.db, { email: made.staff.email, role: "operator", actor: { type: "staff", email: root.staff.email } });
    await setStaffPassword(t.db, {
      email: root.staff.email,
      password: "another good password",
      actor: { type: "staff", email: made.staff.email },
      bcryptCost: 4,
    });
    await setStaffPassword(t.db, {
      email: made.staff.email,
      password: "my own new password",
      actor: { type: "staff", email: made.staff.email },
      bcryptCost: 4,
    });
    const grants = await t.db
      .select()
      .from(staffGrants)
      .where(sql`${staffGrants.staffId} in (${root.staff.id}, ${made.staff.id})`)
      .orderBy(staffGrants.id);
    expect(grants.map((g) => [g.staffId, g.grantedById, g.kind, g.role])).toEqual([
      [root.staff.id, null, "create", "admin"],
      [made.staff.id, root.staff.id, "create", "operator"],
      [made.staff.id, root.staff.id, "promote", "admin"],
      [root.staff.id, made.staff.id, "password", null],
    ]);
    expect(grants[0]?.grantedBy).toBe("ops");
    // As the Staff page lists them.
    const listed = await listStaffGrants(t.db);
    expect(lineageText(listed.get(made.staff.id))).toBe(`created by ${root.staff.email}; promoted by ${root.staff.email}`);
    expect(lineageText(listed.get(root.staff.id))).toBe(`created by ops (no parent); password set by ${made.staff.email}`);
  });

  it("through lib/changes: Z, made by X, made by A, may not approve, reject or acknowledge A's; the message names the chain", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const a = await staffMember(t.db, "admin");
    const x = await addStaff(t.db, {
      email: `x${Date.now()}@ind.local`,
      role: "admin",
      password: "correct horse battery",
      actor: { type: "staff", email: a.email },
      bcryptCost: 4,
    });
    const z = await addStaff(t.db, {
      email: `z${Date.now()}@ind.local`,
      role: "admin",
      password: "correct horse battery",
      actor: { type: "staff", email: x.staff.email },
      bcryptCost: 4,
    });
    const zAs = { staffId: z.staff.id, email: z.staff.email, role: "admin" as const, via: "cli" as const };
    const r = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 120 }, requester: a, reason: "need more" });
    await expect(approveChange(t.db, { id: r.id, approver: zAs })).rejects.toMatchObject({
      code: "own_request",
      message: expect.stringContaining(`${z.staff.email} was created by ${x.staff.email}, who was created by ${a.email}, who asked for #${r.id}`),
    });
    await expect(rejectChange(t.db, { id: r.id, approver: zAs, note: "no" })).rejects.toMatchObject({ code: "own_request" });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
    // An admin nobody in the chain made approves it.
    const other = await staffMember(t.db, "admin");
    expect((await approveChange(t.db, { id: r.id, approver: other })).applied).toBe(true);

    // The other way round: Z asks, A (who made Z's maker) may not approve.
    const r2 = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 130 }, requester: zAs, reason: "need more" });
    await expect(approveChange(t.db, { id: r2.id, approver: a })).rejects.toMatchObject({
      code: "own_request",
      message: expect.stringContaining(`who was created by ${a.email}, and asked for`),
    });

    // A break glass by Z is not A's to acknowledge, nor X's; a sibling of X's line is independent.
    const bg = await breakGlass(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: c.id, value: 140 },
      requester: zAs,
      reason: "incident: need headroom now",
    });
    await expect(acknowledgeBreakGlass(t.db, { id: bg.id, admin: a })).rejects.toMatchObject({ code: "own_request" });
    const sibling = await addStaff(t.db, {
      email: `s${Date.now()}@ind.local`,
      role: "admin",
      password: "correct horse battery",
      actor: { type: "staff", email: x.staff.email },
      bcryptCost: 4,
    });
    const sAs = { staffId: sibling.staff.id, email: sibling.staff.email, role: "admin" as const, via: "dashboard" as const };
    expect((await acknowledgeBreakGlass(t.db, { id: bg.id, admin: sAs })).acknowledgedById).toBe(sibling.staff.id);
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 140 });
  });
  it("the migration's backfill reads the audit trail: staff.add, staff.role upward, staff.password by another; actor email to id", async () => {
    // The INSERT of 0026's section, run again on audit rows written the way the staff verbs wrote them before the table existed.
    const migration = readFileSync(path.join(process.cwd(), "db/migrations/0026_change_control_independence.sql"), "utf8");
    const backfill = migration.split("--> statement-breakpoint").find((part) => part.includes("INSERT INTO staff_grants"));
    if (!backfill) throw new Error("no backfill in 0026");
    const stamp = Date.now().toString(36);
    const emails = { root: `bf-root-${stamp}@ind.local`, made: `bf-made-${stamp}@ind.local`, pushed: `bf-pushed-${stamp}@ind.local` };
    const ids: Record<string, number> = {};
    for (const [k, email] of Object.entries(emails)) {
      const [row] = await t.db.insert(staff).values({ email, role: "admin", passwordHash: "x" }).returning({ id: staff.id });
      ids[k] = row?.id ?? 0;
    }
    await t.db.insert(auditEvents).values([
      { actorType: "cli", actor: "ops", action: "staff.add", target: emails.root, details: { role: "admin" } },
      { actorType: "staff", actor: emails.root.toUpperCase(), action: "staff.add", target: emails.made, details: { role: "operator" } },
      { actorType: "staff", actor: emails.root, action: "staff.role", target: emails.made, details: { from: "operator", to: "admin" } },
      // A demotion and a password set by oneself give nobody control: not grants.
      { actorType: "staff", actor: emails.made, action: "staff.role", target: emails.pushed, details: { from: "admin", to: "viewer" } },
      { actorType: "staff", actor: emails.pushed, action: "staff.password", target: emails.pushed, details: { generated: false } },
      { actorType: "staff", actor: emails.made, action: "staff.password", target: emails.pushed, details: { generated: true } },
    ]);
    await t.ownerDb.execute(sql.raw(backfill));
    const mine = Object.values(ids);
    const grants = await t.db.select().from(staffGrants).where(inArray(staffGrants.staffId, mine)).orderBy(staffGrants.id);
    expect(grants.map((g) => [g.staffId, g.grantedById, g.kind, g.role])).toEqual([
      [ids.root, null, "create", "admin"],
      [ids.made, ids.root, "create", "operator"],
      [ids.made, ids.root, "promote", "admin"],
      [ids.pushed, ids.made, "password", null],
    ]);
    expect(await independent(ids.root ?? 0, ids.pushed ?? 0)).toBe(false);
  });
});
