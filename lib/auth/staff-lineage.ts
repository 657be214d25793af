import { asc } from "drizzle-orm";
import type { Db } from "@/db/client";
import { staffGrants } from "@/db/schema";

export type GrantLine = { kind: "create" | "promote" | "password"; by: string; parent: boolean };

/**
 * Who gave each member control of their account (staff_grants), oldest first, by staff id: what
 * the Staff page shows so an admin sees who is independent of whom (docs/change-control.md).
 */
export async function listStaffGrants(db: Db): Promise<Map<number, GrantLine[]>> {
  const rows = await db
    .select({ staffId: staffGrants.staffId, kind: staffGrants.kind, by: staffGrants.grantedBy, byId: staffGrants.grantedById })
    .from(staffGrants)
    .orderBy(asc(staffGrants.id));
  const out = new Map<number, GrantLine[]>();
  for (const r of rows) out.set(r.staffId, [...(out.get(r.staffId) ?? []), { kind: r.kind, by: r.by, parent: r.byId !== null }]);
  return out;
}

const DID: Record<GrantLine["kind"], string> = { create: "created", promote: "promoted", password: "password set" };

/** "created by ops (command line, no parent); promoted by ada@…": one line per member. */
export function lineageText(lines: GrantLine[] | undefined): string {
  if (!lines || lines.length === 0) return "no record (made before lineage was kept, or by SQL)";
  return lines.map((l) => `${DID[l.kind]} by ${l.by}${l.parent ? "" : " (no parent)"}`).join("; ");
}
