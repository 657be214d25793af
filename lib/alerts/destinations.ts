import { randomBytes } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { alertDestinations, type AlertDestination } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/ceilings/actor";
import { env } from "@/lib/env";
import { checkDestinationUrl, EgressRefused, egressPolicyFrom, type EgressPolicy } from "./egress";
import { AlertError } from "./errors";

// Where alerts go. Admins manage them; every change is audited (never the secret itself).
// A destination added later receives alerts fired from then on: the outbox rows of an alert are
// written when it fires.

export const DestinationInput = z.object({
  name: z.string().trim().min(1, "a name is required").max(80, "the name must be at most 80 characters"),
  kind: z.enum(["slack", "webhook"], { error: "kind must be slack or webhook" }),
  target: z
    .string()
    .trim()
    .max(2000, "the URL must be at most 2000 characters")
    .pipe(z.url({ protocol: /^https?$/, error: "the URL must start with http:// or https://" })),
  // Blank: one is generated for generic webhooks. Slack URLs carry their own secret.
  signingSecret: z.string().trim().max(200, "the secret must be at most 200 characters").optional(),
});
export type DestinationInput = z.infer<typeof DestinationInput>;

export type DestinationView = Omit<AlertDestination, "signingSecret"> & { hasSecret: boolean; signingSecret: string | null };

/** Secrets are returned: only the admin-only destinations page reads this, to configure receivers. */
export async function listDestinations(db: Db): Promise<DestinationView[]> {
  const rows = await db.select().from(alertDestinations).orderBy(asc(alertDestinations.name), asc(alertDestinations.id));
  return rows.map((r) => ({ ...r, hasSecret: r.signingSecret !== null }));
}

export async function createDestination(db: Db, p: { input: DestinationInput; actor: AuditActor; egress?: EgressPolicy }): Promise<AlertDestination> {
  try {
    await checkDestinationUrl(p.input.target, p.egress ?? egressPolicyFrom(env().ALERT_WEBHOOK_ALLOW_HOSTS));
  } catch (error) {
    if (error instanceof EgressRefused) throw new AlertError("invalid_input", `the URL is not allowed: ${error.message}`);
    throw error;
  }
  const secret =
    p.input.kind === "webhook" ? (p.input.signingSecret && p.input.signingSecret.length > 0 ? p.input.signingSecret : randomBytes(32).toString("hex")) : null;
  if (secret !== null && secret.length < 16) throw new AlertError("invalid_input", "the signing secret must be at least 16 characters");
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(alertDestinations)
      .values({ name: p.input.name, kind: p.input.kind, target: p.input.target, signingSecret: secret, createdBy: actorName(p.actor) })
      .returning();
    if (!row) throw new Error("destination insert returned nothing");
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: "alert_destination.create",
      target: `alert_destination:${row.id}`,
      details: { name: row.name, kind: row.kind, url: new URL(row.target).origin },
    });
    return row;
  });
}

export async function setDestinationEnabled(db: Db, p: { id: number; enabled: boolean; actor: AuditActor }): Promise<AlertDestination> {
  return db.transaction(async (tx) => {
    const [row] = await tx.update(alertDestinations).set({ enabled: p.enabled }).where(eq(alertDestinations.id, p.id)).returning();
    if (!row) throw new AlertError("not_found", `no destination with id ${p.id}`);
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: p.enabled ? "alert_destination.enable" : "alert_destination.disable",
      target: `alert_destination:${row.id}`,
      details: { name: row.name, kind: row.kind },
    });
    return row;
  });
}

/** Deleting a destination also deletes its delivery history (the rows cascade). */
export async function deleteDestination(db: Db, p: { id: number; actor: AuditActor }): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.delete(alertDestinations).where(eq(alertDestinations.id, p.id)).returning();
    if (!row) throw new AlertError("not_found", `no destination with id ${p.id}`);
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: "alert_destination.delete",
      target: `alert_destination:${row.id}`,
      details: { name: row.name, kind: row.kind },
    });
  });
}
