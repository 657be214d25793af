import { InputError } from "@/lib/errors";
import { eq, inArray, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { staff } from "@/db/schema";
import { recordAudit, type AuditActor } from "@/lib/audit/record";
import { hasRole, type Role } from "@/lib/auth/roles";
import { ChangeControlError } from "@/lib/control/errors";
import type { Requester } from "./types";

// Who may do what is checked here against the staff row, not the role a caller passes: a session
// or the CLI's personal token (CEILINGS_STAFF_TOKEN) names a person, and that person's row in force (enabled, same email, its role)
// decides. The second person is the same person whatever session or tool they use: by staff id.

export type Verified = Requester & { role: Role };

const WHAT: Record<Role, string> = { viewer: "a viewer", operator: "an operator", admin: "an admin" };

export async function verifyStaff(db: Db, who: Requester, need: Role, doing: string): Promise<Verified> {
  const [row] = await db.select({ email: staff.email, role: staff.role, disabledAt: staff.disabledAt }).from(staff).where(eq(staff.id, who.staffId));
  if (!row || row.disabledAt !== null || row.email.toLowerCase() !== who.email.toLowerCase()) {
    throw new ChangeControlError("forbidden", `${who.email} is not an enabled staff member: only staff may ${doing}`);
  }
  if (!hasRole(row.role, need))
    throw new ChangeControlError(
      "forbidden",
      `${row.email} is ${WHAT[row.role]}: only ${need === "admin" ? "an admin" : "an operator or an admin"} may ${doing}`,
    );
  return { ...who, email: row.email, role: row.role };
}

export function staffActor(who: Pick<Requester, "email">): AuditActor {
  return { type: "staff", email: who.email };
}

/**
 * A refused attempt (someone else's role, their own request, an expired or unknown one, a bad
 * reason) changes nothing but is logged, as the other *.rejected events are: change.refused.
 */
export async function recordRefusal(
  db: Db,
  who: Pick<Requester, "email" | "via">,
  attempt: string,
  error: ChangeControlError | InputError,
  details: Record<string, unknown> = {},
): Promise<void> {
  await recordAudit(db, {
    actorType: "staff",
    actor: who.email,
    action: "change.refused",
    target: typeof details.requestId === "number" ? `change_request:${details.requestId}` : null,
    reason: null,
    details: { attempt, code: error.code, error: error.message, via: who.via, ...details },
  });
}

/** Runs `work`; a ChangeControlError it throws (but stale, which is an outcome) is logged first. */
export async function refusing<T>(
  db: Db,
  who: Pick<Requester, "email" | "via">,
  attempt: string,
  details: Record<string, unknown>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error instanceof ChangeControlError && error.code !== "stale") || error instanceof InputError) {
      // The log is best effort: an actor the audit table refuses must not hide the real refusal.
      await recordRefusal(db, who, attempt, error, details).catch(() => undefined);
    }
    throw error;
  }
}

type Step = { by: number; kind: "create" | "promote" | "password"; of: number };

const DID: Record<Step["kind"], string> = { create: "created", promote: "promoted", password: "given a password" };

/** "z@x was created by x@x, who was promoted by a@x": a chain of grants read bottom up. */
function describeChain(steps: Step[], emails: Map<number, string>): string {
  const name = (id: number) => emails.get(id) ?? `staff #${id}`;
  const parts: string[] = [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i];
    if (!step) continue;
    const said = `${DID[step.kind]} by ${name(step.by)}`;
    parts.push(i === steps.length - 1 ? `${name(step.of)} was ${said}` : `who was ${said}`);
  }
  return parts.join(", ");
}

/** ceilings.staff_independent(a, b): the one rule, asked of the database (pages use it to hide what would be refused). */
export async function isIndependent(db: Db, a: number, b: number): Promise<boolean> {
  const [rule] = resultRows<{ independent: boolean }>(await db.execute(sql`select ceilings.staff_independent(${a}::int, ${b}::int) as independent`));
  return rule?.independent === true;
}

/**
 * The second person must be independent of the requester: not the same person, and neither
 * controls the other through any chain of staff grants (created, promoted, or set the password of;
 * directly or through others). The rule is ceilings.staff_independent, called here and by the
 * change_requests_independent trigger, so the dashboard, the CLI and SQL all meet the same one;
 * this answers first with the chain in words.
 */
export async function requireIndependent(
  db: Db,
  request: { id: number; requestedById: number; requestedBy: string },
  who: Verified,
  doing: string,
): Promise<void> {
  if (await isIndependent(db, request.requestedById, who.staffId)) return;
  if (request.requestedById === who.staffId) {
    throw new ChangeControlError("own_request", `${who.email} asked for #${request.id}: the requester never ${doing}s their own request; another admin must`);
  }
  const [paths] = resultRows<{ down: Step[] | null; up: Step[] | null }>(
    await db.execute(
      sql`select ceilings.staff_control_path(${request.requestedById}::int, ${who.staffId}::int) as down, ceilings.staff_control_path(${who.staffId}::int, ${request.requestedById}::int) as up`,
    ),
  );
  const steps = paths?.down ?? paths?.up ?? [];
  const ids = [...new Set(steps.flatMap((s) => [s.by, s.of]))];
  const rows = ids.length > 0 ? await db.select({ id: staff.id, email: staff.email }).from(staff).where(inArray(staff.id, ids)) : [];
  const chain = describeChain(steps, new Map(rows.map((r) => [r.id, r.email])));
  const why = paths?.down
    ? `${chain}, who asked for #${request.id}: an account the requester controls may not ${doing} their request`
    : `${chain}, and asked for #${request.id}: whoever controls the requester's account may not ${doing} their request`;
  throw new ChangeControlError("own_request", `${why}; an independent admin must (docs/change-control.md, "Who is a second person")`);
}

/** The trigger's refusal (a path that skipped requireIndependent) as the same own_request. */
export function independenceRefusal(error: unknown, id: number): ChangeControlError | null {
  for (let e: unknown = error; e && typeof e === "object"; e = "cause" in e ? e.cause : undefined) {
    if ("constraint_name" in e && e.constraint_name === "change_requests_independent") {
      return new ChangeControlError("own_request", `#${id}: the database refused it: the second person is not independent of the requester`);
    }
  }
  return null;
}
