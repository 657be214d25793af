import { deliverDueAlerts, fireQuotaDigest, raiseSilentWorkers, reconcileCounters, runAlertRules } from "@/lib/alerts";
import type { Db } from "@/db/client";
import { expireChangeRequests } from "@/lib/changes";
import { endRaises } from "@/lib/changes/raise-ends";
import { expireOverrides } from "@/lib/limits/overrides";
import { buildWhatIfDays, WHAT_IF_DAYS_EVERY_MS } from "@/lib/changes/what-if-days";
import { runDueSchedules } from "@/lib/changes/schedule-run";
import { buildCallerTotals, CALLER_TOTALS_EVERY_MS } from "@/lib/counters/caller-totals";
import { CLOSED_EVERY_MS, countClosedWindows, countOpenWindows, OPEN_EVERY_MS } from "@/lib/counters/window-totals";
import { expireReservations } from "@/lib/enforcement";
import { analyzeYoungTables } from "@/lib/enforcement/young-tables";
import { metrics } from "@/lib/metrics";
import { recompareRecent } from "@/lib/reconciliation/compare";
import { LEDGER_DAYS_EVERY_MS, rollUpLedgerDays } from "@/lib/reconciliation/ledger-days";
import { pullDueSources } from "@/lib/reconciliation/pull";
import { runUsageSources } from "@/lib/reconciliation/run";
import { purgeOldRefusals } from "@/lib/refusals/purge";
import { pruneThrottleCounters } from "@/lib/throttle";
import { usageSettings, type WorkerSettings } from "./settings";

// The worker's jobs. Each is safe with two workers running it at once: the sweeper and delivery
// claim rows with SKIP LOCKED, and every alert goes through a dedupe key.

export type Job = {
  name: string;
  /** 0: every loop. */
  everyMs: (s: WorkerSettings) => number;
  run: (db: Db, s: WorkerSettings, now: Date) => Promise<Record<string, unknown>>;
};

/**
 * Due schedules, the ends of temporary raises and of overrides: promised within 5 s of their time, so besides
 * every loop they run in the fast lane (runFastLane, every fastIntervalMs). Each claims its rows
 * SKIP LOCKED, so the lane, the loop and other workers never apply one twice; each is one indexed
 * read when nothing is due.
 */
export const fastJobs: Job[] = [
  { name: "schedules", everyMs: () => 0, run: async (db, _s, now) => ({ ...(await runDueSchedules(db, now)) }) },
  { name: "raise-ends", everyMs: () => 0, run: async (db, _s, now) => ({ ...(await endRaises(db, now)) }) },
  // Reservations stop applying an override at its end by themselves; this removes it and logs it.
  { name: "override-ends", everyMs: () => 0, run: async (db) => ({ ...(await expireOverrides(db)) }) },
  // Young reservations and counters analyzed at each doubling, within a second rather than at
  // autovacuum's next round: no session keeps a plan made for a table a fraction of its size (the
  // key probes would scan an endpoint's reservations or a limit's counters; analyze_young_tables.sql).
  { name: "young-tables", everyMs: () => 0, run: async (db) => ({ analyzed: await analyzeYoungTables(db) }) },
];

/**
 * Usage sources (lib/reconciliation): each due or requested source ("Pull now") is claimed, pulled
 * and its days compared; nothing is due most passes, which costs one indexed read. A pull calls a
 * provider over HTTP and may wait up to a minute on a 429's Retry-After, so it runs in a lane of its
 * own beside the loop (runWorker): a slow provider never holds deliveries, the heartbeat or a due
 * schedule back. The alert a comparison fires goes out with the loop's next delivery.
 */
export const pullJobs: Job[] = [
  {
    name: "usage-sources",
    everyMs: () => 0,
    run: async (db, s, now) => ({ ...(await runUsageSources(db, { now, settings: usageSettings(s), pull: pullDueSources })) }),
  },
];

export const jobs: Job[] = [
  ...fastJobs,
  {
    name: "expire",
    everyMs: () => 0,
    run: async (db) => ({ expired: await expireReservations(db) }),
  },
  {
    // The ledger per endpoint and UTC day that readiness reads (lib/reconciliation/ledger-days.ts):
    // one grouped statement over the last 8 days' reservations, on the first loop and every 10
    // minutes after; right after "expire", so the sweeper's expiries are in the count.
    name: "ledger-days",
    everyMs: () => LEDGER_DAYS_EVERY_MS,
    run: async (db, _s, now) => ({ ...(await rollUpLedgerDays(db, now)) }),
  },
  {
    // The what-if's ledger of closed days (lib/changes/what-if-days.ts): each endpoint's day is
    // written once it is over and nothing in it is held, so a what-if reads thirty rows instead of
    // a month of reservations. A run reads at most half a million grants; a backlog drains over runs.
    name: "what-if-days",
    everyMs: () => WHAT_IF_DAYS_EVERY_MS,
    run: async (db, _s, now) => ({ ...(await buildWhatIfDays(db, now)) }),
  },
  {
    // Each account's settled units per per-caller ceiling over the closed windows of the last 30
    // days (lib/counters/caller-totals.ts), which rank the accounts that spent most over 30 days
    // from a few index entries: a ceiling is rebuilt when its range can move, once a day.
    name: "caller-totals",
    everyMs: () => CALLER_TOTALS_EVERY_MS,
    run: async (db, _s, now) => ({ ...(await buildCallerTotals(db, now)) }),
  },
  {
    // Each limit's counters summed per window, which the overview and the histories read instead
    // of summing every account's counter on each load (lib/counters/window-totals.ts): windows that
    // closed, recounted for three days; open windows of many counters, kept fresh.
    name: "window-totals-closed",
    everyMs: () => CLOSED_EVERY_MS,
    run: async (db, _s, now) => ({ ceilings: await countClosedWindows(db, "ceiling", now), budgets: await countClosedWindows(db, "budget", now) }),
  },
  {
    name: "window-totals-open",
    everyMs: () => OPEN_EVERY_MS,
    run: async (db, _s, now) => ({ ceilings: await countOpenWindows(db, "ceiling", now), budgets: await countOpenWindows(db, "budget", now) }),
  },
  {
    name: "rules",
    everyMs: () => 0,
    run: async (db, s) => ({
      ...(await runAlertRules(db, s.rules)),
      silentWorkers: await raiseSilentWorkers(db, { silentAfterSeconds: s.silentAfterSeconds, except: s.name }),
    }),
  },
  {
    name: "reconcile",
    everyMs: (s) => s.reconcileEveryMs,
    run: async (db) => ({ drifted: (await reconcileCounters(db)).length }),
  },
  {
    name: "digest",
    everyMs: (s) => s.digestEveryMs,
    run: async (db, _s, now) => {
      const { fired, digest } = await fireQuotaDigest(db, { now });
      return { day: digest.day, accounts: digest.accounts, fired };
    },
  },
  {
    // Refusal retention (lib/refusals): small batches, a bounded number per loop, so the purge
    // never holds long locks and a backlog drains over a few loops.
    name: "purge-refusals",
    everyMs: (s) => s.purgeEveryMs,
    run: async (db, s) => ({
      purged: await purgeOldRefusals(db, { olderThanDays: s.refusalRetentionDays, batchSize: 5000, maxBatches: 20 }),
    }),
  },
  {
    // Throttle counters are read for two minutes by the gate and an hour by the dashboard; older
    // ones are dead weight on a table every throttled attempt writes to.
    name: "prune-throttle",
    everyMs: (s) => s.purgeEveryMs,
    run: async (db) => ({ pruned: await pruneThrottleCounters(db, { keepMinutes: 120, maxRows: 20_000 }) }),
  },
  {
    // Change requests waiting past their 24 hours become expired (lib/changes/expire.ts); rows an
    // approval holds are skipped, so two workers never wait on each other.
    name: "change-requests",
    everyMs: () => 0,
    run: async (db, _s, now) => ({ expired: await expireChangeRequests(db, now) }),
  },
  {
    // Days compared while reservations were still held become final once those resolve.
    name: "usage-recompare",
    everyMs: (s) => usageSettings(s).recompareEveryMs,
    run: async (db, _s, now) => ({ ...(await recompareRecent(db, now)) }),
  },
  {
    // Last, so alerts fired by the jobs above go out in the same loop.
    name: "deliver",
    everyMs: () => 0,
    run: async (db, s) => {
      const result = await deliverDueAlerts(db, s.delivery);
      const m = metrics("worker");
      for (const [outcome, n] of Object.entries(result)) if (n > 0) m.deliveries.inc({ outcome }, n);
      return { ...result };
    },
  },
];
