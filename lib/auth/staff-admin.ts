import { and, asc, eq, isNull, ne, sql } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import type { Db } from "@/db/client";
import { staff, type Staff } from "@/db/schema/staff";
import { staffGrants } from "@/db/schema/staff-lineage";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { generatePassword, hashPassword, PRODUCTION_BCRYPT_COST } from "./password";
import { hasRole, type Role } from "./roles";
import { StaffAdminError } from "./staff-errors";
import { normalizeEmail } from "./verify";

/** A staff row without its password hash: what lists and results expose. */
export type StaffSummary = Omit<Staff, "passwordHash">;

const summaryColumns = {
  id: staff.id,
  email: staff.email,
  name: staff.name,
  role: staff.role,
  disabledAt: staff.disabledAt,
  sessionVersion: staff.sessionVersion,
  createdAt: staff.createdAt,
  updatedAt: staff.updatedAt,
};

export async function listStaff(db: Db): Promise<StaffSummary[]> {
  return db.select(summaryColumns).from(staff).orderBy(asc(staff.email));
}

export async function addStaff(
  db: Db,
  params: { email: string; role: Role; name?: string; password?: string; actor: AuditActor; bcryptCost?: number },
): Promise<{ staff: StaffSummary; generatedPassword: string | null }> {
  const email = normalizeEmail(params.email);
  const generatedPassword = params.password === undefined ? generatePassword() : null;
  // Hashing is slow on purpose; do it before the transaction so no row lock waits on it.
  const passwordHash = await hashPassword(params.password ?? generatedPassword ?? "", params.bcryptCost ?? PRODUCTION_BCRYPT_COST);
  const created = await db.transaction(async (tx) => {
    const [row] = await tx
      .insert(staff)
      .values({ email, name: params.name ?? "", role: params.role, passwordHash })
      .onConflictDoNothing({ target: staff.email })
      .returning(summaryColumns);
    if (!row) throw new StaffAdminError("exists", `staff member '${email}' already exists`);
    await recordStaffEvent(tx, { actor: params.actor, action: "staff.add", email, details: { role: params.role } });
    await recordGrant(tx, { actor: params.actor, member: row, kind: "create", role: params.role });
    return row;
  });
  return { staff: created, generatedPassword };
}

/** Locks the member's row for the rest of the transaction, or says plainly that they do not exist. */
async function lockMember(tx: Db, email: string): Promise<Staff> {
  const [row] = await tx.select().from(staff).where(eq(staff.email, email)).for("update").limit(1);
  if (!row) throw new StaffAdminError("not_found", `no staff member with email '${email}'`);
  return row;
}

/**
 * For changes that can remove an admin (demotion, disable): locks every active admin row in id
 * order, then the member. All such changes take their locks in this one order, so two admins
 * demoting each other at once queue instead of deadlocking, and the second sees the first's result.
 */
async function lockAdminsThenMember(tx: Db, email: string): Promise<Staff> {
  await tx
    .select({ id: staff.id })
    .from(staff)
    .where(and(eq(staff.role, "admin"), isNull(staff.disabledAt)))
    .orderBy(asc(staff.id))
    .for("update");
  return lockMember(tx, email);
}

/** Refuses a change that would leave nobody able to administer staff. Call after lockAdminsThenMember. */
async function keepOneActiveAdmin(tx: Db, member: Staff, verb: string): Promise<void> {
  if (member.role !== "admin" || member.disabledAt !== null) return;
  const others = await tx
    .select({ id: staff.id })
    .from(staff)
    .where(and(eq(staff.role, "admin"), isNull(staff.disabledAt), ne(staff.id, member.id)))
    .limit(1);
  if (others.length === 0) {
    throw new StaffAdminError("last_admin", `cannot ${verb} '${member.email}': they are the last active admin`);
  }
}

const bumpVersion = sql`${staff.sessionVersion} + 1`;

export async function changeStaffRole(db: Db, params: { email: string; role: Role; actor: AuditActor }): Promise<StaffSummary> {
  const email = normalizeEmail(params.email);
  return db.transaction(async (tx) => {
    const member = await lockAdminsThenMember(tx, email);
    if (member.role === params.role) return summarize(member);
    const demotion = !hasRole(params.role, member.role);
    if (demotion) await keepOneActiveAdmin(tx, member, "demote");
    else await recordGrant(tx, { actor: params.actor, member, kind: "promote", role: params.role });
    return saveMember(
      tx,
      member,
      // A demotion ends every open session; a promotion shows on the next request anyway.
      { role: params.role, updatedAt: new Date(), ...(demotion ? { sessionVersion: bumpVersion } : {}) },
      { actor: params.actor, action: "staff.role", email, details: { from: member.role, to: params.role } },
    );
  });
}

export async function disableStaff(db: Db, params: { email: string; actor: AuditActor }): Promise<StaffSummary> {
  const email = normalizeEmail(params.email);
  return db.transaction(async (tx) => {
    const member = await lockAdminsThenMember(tx, email);
    if (member.disabledAt !== null) return summarize(member);
    await keepOneActiveAdmin(tx, member, "disable");
    const now = new Date();
    return saveMember(tx, member, { disabledAt: now, updatedAt: now, sessionVersion: bumpVersion }, { actor: params.actor, action: "staff.disable", email });
  });
}

export async function enableStaff(db: Db, params: { email: string; actor: AuditActor }): Promise<StaffSummary> {
  const email = normalizeEmail(params.email);
  return db.transaction(async (tx) => {
    const member = await lockMember(tx, email);
    if (member.disabledAt === null) return summarize(member);
    // The session version stays bumped from the disable, so sessions from before it stay dead.
    return saveMember(tx, member, { disabledAt: null, updatedAt: new Date() }, { actor: params.actor, action: "staff.enable", email });
  });
}

export async function setStaffPassword(
  db: Db,
  params: { email: string; password?: string; actor: AuditActor; bcryptCost?: number },
): Promise<{ staff: StaffSummary; generatedPassword: string | null }> {
  const email = normalizeEmail(params.email);
  const generatedPassword = params.password === undefined ? generatePassword() : null;
  const passwordHash = await hashPassword(params.password ?? generatedPassword ?? "", params.bcryptCost ?? PRODUCTION_BCRYPT_COST);
  const updated = await db.transaction(async (tx) => {
    const member = await lockMember(tx, email);
    await recordGrant(tx, { actor: params.actor, member, kind: "password", role: null });
    // The password itself never goes into the audit log, generated or not.
    return saveMember(
      tx,
      member,
      { passwordHash, updatedAt: new Date(), sessionVersion: bumpVersion },
      { actor: params.actor, action: "staff.password", email, details: { generated: generatedPassword !== null } },
    );
  });
  return { staff: updated, generatedPassword };
}

/**
 * Who gave whom control of an account, in the change's transaction: the independence rule of
 * change control (ceilings.staff_independent) walks these rows. A staff member acting is the
 * parent; the CLI or setup (no staff member acting) records no parent. Setting one's own password
 * gives nobody new control and is not recorded; a demotion gives none either.
 */
async function recordGrant(
  tx: Db,
  p: { actor: AuditActor; member: { id: number }; kind: "create" | "promote" | "password"; role: Role | null },
): Promise<void> {
  const named = auditActorFields(p.actor).actor;
  let grantedById: number | null = null;
  if (p.actor.type === "staff") {
    const [by] = await tx
      .select({ id: staff.id })
      .from(staff)
      .where(sql`lower(${staff.email}) = lower(${p.actor.email})`)
      .limit(1);
    grantedById = by?.id ?? null;
  }
  if (grantedById === p.member.id) {
    if (p.kind === "password") return;
    grantedById = null;
  }
  await tx.insert(staffGrants).values({ staffId: p.member.id, grantedById, grantedBy: named, kind: p.kind, role: p.role });
}

type StaffEvent = { actor: AuditActor; action: string; email: string; details?: Record<string, unknown> };

/** Writes a change to a locked member with its audit event; returns the member as lists show it. */
async function saveMember(tx: Db, member: Staff, change: PgUpdateSetSource<typeof staff>, event: StaffEvent): Promise<StaffSummary> {
  const [row] = await tx.update(staff).set(change).where(eq(staff.id, member.id)).returning(summaryColumns);
  await recordStaffEvent(tx, event);
  return required(row);
}

/** A staff.* event, named by the member's e-mail address. */
function recordStaffEvent(tx: Db, { actor, action, email, details }: StaffEvent): Promise<void> {
  return recordAudit(tx, { ...auditActorFields(actor), action, target: email, ...(details === undefined ? {} : { details }) });
}

function summarize(row: Staff): StaffSummary {
  const { passwordHash: _hash, ...summary } = row;
  return summary;
}

function required(row: StaffSummary | undefined): StaffSummary {
  if (!row) throw new Error("staff row vanished inside its own locked transaction");
  return row;
}
