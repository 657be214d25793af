import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { usageSources } from "@/db/schema";
import type { EgressPolicy } from "@/lib/alerts/egress";
import type { SecretLookup } from "@/lib/alerts/email";
import { DomainError } from "@/lib/errors";
import { describeError, logError } from "@/lib/log/redact";
import { compareSourceDays } from "./compare";
import type { PullResult } from "./types";

// The worker's usage-sources job: pull what is due (lib/reconciliation/pull.ts claims each source,
// so two workers never pull one at once) and compare each pulled source's days right after its
// pull. The pull is passed in so the job is tested without a provider.

export type UsageSourceSettings = {
  /** Reads the admin key or auth token a source's credential_ref names: the worker's environment. */
  secrets: SecretLookup;
  /** Which provider hosts may be reached: inside addresses only for USAGE_SOURCE_ALLOW_HOSTS. */
  egress: EgressPolicy;
  /** How long a pull waits on a provider's Retry-After at most. */
  retryCapMs?: number;
  /** How often days still holding reservations are compared again. */
  recompareEveryMs: number;
};

type PullOutcome = { sourceId: number; name: string; ok: boolean; error?: string };
export type PullDueSources = (
  db: Db,
  opts: { now: Date; secrets: SecretLookup; egress: EgressPolicy; retryCapMs?: number; afterPull?: (r: PullResult) => Promise<void> },
) => Promise<PullOutcome[]>;

export type UsageRunResult = { pulled: number; failed: string[]; compared: number };

/**
 * A comparison that failed after a good pull, on the source where staff look (last_pull_error):
 * the pull recorded success a moment before, and the days it wrote are not compared. A failure to
 * record it is logged; the job fails anyway.
 */
export async function recordCompareFailure(db: Db, sourceId: number, error: unknown): Promise<void> {
  const text = `pulled, but the comparison failed: ${error instanceof DomainError ? error.message : describeError(error)}`;
  try {
    await db
      .update(usageSources)
      .set({ lastPullError: text.length > 1000 ? `${text.slice(0, 1000)}…` : text })
      .where(eq(usageSources.id, sourceId));
  } catch (e) {
    logError(`reconciliation: recording source #${sourceId}'s failed comparison failed`, e);
  }
}

/**
 * Pulls the due sources and compares each one's days as soon as it is pulled. A pull that fails is
 * recorded on its source by the pull; a comparison that fails does not undo its pull: it is logged
 * and recorded on its source ("pulled, but the comparison failed: …"), the other sources go on,
 * and the job then fails so the worker's heartbeat says so.
 */
export async function runUsageSources(db: Db, p: { now: Date; settings: UsageSourceSettings; pull: PullDueSources }): Promise<UsageRunResult> {
  let compared = 0;
  const compareErrors: string[] = [];
  const outcomes = await p.pull(db, {
    now: p.now,
    secrets: p.settings.secrets,
    egress: p.settings.egress,
    ...(p.settings.retryCapMs === undefined ? {} : { retryCapMs: p.settings.retryCapMs }),
    afterPull: async (r) => {
      try {
        compared += (await compareSourceDays(db, { sourceId: r.sourceId, days: r.days, now: p.now })).length;
      } catch (error) {
        logError(`reconciliation: comparing source #${r.sourceId} failed`, error);
        compareErrors.push(`source #${r.sourceId}: ${error instanceof Error ? error.message : String(error)}`);
        await recordCompareFailure(db, r.sourceId, error);
      }
    },
  });
  if (compareErrors.length > 0) throw new Error(`comparison failed after a pull: ${compareErrors.join("; ")}`);
  return { pulled: outcomes.filter((o) => o.ok).length, failed: outcomes.filter((o) => !o.ok).map((o) => `${o.name}: ${o.error ?? "failed"}`), compared };
}
