import { InputError } from "@/lib/errors";
import { randomBytes } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { alertDestinations, type AlertDestination } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { env } from "@/lib/env";
import { checkDestinationUrl, EgressRefused, egressPolicyFrom, type EgressPolicy } from "./egress";
import { AlertError } from "./errors";

// Where alerts go. Admins manage them; every change is audited (never the secret itself).
// A destination added later receives alerts fired from then on: the outbox rows of an alert are
// written when it fires.

const Name = z.string().trim().min(1, "a name is required").max(80, "the name must be at most 80 characters");

export const WebhookDestinationInput = z.object({
  name: Name,
  kind: z.enum(["slack", "webhook"], { error: "kind must be slack, webhook or email" }),
  target: z
    .string()
    .trim()
    .max(2000, "the URL must be at most 2000 characters")
    .pipe(z.url({ protocol: /^https?$/, error: "the URL must start with http:// or https://" })),
  // Blank: one is generated for generic webhooks. Slack URLs carry their own secret.
  signingSecret: z.string().trim().max(200, "the secret must be at most 200 characters").optional(),
});

const Address = z.email({ error: (i) => `'${String(i.input).slice(0, 80)}' is not an e-mail address` });
/** `Name <a@b.co>` or `a@b.co`. */
const FromAddress = z
  .string()
  .trim()
  .max(320)
  .refine((v) => Address.safeParse(/<([^>]+)>\s*$/.exec(v)?.[1] ?? v).success, "from must be an e-mail address, optionally as 'Name <address>'");

export const EmailDestinationInput = z.object({
  name: Name,
  kind: z.literal("email"),
  // Recipients, comma-separated; stored as typed after trimming.
  target: z
    .string()
    .trim()
    .min(1, "at least one recipient is required")
    .max(2000)
    .transform((v) =>
      v
        .split(",")
        .map((a) => a.trim())
        .filter((a) => a !== ""),
    )
    .pipe(z.array(Address).min(1, "at least one recipient is required").max(20, "at most 20 recipients"))
    .transform((list) => list.join(", ")),
  smtpHost: z
    .string()
    .trim()
    .min(1, "the SMTP host is required")
    .max(253)
    .regex(/^[A-Za-z0-9.-]+$|^\[[0-9a-fA-F:.]+\]$/, "the SMTP host must be a host name or an IP address"),
  smtpPort: z.coerce
    .number({ error: "the SMTP port must be a number" })
    .int("the SMTP port must be a whole number")
    .min(1, "the SMTP port must be 1-65535")
    .max(65_535, "the SMTP port must be 1-65535"),
  smtpTls: z.enum(["tls", "starttls", "none"], { error: "TLS must be tls, starttls or none" }),
  smtpUsername: z.string().trim().max(200).optional(),
  // The password itself is never stored: only the name of the worker's environment variable holding it.
  smtpPasswordRef: z
    .string()
    .trim()
    .regex(/^(env:)?CEILINGS_SECRET_[A-Z0-9_]+$/, "the password reference must name an environment variable CEILINGS_SECRET_..., e.g. env:CEILINGS_SECRET_SMTP")
    .optional(),
  emailFrom: FromAddress,
});

export const DestinationInput = z.discriminatedUnion("kind", [WebhookDestinationInput, EmailDestinationInput], {
  error: "kind must be slack, webhook or email",
});
export type DestinationInput = z.infer<typeof DestinationInput>;

export type DestinationView = Omit<AlertDestination, "signingSecret"> & { hasSecret: boolean; signingSecret: string | null };

/** Secrets are returned: only the admin-only destinations page reads this, to configure receivers. */
export async function listDestinations(db: Db): Promise<DestinationView[]> {
  const rows = await db.select().from(alertDestinations).orderBy(asc(alertDestinations.name), asc(alertDestinations.id));
  return rows.map((r) => ({ ...r, hasSecret: r.signingSecret !== null }));
}

export async function createDestination(db: Db, p: { input: DestinationInput; actor: AuditActor; egress?: EgressPolicy }): Promise<AlertDestination> {
  if (p.input.kind === "email") return createEmailDestination(db, { input: p.input, actor: p.actor });
  try {
    await checkDestinationUrl(p.input.target, p.egress ?? egressPolicyFrom(env().ALERT_WEBHOOK_ALLOW_HOSTS));
  } catch (error) {
    if (error instanceof EgressRefused) throw InputError.of(`the URL is not allowed: ${error.message}`);
    throw error;
  }
  const secret =
    p.input.kind === "webhook" ? (p.input.signingSecret && p.input.signingSecret.length > 0 ? p.input.signingSecret : randomBytes(32).toString("hex")) : null;
  if (secret !== null && secret.length < 16) throw InputError.of("the signing secret must be at least 16 characters");
  return insertDestination(
    db,
    p.actor,
    { name: p.input.name, kind: p.input.kind, target: p.input.target, signingSecret: secret },
    { url: new URL(p.input.target).origin },
  );
}

async function createEmailDestination(db: Db, p: { input: z.infer<typeof EmailDestinationInput>; actor: AuditActor }): Promise<AlertDestination> {
  const i = p.input;
  return insertDestination(
    db,
    p.actor,
    {
      name: i.name,
      kind: "email",
      target: i.target,
      smtpHost: i.smtpHost,
      smtpPort: i.smtpPort,
      smtpTls: i.smtpTls,
      smtpUsername: i.smtpUsername || null,
      smtpPasswordRef: i.smtpPasswordRef || null,
      emailFrom: i.emailFrom,
    },
    { smtp: `${i.smtpHost}:${i.smtpPort} (${i.smtpTls})`, to: i.target },
  );
}

/** Adds a destination and its create event in one transaction; `details` add to its name and kind (never a secret). */
async function insertDestination(
  db: Db,
  actor: AuditActor,
  values: Omit<typeof alertDestinations.$inferInsert, "createdBy">,
  details: Record<string, unknown>,
): Promise<AlertDestination> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(alertDestinations)
      .values({ ...values, createdBy: actorName(actor) })
      .returning();
    if (!row) throw new Error("destination insert returned nothing");
    await recordDestination(tx, actor, "alert_destination.create", row, details);
    return row;
  });
}

/** One event about a destination, named by its id, with its name and kind. */
function recordDestination(tx: Db, actor: AuditActor, action: string, row: AlertDestination, details: Record<string, unknown> = {}): Promise<void> {
  return recordAudit(tx, {
    ...auditActorFields(actor),
    action,
    target: `alert_destination:${row.id}`,
    details: { name: row.name, kind: row.kind, ...details },
  });
}

export async function setDestinationEnabled(db: Db, p: { id: number; enabled: boolean; actor: AuditActor }): Promise<AlertDestination> {
  return db.transaction(async (tx) => {
    const [row] = await tx.update(alertDestinations).set({ enabled: p.enabled }).where(eq(alertDestinations.id, p.id)).returning();
    if (!row) throw new AlertError("not_found", `no destination with id ${p.id}`);
    await recordDestination(tx, p.actor, p.enabled ? "alert_destination.enable" : "alert_destination.disable", row);
    return row;
  });
}

/** Deleting a destination also deletes its delivery history (the rows cascade). */
export async function deleteDestination(db: Db, p: { id: number; actor: AuditActor }): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.delete(alertDestinations).where(eq(alertDestinations.id, p.id)).returning();
    if (!row) throw new AlertError("not_found", `no destination with id ${p.id}`);
    await recordDestination(tx, p.actor, "alert_destination.delete", row);
  });
}
