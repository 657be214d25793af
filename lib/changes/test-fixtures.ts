import { and, eq, like } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents, staff } from "@/db/schema";
import type { Role } from "@/lib/auth/roles";
import type { Requester } from "./types";

// Staff for change-control tests: each test makes its own people, so no test shares a requester.

let counter = 0;

/** A staff row (no usable password: these tests never sign in) and the Requester naming it. */
export async function staffMember(db: Db, role: Role, via: Requester["via"] = "dashboard"): Promise<Requester> {
  counter += 1;
  const email = `${role}${counter}-${Date.now().toString(36)}@test.local`;
  const [row] = await db.insert(staff).values({ email, role, passwordHash: "x" }).returning({ id: staff.id });
  if (!row) throw new Error("staff insert returned nothing");
  return { staffId: row.id, email, role, via };
}

/** The audit events of one request, oldest first. */
export async function requestEvents(db: Db, requestId: number) {
  return db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.target, `change_request:${requestId}`))
    .orderBy(auditEvents.id);
}

/** Every audit event with this action on a ceiling, oldest first. */
export async function ceilingEvents(db: Db, ceilingId: number, action: string) {
  return db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.ceilingId, ceilingId), like(auditEvents.action, action)))
    .orderBy(auditEvents.id);
}
