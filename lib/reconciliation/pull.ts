import { readFile, stat } from "node:fs/promises";
import { and, eq, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { usageSources } from "@/db/schema";
import type { EgressPolicy } from "@/lib/alerts/egress";
import { SECRET_PREFIX, type SecretLookup } from "@/lib/alerts/email";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { DomainError } from "@/lib/errors";
import { describeError } from "@/lib/log/redact";
import { completeDays } from "./days";
import { ReconciliationError } from "./errors";
import { MAX_FILE_BYTES, parseUsageFile, type UsageFileFormat } from "./file";
import { getText } from "./provider-http";
import { pullAnthropic } from "./providers/anthropic";
import type { ProviderClient } from "./providers/common";
import { pullOpenAI } from "./providers/openai";
import { pullTwilio } from "./providers/twilio";
import type { ProviderDay, PullResult, UsageSource } from "./types";
import { writeUsageDays } from "./write";

// Pulling a source: an API source asks its provider for the last `lookback_days` complete days
// (providers revise days, so each pull replaces them); a file source with a location reads it and
// replaces the days the file holds. The worker pulls every enabled source once a day and on demand
// ("Pull now"), one worker per source at a time (a claim with an expiry), and a failure is recorded
// on the source while its old rows stay.

export type PullOptions = { now: Date; secrets: SecretLookup; egress: EgressPolicy; fetchImpl?: typeof fetch; retryCapMs?: number };
export type PullOutcome = { sourceId: number; name: string; ok: boolean; result?: PullResult; error?: string };

/** A source is pulled again this long after its last pull. */
export const PULL_EVERY_MS = 24 * 60 * 60_000;
/** A claim older than this is abandoned (a worker died mid-pull) and the source may be claimed again. */
export const CLAIM_MS = 5 * 60_000;

const clients: Record<Exclude<UsageSource["kind"], "file">, ProviderClient> = { openai: pullOpenAI, anthropic: pullAnthropic, twilio: pullTwilio };

/** The secret a source's credential_ref names: only CEILINGS_SECRET_* variables of the worker. */
export function resolveCredential(source: Pick<UsageSource, "name" | "credentialRef">, lookup: SecretLookup): string {
  const ref = source.credentialRef ?? "";
  const name = ref.startsWith("env:") ? ref.slice(4) : ref;
  if (!name.startsWith(SECRET_PREFIX) || !/^[A-Z0-9_]+$/.test(name)) {
    throw new ReconciliationError("credential_missing", `the source '${source.name}' must name its key as env:${SECRET_PREFIX}..., got '${ref.slice(0, 60)}'`);
  }
  const value = lookup(name);
  if (value === undefined || value.trim() === "") throw new ReconciliationError("credential_missing", `${name} is not set in the worker's environment (the key of '${source.name}')`);
  return value.trim();
}

async function loadSource(db: Db, sourceId: number): Promise<UsageSource> {
  const [source] = await db.select().from(usageSources).where(eq(usageSources.id, sourceId));
  if (!source) throw new ReconciliationError("not_found", `no usage source #${sourceId}`);
  return source;
}

const formatOf = (location: string): UsageFileFormat | undefined => (/\.json$/i.test(location) ? "json" : /\.csv$/i.test(location) ? "csv" : undefined);

/** A file source's file: an http(s) URL through the egress checks, or an absolute local path. */
async function readLocation(source: UsageSource, location: string, opts: PullOptions): Promise<string> {
  if (/^https?:\/\//i.test(location)) {
    return getText(location, { provider: `the file of '${source.name}'`, headers: {}, egress: opts.egress, accept: "text/csv, application/json, text/plain", ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}), ...(opts.retryCapMs !== undefined ? { retryCapMs: opts.retryCapMs } : {}) });
  }
  if (!location.startsWith("/")) throw new ReconciliationError("no_location", `the file location of '${source.name}' must be an http(s) URL or an absolute path, got '${location.slice(0, 100)}'`);
  try {
    const info = await stat(location);
    if (info.size > MAX_FILE_BYTES) throw new ReconciliationError("bad_file", `${location} is ${(info.size / 1024 / 1024).toFixed(1)} MB; at most 5 MB`, [{ line: 0, reason: "the file is larger than 5 MB" }]);
    return await readFile(location, "utf8");
  } catch (error) {
    if (error instanceof ReconciliationError) throw error;
    throw new ReconciliationError("no_location", `the file of '${source.name}' could not be read at ${location}: ${error instanceof Error && "code" in error ? String(error.code) : "unreadable"}`);
  }
}

function badFile(source: UsageSource, errors: { line: number; reason: string }[]): ReconciliationError {
  const n = errors.filter((e) => e.line > 0).length;
  return new ReconciliationError("bad_file", `the file for '${source.name}' was not imported: ${n === 0 ? errors[0]?.reason ?? "it is not a usage file" : `${n} bad line${n === 1 ? "" : "s"}`}; nothing was written`, errors);
}

const daysOf = (rows: readonly { day: ProviderDay }[]): ProviderDay[] => [...new Set(rows.map((r) => r.day))].sort();

/** Pulls one source now (whatever its schedule): its provider's last complete days, or its file. */
export async function pullSource(db: Db, sourceId: number, opts: PullOptions): Promise<PullResult> {
  const source = await loadSource(db, sourceId);
  if (source.kind === "file") {
    if (!source.location) throw new ReconciliationError("no_location", `the source '${source.name}' has no file location: its files are imported by hand`);
    const text = await readLocation(source, source.location, opts);
    const format = formatOf(source.location);
    const parsed = parseUsageFile(text, format ? { format } : {});
    if (!parsed.ok) throw badFile(source, parsed.errors);
    return writeUsageDays(db, source.id, parsed.rows, { days: daysOf(parsed.rows), via: "file" });
  }
  const secret = resolveCredential(source, opts.secrets);
  const days = completeDays(opts.now, source.timeZone, source.lookbackDays);
  const rows = await clients[source.kind](source, days, { secret, egress: opts.egress, ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}), ...(opts.retryCapMs !== undefined ? { retryCapMs: opts.retryCapMs } : {}) });
  return writeUsageDays(db, source.id, rows, { days, via: "api" });
}

/** Imports a usage file by hand into a file source: whole or not at all, audited (`usage.import`). */
export async function importUsageFile(db: Db, sourceId: number, text: string, opts: { actor: AuditActor; now: Date; format?: UsageFileFormat }): Promise<PullResult> {
  const source = await loadSource(db, sourceId);
  if (source.kind !== "file") {
    throw new ReconciliationError("wrong_kind", `'${source.name}' is a ${source.kind} source: its days come from the provider's API; import files into a file source`);
  }
  const parsed = parseUsageFile(text, opts.format ? { format: opts.format } : {});
  if (!parsed.ok) throw badFile(source, parsed.errors);
  if (parsed.rows.length === 0) throw badFile(source, [{ line: 0, reason: "the file has a header but no rows" }]);
  const actor = auditActorFields(opts.actor);
  return writeUsageDays(db, source.id, parsed.rows, {
    days: daysOf(parsed.rows),
    via: `file (${actor.actor})`,
    onWritten: async (tx, result) => {
      await recordAudit(tx, {
        ...actor,
        action: "usage.import",
        target: source.name,
        details: { sourceId: source.id, source: source.name, days: result.days, rows: result.rows, unmapped: result.unmapped, importedAt: opts.now.toISOString() },
      });
      // An import is how a file source without a location gets its days: its page and the
      // Reconciliation page show it as the source's last good pull.
      await tx.update(usageSources).set({ lastPullAt: opts.now, lastPullOk: opts.now, lastPullError: null }).where(eq(usageSources.id, source.id));
    },
  });
}

/** A pull's failure as one line for last_pull_error: a domain error's own sentence, anything else described (redacted). */
function failureText(error: unknown): string {
  const text = error instanceof DomainError ? error.message : `the pull failed: ${describeError(error)}`;
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
}

/**
 * Pulls every enabled source that is asked for ("Pull now") or due (not pulled in 24 hours),
 * except file sources without a location. Each is claimed first, so two workers never pull one
 * source at once and a source pulled by one is no longer due for the other. Never throws for a
 * source's failure: it is recorded on the source and returned.
 */
export async function pullDueSources(db: Db, opts: PullOptions & { afterPull?: (r: PullResult) => Promise<void> }): Promise<PullOutcome[]> {
  const now = opts.now;
  const dueBefore = new Date(now.getTime() - PULL_EVERY_MS);
  const due = or(isNotNull(usageSources.pullRequestedAt), isNull(usageSources.lastPullAt), lt(usageSources.lastPullAt, dueBefore));
  const pullable = or(sql`${usageSources.kind} <> 'file'`, isNotNull(usageSources.location));
  const candidates = await db
    .select({ id: usageSources.id, name: usageSources.name })
    .from(usageSources)
    .where(and(eq(usageSources.enabled, true), due, pullable))
    .orderBy(usageSources.id);
  const outcomes: PullOutcome[] = [];
  for (const candidate of candidates) {
    try {
      const [claim] = await db
        .update(usageSources)
        .set({ pullingUntil: new Date(now.getTime() + CLAIM_MS) })
        .where(and(eq(usageSources.id, candidate.id), eq(usageSources.enabled, true), due, pullable, or(isNull(usageSources.pullingUntil), lt(usageSources.pullingUntil, now))))
        // As text: a timestamp read into a Date loses its microseconds and would never compare equal.
        .returning({ requested: sql<string | null>`${usageSources.pullRequestedAt}::text` });
      if (!claim) continue;
      let result: PullResult | undefined;
      let error: string | undefined;
      try {
        result = await pullSource(db, candidate.id, opts);
      } catch (e) {
        error = failureText(e);
      }
      // A "Pull now" asked while this pull ran is kept: the source is pulled again next round.
      const served = claim.requested === null ? sql`${usageSources.pullRequestedAt}` : sql`case when ${usageSources.pullRequestedAt} <= ${claim.requested}::timestamptz then null else ${usageSources.pullRequestedAt} end`;
      await db
        .update(usageSources)
        .set({ lastPullAt: now, ...(result ? { lastPullOk: now, lastPullError: null } : { lastPullError: error ?? "the pull failed" }), pullingUntil: null, pullRequestedAt: served })
        .where(eq(usageSources.id, candidate.id));
      if (result && opts.afterPull) {
        try {
          await opts.afterPull(result);
        } catch (e) {
          error = `pulled, but the comparison failed: ${failureText(e)}`;
          await db.update(usageSources).set({ lastPullError: error }).where(eq(usageSources.id, candidate.id));
          outcomes.push({ sourceId: candidate.id, name: candidate.name, ok: false, result, error });
          continue;
        }
      }
      outcomes.push(result ? { sourceId: candidate.id, name: candidate.name, ok: true, result } : { sourceId: candidate.id, name: candidate.name, ok: false, error: error ?? "the pull failed" });
    } catch (e) {
      outcomes.push({ sourceId: candidate.id, name: candidate.name, ok: false, error: failureText(e) });
    }
  }
  return outcomes;
}
