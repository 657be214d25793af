import { InputError } from "@/lib/errors";
import { eq, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { sqlState } from "@/db/sql-state";
import { usageSources, type UsageSource } from "@/db/schema/reconciliation";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { CatalogError, invalidInput, type Issue } from "@/lib/limits/errors";
import { UsageSourceInput, type UsageSourceSettings } from "./source-input";

// The usage sources' writes: each one transaction with its audit event. A source's credential is
// a reference (env:CEILINGS_SECRET_...), safe to log; the secret itself never reaches Ceilings'
// database. Staff edit a source against the version they saw (its updated_at), so two admins
// saving at once get a conflict instead of one silently undoing the other.

const actorName = (actor: AuditActor) => (actor.type === "staff" ? actor.email : actor.name);

/** The settings from typed input, or an invalid_input error naming every bad field. */
export function readUsageSourceInput(input: unknown): UsageSourceSettings {
  const parsed = UsageSourceInput.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems: Issue[] = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  throw invalidInput(problems);
}

/** The version a form carries: updated_at to the millisecond, as ISO text. */
export function sourceVersion(source: Pick<UsageSource, "updatedAt">): string {
  return source.updatedAt.toISOString();
}

function settingsOf(s: UsageSource): UsageSourceSettings {
  return {
    name: s.name,
    kind: s.kind,
    location: s.location,
    credentialRef: s.credentialRef,
    account: s.account,
    timeZone: s.timeZone,
    currency: s.currency,
    lookbackDays: s.lookbackDays,
    thresholdBasisPoints: s.thresholdBasisPoints,
    thresholdMicros: s.thresholdMicros,
    unmappedThresholdMicros: s.unmappedThresholdMicros,
    pullAt: s.pullAt,
  };
}

async function audit(
  tx: Db,
  actor: AuditActor,
  source: Pick<UsageSource, "id" | "name">,
  action: string,
  details: Record<string, unknown>,
  reason: string | null = null,
) {
  await recordAudit(tx, { ...auditActorFields(actor), action, target: `usage_source:${source.id}`, reason, details: { source: source.name, ...details } });
}

function duplicateName(error: unknown, name: string): never {
  if (sqlState(error) === "23505") throw new CatalogError("duplicate_key", `a usage source named '${name}' already exists`);
  throw error;
}

/** The source row FOR UPDATE, or not_found. */
export async function lockUsageSource(tx: Db, sourceId: number): Promise<UsageSource> {
  const [row] = await tx.select().from(usageSources).where(eq(usageSources.id, sourceId)).for("update");
  if (!row) throw new CatalogError("not_found", `no usage source ${sourceId}`);
  return row;
}

export async function createUsageSource(db: Db, p: { input: unknown; actor: AuditActor; now?: Date }): Promise<UsageSource> {
  const settings = readUsageSourceInput(p.input);
  const now = p.now ?? new Date();
  return db.transaction(async (tx) => {
    let row: UsageSource | undefined;
    try {
      [row] = await tx
        .insert(usageSources)
        .values({ ...settings, createdBy: actorName(p.actor), createdAt: now, updatedAt: now })
        .returning();
    } catch (error) {
      duplicateName(error, settings.name);
    }
    if (!row) throw new Error("insert returned no usage source");
    await audit(tx, p.actor, row, "usage_source.create", { after: settings });
    return row;
  });
}

export type UsageSourceChange = { field: keyof UsageSourceSettings; before: unknown; after: unknown };

/**
 * Saves a source's settings against the version the form showed. Its kind is fixed: its rules
 * name the provider's items, which mean nothing to another provider.
 */
export async function updateUsageSource(
  db: Db,
  p: { sourceId: number; expectedVersion: string; input: unknown; actor: AuditActor; now?: Date },
): Promise<{ source: UsageSource; changes: UsageSourceChange[] }> {
  const settings = readUsageSourceInput(p.input);
  const now = p.now ?? new Date();
  return db.transaction(async (tx) => {
    const current = await lockUsageSource(tx, p.sourceId);
    if (sourceVersion(current) !== p.expectedVersion) {
      throw new CatalogError(
        "conflict",
        `${current.name} was changed by someone else since this form was loaded (by the version it showed). Nothing was saved: reload and try again`,
      );
    }
    if (settings.kind !== current.kind) {
      throw invalidInput([{ path: "kind", message: `the kind of a source is fixed (${current.kind}): create a new source for another provider` }]);
    }
    if (settings.currency !== current.currency) await refuseCurrencyOfTargets(tx, current, settings.currency);
    const before = settingsOf(current);
    const changes = (Object.keys(settings) as (keyof UsageSourceSettings)[])
      .filter((k) => settings[k] !== before[k])
      .map((field) => ({ field, before: before[field], after: settings[field] }));
    if (changes.length === 0) throw new CatalogError("unchanged", "Nothing changed: the settings are the ones in force");
    // Later than the version in force even when the clock is behind it, so the version always moves.
    const updatedAt = new Date(Math.max(now.getTime(), current.updatedAt.getTime() + 1));
    let row: UsageSource | undefined;
    try {
      [row] = await tx
        .update(usageSources)
        .set({ ...settings, updatedAt })
        .where(eq(usageSources.id, current.id))
        .returning();
    } catch (error) {
      duplicateName(error, settings.name);
    }
    if (!row) throw new Error("update returned no usage source");
    await audit(tx, p.actor, row, "usage_source.update", { changes });
    return { source: row, changes };
  });
}

/**
 * A source's currency is the currency of every endpoint and budget its rules map (addUsageRule
 * refuses a target in another currency): changing it would compare bills in one currency with
 * charges in another, micros for micros. Refused naming each target, while the source is locked,
 * so no rule is added meanwhile.
 */
async function refuseCurrencyOfTargets(tx: Db, source: UsageSource, currency: string): Promise<void> {
  const others = resultRows<{ kind: "endpoint" | "budget"; key: string; currency: string }>(
    await tx.execute(sql`
    select 'endpoint' as kind, e.key, e.currency from usage_source_rules r join endpoints e on e.id = r.endpoint_id
     where r.source_id = ${source.id} and e.currency <> ${currency}
    union
    select 'budget' as kind, b.key, b.currency from usage_source_rules r join budgets b on b.id = r.budget_id
     where r.source_id = ${source.id} and b.currency <> ${currency}
    order by kind, key limit 6`),
  );
  if (others.length === 0) return;
  const named = others
    .slice(0, 5)
    .map((o) => `${o.kind} '${o.key}' (${o.currency})`)
    .join(", ");
  throw invalidInput([
    {
      path: "currency",
      message: `${source.name}'s rules map ${named}${others.length > 5 ? " and more" : ""}: one currency per comparison, so the currency stays ${source.currency} while they do (remove those rules first)`,
    },
  ]);
}

/** Deletes a source with its rules, raw rows, pulled days and comparisons (the database cascades). */
export async function deleteUsageSource(db: Db, p: { sourceId: number; actor: AuditActor; reason?: string | null }): Promise<{ name: string; days: number }> {
  return db.transaction(async (tx) => {
    const current = await lockUsageSource(tx, p.sourceId);
    const [held] = resultRows<{ days: number; rows: number; compared: number; rules: number }>(
      await tx.execute(sql`
      select (select count(*)::int from usage_pulls where source_id = ${current.id}) as days,
             (select count(*)::int from usage_rows where source_id = ${current.id}) as rows,
             (select count(*)::int from reconciliation_days where source_id = ${current.id}) as compared,
             (select count(*)::int from usage_source_rules where source_id = ${current.id}) as rules`),
    );
    await tx.delete(usageSources).where(eq(usageSources.id, current.id));
    await audit(tx, p.actor, current, "usage_source.delete", { before: settingsOf(current), removed: held ?? null }, p.reason?.trim() || null);
    return { name: current.name, days: held?.days ?? 0 };
  });
}

/** Pauses (not pulled; its rows and comparisons stay) or resumes a source. */
export async function setUsageSourceEnabled(db: Db, p: { sourceId: number; enabled: boolean; actor: AuditActor; now?: Date }): Promise<UsageSource> {
  return db.transaction(async (tx) => {
    const current = await lockUsageSource(tx, p.sourceId);
    if (current.enabled === p.enabled) throw new CatalogError("unchanged", `${current.name} is already ${p.enabled ? "running" : "paused"}`);
    const updatedAt = new Date(Math.max((p.now ?? new Date()).getTime(), current.updatedAt.getTime() + 1));
    const [row] = await tx.update(usageSources).set({ enabled: p.enabled, updatedAt }).where(eq(usageSources.id, current.id)).returning();
    if (!row) throw new Error("update returned no usage source");
    await audit(tx, p.actor, row, p.enabled ? "usage_source.resume" : "usage_source.pause", {});
    return row;
  });
}

/**
 * Asks the worker to pull a source now: it sets pull_requested_at to now, and the worker's next
 * loop pulls it and clears it, unless it was asked again after the pull was claimed (then the
 * worker pulls it once more: what changed since may not be in the running pull). Asked twice
 * before the worker came, it is still one pull.
 */
export async function requestPull(db: Db, p: { sourceId: number; actor: AuditActor; now?: Date }): Promise<{ source: UsageSource; requestedAt: Date }> {
  return db.transaction(async (tx) => {
    const current = await lockUsageSource(tx, p.sourceId);
    if (!current.enabled) throw InputError.of(`${current.name} is paused: resume it before asking for a pull`);
    if (current.kind === "file" && current.location === null) {
      throw InputError.of(`${current.name} has no location to read: import its file by hand instead`);
    }
    // Always now, later than any earlier request: a pull running now serves only requests up to
    // its claim, so this one is not lost to it.
    const requestedAt = new Date(Math.max((p.now ?? new Date()).getTime(), (current.pullRequestedAt?.getTime() ?? 0) + 1));
    const [row] = await tx.update(usageSources).set({ pullRequestedAt: requestedAt }).where(eq(usageSources.id, current.id)).returning();
    if (!row) throw new Error("update returned no usage source");
    await audit(tx, p.actor, row, "usage_source.pull_requested", {
      requestedAt: requestedAt.toISOString(),
      alreadyRequested: current.pullRequestedAt !== null,
    });
    return { source: row, requestedAt };
  });
}
