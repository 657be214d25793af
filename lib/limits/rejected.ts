import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints } from "@/db/schema";
import { auditActorFields, auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { CallerKey } from "@/lib/canonical/caller";
import { invalidInput } from "./errors";

// What every limit verb does with input it refuses: a value typed as "1e9", "500abc" or "-5" saves
// nothing, but staff can still see that someone tried it (ceiling.rejected or budget.rejected, with
// the raw input and why); a billing account that is no account is refused with its field named.

/** The limit a refused value was typed for: a ceiling by id, a budget by key. */
export type RejectedOn = { kind: "ceiling"; ceilingId: number } | { kind: "budget"; key: string };

/** Logs a value refused as typed on a limit (or on an account's override of it: `extra` says which). */
export async function recordRejectedInput(
  db: Db,
  on: RejectedOn,
  p: { input: string; actor: AuditActor; reason: string },
  error: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const refused = { rawInput: p.input, appliedValue: null, clamped: false, reason: p.reason.trim() || null };
  if (on.kind === "ceiling") {
    const [row] = await db
      .select({ endpoint: { id: endpoints.id, key: endpoints.key }, value: ceilings.value })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(eq(ceilings.id, on.ceilingId));
    if (!row) return;
    await recordAudit(db, {
      ...auditOf(p.actor, row.endpoint, on.ceilingId),
      action: "ceiling.rejected",
      previousValue: row.value,
      ...refused,
      details: { error, ...extra },
    });
    return;
  }
  const [row] = await db.select({ id: budgets.id, key: budgets.key, value: budgets.value }).from(budgets).where(eq(budgets.key, on.key));
  if (!row) return;
  await recordAudit(db, {
    ...auditActorFields(p.actor),
    action: "budget.rejected",
    target: row.key,
    previousValue: row.value,
    ...refused,
    details: { budgetId: row.id, error, ...extra },
  });
}

/** The billing account an override names, canonical; refused with the field named otherwise. */
export function parseCaller(raw: string): string {
  const parsed = CallerKey.safeParse(raw);
  if (!parsed.success) throw invalidInput([{ path: "caller", message: parsed.error.issues[0]?.message ?? "invalid billing account" }]);
  return parsed.data;
}
