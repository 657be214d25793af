import { constants } from "node:fs";
import { lstat, open, realpath } from "node:fs/promises";
import path from "node:path";
import { and, eq, isNotNull, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { usageSources } from "@/db/schema";
import type { EgressPolicy } from "@/lib/alerts/egress";
import type { SecretLookup } from "@/lib/alerts/email";
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
import { pullPostmark } from "./providers/postmark";
import { pullSendGrid } from "./providers/sendgrid";
import { pullSes } from "./providers/ses";
import { pullTwilio } from "./providers/twilio";
import { credentialPrefixes, isCredentialNameOf, localPathProblem, NO_FILE_DIR, usageFileDir } from "./source-input";
import type { ProviderDay, PullResult, UsageSource } from "./types";
import { writeUsageDays } from "./write";

// Pulling a source: an API source asks its provider for the last `lookback_days` complete days
// (providers revise days, so each pull replaces them); a file source with a location reads it and
// replaces the days the file holds. The worker pulls every enabled source once a day and on demand
// ("Pull now"), one worker per source at a time (a claim with an expiry), and a failure is recorded
// on the source while its old rows stay.

export type PullOptions = {
  now: Date;
  secrets: SecretLookup;
  egress: EgressPolicy;
  fetchImpl?: typeof fetch;
  retryCapMs?: number;
  /** The directory local file locations must be inside; USAGE_FILE_DIR when not given (null: none allowed). */
  fileDir?: string | null;
  /** One pull's deadline (default PULL_DEADLINE_MS). */
  deadlineMs?: number;
  /** The time now, read afresh for each claim; by default `now` moved on by the time this job has run. */
  clock?: () => Date;
};
export type PullOutcome = { sourceId: number; name: string; ok: boolean; result?: PullResult; error?: string };

/** A source is pulled again this long after its last pull. */
export const PULL_EVERY_MS = 24 * 60 * 60_000;
/** A claim older than this is abandoned (a worker died mid-pull) and the source may be claimed again. */
export const CLAIM_MS = 5 * 60_000;
/**
 * One pull's deadline, below the claim: the provider's requests and its Retry-After waits are
 * aborted by then, so a pull never outlives its claim and is never run by two workers at once.
 */
export const PULL_DEADLINE_MS = 4 * 60_000;
/** After a failed pull, the first retry waits this long; each further one twice as long as the last, ... */
export const RETRY_FIRST_MS = 15 * 60_000;
/** ... up to this. */
export const RETRY_MAX_MS = 6 * 60 * 60_000;

const clients: Record<Exclude<UsageSource["kind"], "file">, ProviderClient> = {
  openai: pullOpenAI,
  anthropic: pullAnthropic,
  twilio: pullTwilio,
  sendgrid: pullSendGrid,
  postmark: pullPostmark,
  ses: pullSes,
};

/**
 * The secret a source's credential_ref names: only the worker's variables of its kind's prefix
 * (CEILINGS_SECRET_OPENAI_* for OpenAI, ...), never another feature's secret.
 */
export function resolveCredential(source: Pick<UsageSource, "name" | "credentialRef" | "kind">, lookup: SecretLookup): string {
  const ref = source.credentialRef ?? "";
  const name = ref.startsWith("env:") ? ref.slice(4) : ref;
  if (source.kind === "file") throw new ReconciliationError("credential_missing", `the source '${source.name}' is a file source: it has no key`);
  if (!isCredentialNameOf(source.kind, name)) {
    const prefix = credentialPrefixes[source.kind];
    throw new ReconciliationError(
      "credential_missing",
      `the ${source.kind} source '${source.name}' must name its key as env:${prefix} or env:${prefix}_..., got '${ref.slice(0, 60)}'`,
    );
  }
  const value = lookup(name);
  if (value === undefined || value.trim() === "")
    throw new ReconciliationError("credential_missing", `${name} is not set in the worker's environment (the key of '${source.name}')`);
  return value.trim();
}

async function loadSource(db: Db, sourceId: number): Promise<UsageSource> {
  const [source] = await db.select().from(usageSources).where(eq(usageSources.id, sourceId));
  if (!source) throw new ReconciliationError("not_found", `no usage source #${sourceId}`);
  return source;
}

const formatOf = (location: string): UsageFileFormat | undefined => (/\.json$/i.test(location) ? "json" : /\.csv$/i.test(location) ? "csv" : undefined);

/** Reads at most `max` bytes of an open file; null when it holds more. */
async function boundedRead(handle: Awaited<ReturnType<typeof open>>, max: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of handle.createReadStream({ autoClose: false, end: max })) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A local file location: only a regular file inside USAGE_FILE_DIR (symlinks and `..` resolved
 * first, so neither escapes it), opened without blocking (a FIFO never holds the worker), checked
 * again on the open file, and read through a 5 MB bound (a /proc file's size says nothing).
 */
async function readLocalFile(source: UsageSource, location: string, dir: string | null): Promise<string> {
  const cannot = (why: string) => new ReconciliationError("no_location", `the file of '${source.name}' could not be read at ${location.slice(0, 200)}: ${why}`);
  if (dir === null) throw cannot(NO_FILE_DIR);
  const lexical = localPathProblem(location, dir);
  if (lexical) throw cannot(lexical);
  let real: string;
  let root: string;
  try {
    root = await realpath(dir);
    real = await realpath(location);
  } catch (error) {
    throw cannot(error instanceof Error && "code" in error ? String(error.code) : "unreadable");
  }
  if (!real.startsWith(root + path.sep)) throw cannot(`it resolves to ${real.slice(0, 200)}, outside USAGE_FILE_DIR (${root.slice(0, 120)})`);
  const info = await lstat(real).catch(() => null);
  if (!info?.isFile()) throw cannot("it is not a regular file");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    throw cannot(error instanceof Error && "code" in error ? String(error.code) : "unreadable");
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw cannot("it is not a regular file");
    if (opened.size > MAX_FILE_BYTES)
      throw new ReconciliationError("bad_file", `${location} is ${(opened.size / 1024 / 1024).toFixed(1)} MB; at most 5 MB`, [
        { line: 0, reason: "the file is larger than 5 MB" },
      ]);
    const text = await boundedRead(handle, MAX_FILE_BYTES);
    if (text === null) throw new ReconciliationError("bad_file", `${location} holds more than 5 MB`, [{ line: 0, reason: "the file is larger than 5 MB" }]);
    return text;
  } catch (error) {
    if (error instanceof ReconciliationError) throw error;
    throw cannot(error instanceof Error && "code" in error ? String(error.code) : "unreadable");
  } finally {
    await handle.close();
  }
}

/** A file source's file: an http(s) URL through the egress checks, or a local path inside USAGE_FILE_DIR. */
async function readLocation(source: UsageSource, location: string, opts: PullOptions, signal: AbortSignal): Promise<string> {
  if (/^https?:\/\//i.test(location)) {
    return getText(location, {
      provider: `the file of '${source.name}'`,
      headers: {},
      egress: opts.egress,
      signal,
      accept: "text/csv, application/json, text/plain",
      ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
      ...(opts.retryCapMs !== undefined ? { retryCapMs: opts.retryCapMs } : {}),
    });
  }
  if (!location.startsWith("/"))
    throw new ReconciliationError(
      "no_location",
      `the file location of '${source.name}' must be an http(s) URL or an absolute path, got '${location.slice(0, 100)}'`,
    );
  return readLocalFile(source, location, opts.fileDir === undefined ? usageFileDir() : opts.fileDir);
}

function badFile(source: UsageSource, errors: { line: number; reason: string }[]): ReconciliationError {
  const n = errors.filter((e) => e.line > 0).length;
  return new ReconciliationError(
    "bad_file",
    `the file for '${source.name}' was not imported: ${n === 0 ? (errors[0]?.reason ?? "it is not a usage file") : `${n} bad line${n === 1 ? "" : "s"}`}; nothing was written`,
    errors,
  );
}

const daysOf = (rows: readonly { day: ProviderDay }[]): ProviderDay[] => [...new Set(rows.map((r) => r.day))].sort();

/** Pulls one source now (whatever its schedule): its provider's last complete days, or its file. */
export async function pullSource(db: Db, sourceId: number, opts: PullOptions): Promise<PullResult> {
  const source = await loadSource(db, sourceId);
  const signal = AbortSignal.timeout(opts.deadlineMs ?? PULL_DEADLINE_MS);
  const inTime = () => {
    if (signal.aborted)
      throw new ReconciliationError(
        "provider_error",
        `the pull of '${source.name}' ran out of time (${Math.round((opts.deadlineMs ?? PULL_DEADLINE_MS) / 1000)} s); nothing was written`,
      );
  };
  if (source.kind === "file") {
    if (!source.location) throw new ReconciliationError("no_location", `the source '${source.name}' has no file location: its files are imported by hand`);
    const text = await readLocation(source, source.location, opts, signal);
    const format = formatOf(source.location);
    const parsed = parseUsageFile(text, { ...(format ? { format } : {}), timeZone: source.timeZone, currency: source.currency });
    if (!parsed.ok) throw badFile(source, parsed.errors);
    inTime();
    return writeUsageDays(db, source.id, parsed.rows, { days: daysOf(parsed.rows), via: "file" });
  }
  const secret = resolveCredential(source, opts.secrets);
  const days = completeDays(opts.now, source.timeZone, source.lookbackDays);
  const rows = await clients[source.kind](source, days, {
    secret,
    egress: opts.egress,
    signal,
    now: opts.now,
    ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
    ...(opts.retryCapMs !== undefined ? { retryCapMs: opts.retryCapMs } : {}),
  });
  inTime();
  return writeUsageDays(db, source.id, rows, { days, via: "api" });
}

/**
 * Pulls one source now, outside the worker's schedule (the CLI's `usage pull`), and records the
 * outcome on the source as the worker's pull does: a failure shows on the source's page with its
 * error, wherever the pull was started. Throws the pull's error after recording it.
 */
export async function pullSourceNow(db: Db, sourceId: number, opts: PullOptions): Promise<PullResult> {
  let result: PullResult;
  try {
    result = await pullSource(db, sourceId, opts);
  } catch (error) {
    await db
      .update(usageSources)
      .set({ lastPullAt: opts.now, lastPullError: failureText(error) })
      .where(eq(usageSources.id, sourceId));
    throw error;
  }
  await db.update(usageSources).set({ lastPullAt: opts.now, lastPullOk: opts.now, lastPullError: null }).where(eq(usageSources.id, sourceId));
  return result;
}

/** Imports a usage file by hand into a file source: whole or not at all, audited (`usage.import`). */
export async function importUsageFile(
  db: Db,
  sourceId: number,
  text: string,
  opts: { actor: AuditActor; now: Date; format?: UsageFileFormat },
): Promise<PullResult> {
  const source = await loadSource(db, sourceId);
  if (source.kind !== "file") {
    throw new ReconciliationError(
      "wrong_kind",
      `'${source.name}' is a ${source.kind} source: its days come from the provider's API; import files into a file source`,
    );
  }
  const parsed = parseUsageFile(text, { ...(opts.format ? { format: opts.format } : {}), timeZone: source.timeZone, currency: source.currency });
  if (!parsed.ok) throw badFile(source, parsed.errors);
  if (parsed.rows.length === 0) throw badFile(source, [{ line: 0, reason: "the file has a header but no rows" }]);
  const actor = auditActorFields(opts.actor);
  return writeUsageDays(db, source.id, parsed.rows, {
    days: daysOf(parsed.rows),
    via: `file (${actor.actor})`,
    actor: opts.actor,
    onWritten: async (tx, result) => {
      await recordAudit(tx, {
        ...actor,
        action: "usage.import",
        target: source.name,
        details: {
          sourceId: source.id,
          source: source.name,
          days: result.days,
          rows: result.rows,
          unmapped: result.unmapped,
          ...(result.notes ? { notes: result.notes } : {}),
          importedAt: opts.now.toISOString(),
        },
      });
      // An import is how a file source without a location gets its days: its page and the
      // Reconciliation page show it as the source's last good pull.
      await tx.update(usageSources).set({ lastPullAt: opts.now, lastPullOk: opts.now, lastPullError: null }).where(eq(usageSources.id, source.id));
    },
  });
}

/**
 * The latest time at or before `at` the source was to be pulled: today's pull_at in its time zone
 * when that has come, else yesterday's. The morning report: a source pulls at, say, 06:00 in its
 * zone, after the provider publishes the day before, so a day that drifts is alerted that morning
 * (and pulled again the next morning, with its lookback, for what the provider adds late).
 */
export function lastScheduledPull(at: Date): SQL {
  // Today's time as an instant, else yesterday's: compared as instants, so a pull time inside the
  // hour a daylight-saving change skips or repeats never lands after `at` (a source due again and
  // again until it passed).
  const instant = sql`${at.toISOString()}::timestamptz`;
  const today = sql`((${instant} at time zone ${usageSources.timeZone})::date + ${usageSources.pullAt}) at time zone ${usageSources.timeZone}`;
  const yesterday = sql`((${instant} at time zone ${usageSources.timeZone})::date - 1 + ${usageSources.pullAt}) at time zone ${usageSources.timeZone}`;
  return sql`(case when ${today} <= ${instant} then ${today} else ${yesterday} end)`;
}

/** A pull's failure as one line for last_pull_error: a domain error's own sentence, anything else described (redacted). */
function failureText(error: unknown): string {
  const text = error instanceof DomainError ? error.message : `the pull failed: ${describeError(error)}`;
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
}

/**
 * Pulls every enabled source that is asked for ("Pull now") or due: not pulled since its last
 * scheduled time (lastScheduledPull: pull_at each day in its zone), or its last pull failed and its
 * retry time has come. A failed pull is tried again after a backoff
 * derived from the rows' times (no failure count is kept): the failures began at about
 * `failing_since` = the earlier of the last pull and the day after the last good pull (or the
 * source's creation when it never pulled well), and the next try waits 15 minutes more than they
 * have lasted, capped at 6 hours: 15 min, then 30, 60, 120, 240, then every 6 h. (A failure
 * streak begun by "Pull now" before the day was due only retries sooner.) A pull that succeeded
 * but whose comparison failed is not retried early (last_pull_ok_at = last_pull_at).
 * Except file sources without a location. Each is claimed first, so two workers never pull one
 * source at once and a source pulled by one is no longer due for the other; each claim is taken
 * at the time it is taken (a pull of the same round may have run minutes before it). Never throws
 * for a source's failure: it is recorded on the source and returned.
 */
export async function pullDueSources(db: Db, opts: PullOptions & { afterPull?: (r: PullResult) => Promise<void> }): Promise<PullOutcome[]> {
  const started = Date.now();
  const clock = opts.clock ?? (() => new Date(opts.now.getTime() + (Date.now() - started)));
  const due = (at: Date) => {
    const dueBefore = lastScheduledPull(at);
    // (least() skips nulls, hence the case.)
    const failingSince = sql`least(${usageSources.lastPullAt}, case when ${usageSources.lastPullOk} is null then ${usageSources.createdAt} else ${usageSources.lastPullOk} + ${`${PULL_EVERY_MS} milliseconds`}::interval end)`;
    const retryAfter = sql`least(${`${RETRY_MAX_MS} milliseconds`}::interval, greatest(${`${RETRY_FIRST_MS} milliseconds`}::interval, ${usageSources.lastPullAt} - ${failingSince} + ${`${RETRY_FIRST_MS} milliseconds`}::interval))`;
    const failed = and(
      isNotNull(usageSources.lastPullError),
      or(isNull(usageSources.lastPullOk), lt(usageSources.lastPullOk, usageSources.lastPullAt)),
      sql`${usageSources.lastPullAt} + ${retryAfter} <= ${at.toISOString()}::timestamptz`,
    );
    return or(isNotNull(usageSources.pullRequestedAt), isNull(usageSources.lastPullAt), lt(usageSources.lastPullAt, dueBefore), failed);
  };
  const pullable = or(sql`${usageSources.kind} <> 'file'`, isNotNull(usageSources.location));
  const candidates = await db
    .select({ id: usageSources.id, name: usageSources.name })
    .from(usageSources)
    .where(and(eq(usageSources.enabled, true), due(clock()), pullable))
    .orderBy(usageSources.id);
  const outcomes: PullOutcome[] = [];
  for (const candidate of candidates) {
    try {
      const claimedAt = clock();
      const [claim] = await db
        .update(usageSources)
        .set({ pullingUntil: new Date(claimedAt.getTime() + CLAIM_MS) })
        .where(
          and(
            eq(usageSources.id, candidate.id),
            eq(usageSources.enabled, true),
            due(claimedAt),
            pullable,
            or(isNull(usageSources.pullingUntil), lt(usageSources.pullingUntil, claimedAt)),
          ),
        )
        // As text: a timestamp read into a Date loses its microseconds and would never compare equal.
        .returning({ requested: sql<string | null>`${usageSources.pullRequestedAt}::text`, until: sql<string>`${usageSources.pullingUntil}::text` });
      if (!claim) continue;
      let result: PullResult | undefined;
      let error: string | undefined;
      try {
        result = await pullSource(db, candidate.id, { ...opts, now: claimedAt });
      } catch (e) {
        error = failureText(e);
      }
      const pulledAt = clock();
      // A "Pull now" asked while this pull ran is kept (requestPull always moves the time on): the
      // source is pulled again next round. One asked before the claim is served by this pull.
      const served =
        claim.requested === null
          ? sql`${usageSources.pullRequestedAt}`
          : sql`case when ${usageSources.pullRequestedAt} <= ${claim.requested}::timestamptz then null else ${usageSources.pullRequestedAt} end`;
      // Recorded and released only while the claim is still ours: had it expired and another worker
      // claimed the source, that worker's pull is the one to record (and its claim is not ours to clear).
      const [recorded] = await db
        .update(usageSources)
        .set({
          lastPullAt: pulledAt,
          ...(result ? { lastPullOk: pulledAt, lastPullError: null } : { lastPullError: error ?? "the pull failed" }),
          pullingUntil: null,
          pullRequestedAt: served,
        })
        .where(and(eq(usageSources.id, candidate.id), sql`${usageSources.pullingUntil} = ${claim.until}::timestamptz`))
        .returning({ id: usageSources.id });
      if (!recorded) {
        outcomes.push({
          sourceId: candidate.id,
          name: candidate.name,
          ok: false,
          ...(result ? { result } : {}),
          error: `the claim on '${candidate.name}' expired before this pull ended and another worker holds the source: this pull's outcome was not recorded on it`,
        });
        continue;
      }
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
      outcomes.push(
        result
          ? { sourceId: candidate.id, name: candidate.name, ok: true, result }
          : { sourceId: candidate.id, name: candidate.name, ok: false, error: error ?? "the pull failed" },
      );
    } catch (e) {
      outcomes.push({ sourceId: candidate.id, name: candidate.name, ok: false, error: failureText(e) });
    }
  }
  return outcomes;
}
