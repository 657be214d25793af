import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { alerts, reconciliationDays, usageSources, workerHeartbeats } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Db } from "@/db/client";
import { jobs as loopJobs, type Job } from "@/lib/worker/jobs";
import { runWorker, runWorkerOnce } from "@/lib/worker/loop";
import { usageSettings, type WorkerSettings } from "@/lib/worker/settings";
import { addRule, makeSource, pricedEndpoint, reservation, writeDays } from "./compare-fixtures";
import { runUsageSources, type PullDueSources } from "./run";
import type { PullResult } from "./types";

// The worker's usage-sources job with a stand-in for lib/reconciliation/pull.ts (its own tests
// cover the pull): the stand-in writes a day as a pull would and calls afterPull, as pullDueSources
// promises to.

type PullCall = Parameters<PullDueSources>[1];
const calls: PullCall[] = [];
let plan: (db: Db, opts: PullCall) => Promise<{ sourceId: number; name: string; ok: boolean; error?: string }[]> = async () => [];

vi.mock("@/lib/reconciliation/pull", () => ({
  pullDueSources: (db: Db, opts: PullCall) => {
    calls.push(opts);
    return plan(db, opts);
  },
}));

const CENT = 10_000;
// The pull lane's jobs and the loop's, in the order the tests name them.
const loadJobs = async (): Promise<Job[]> => {
  const m = await import("@/lib/worker/jobs");
  return [...m.pullJobs, ...m.jobs];
};

const settings: WorkerSettings = {
  name: "usage-job-test",
  intervalMs: 50,
  fastIntervalMs: 50,
  silentAfterSeconds: 60,
  reconcileEveryMs: 3_600_000,
  digestEveryMs: 3_600_000,
  purgeEveryMs: 3_600_000,
  refusalRetentionDays: 90,
  rules: { unavailableBurst: 1000, unavailableWindowMinutes: 5, refusalSpike: 100_000, refusalSpikeWindowMinutes: 5, adjustFactor: 1000 },
  delivery: { retryBaseMs: 5, retryCapMs: 20, maxAttempts: 5, timeoutMs: 2000, egress: { allowHosts: ["127.0.0.1"] } },
  usage: {
    secrets: (name) => (name === "CEILINGS_SECRET_TEST" ? "k" : undefined),
    egress: { allowHosts: ["127.0.0.1"] },
    recompareEveryMs: 600_000,
    retryCapMs: 1000,
  },
};

describe.skipIf(skipWithoutDatabase())("the usage-sources job", () => {
  const t = useTestDatabase("recon_usage_job");

  it("pulls through pullDueSources with the worker's secrets and egress, and compares each pulled source's days", async () => {
    const jobs = await loadJobs();
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "m", { endpointId: e.id });
    const day = "2026-11-10";
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-10T10:00:00Z"), state: "settled", amount: 900, money: 900 * CENT });
    plan = async (db, opts) => {
      await writeDays(db, sourceId, [day], [{ day, item: "m", units: 1000, costMicros: null, endpointId: e.id }]);
      const result: PullResult = { sourceId, days: [day], rows: 1, unmapped: 0 };
      await opts.afterPull?.(result);
      return [
        { sourceId, name: "ok source", ok: true },
        { sourceId: 999, name: "broken source", ok: false, error: "HTTP 401: invalid key" },
      ];
    };

    const job = jobs.filter((j) => j.name === "usage-sources" || j.name === "usage-recompare");
    expect(job.map((j) => j.name)).toEqual(["usage-sources", "usage-recompare"]);
    // Pulls run in a lane of their own, never in the loop that delivers and beats.
    expect(loopJobs.some((j) => j.name === "usage-sources")).toBe(false);
    const outcomes = await runWorkerOnce(t.db, settings, undefined, job);
    expect(outcomes[0]).toEqual({ job: "usage-sources", ok: true, result: { pulled: 1, failed: ["broken source: HTTP 401: invalid key"], compared: 1 } });
    expect(outcomes[1]).toMatchObject({ job: "usage-recompare", ok: true });

    const call = calls.at(-1);
    expect(call?.secrets("CEILINGS_SECRET_TEST")).toBe("k");
    expect(call?.egress.allowHosts).toEqual(["127.0.0.1"]);
    expect(call?.retryCapMs).toBe(1000);
    expect(await t.db.select().from(reconciliationDays).where(eq(reconciliationDays.endpointId, e.id))).toHaveLength(1);
    expect(
      await t.db
        .select()
        .from(alerts)
        .where(eq(alerts.dedupeKey, `reconciliation:endpoint:${e.id}:${day}`)),
    ).toHaveLength(1);
  });

  it("compares each pulled source's days right after its pull, with the settings it was given", async () => {
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "m", { endpointId: e.id });
    const day = "2026-11-09";
    await reservation(t.db, { endpointId: e.id, at: new Date("2026-11-09T10:00:00Z"), state: "settled", amount: 900, money: 900 * CENT });
    const seen: PullCall[] = [];
    const pull: PullDueSources = async (db, opts) => {
      seen.push(opts);
      await writeDays(db, sourceId, [day], [{ day, item: "m", units: 1000, costMicros: null, endpointId: e.id }]);
      await opts.afterPull?.({ sourceId, days: [day], rows: 1, unmapped: 0 });
      return [
        { sourceId, name: "ok source", ok: true },
        { sourceId: 999, name: "broken source", ok: false, error: "HTTP 401: invalid key" },
      ];
    };
    const now = new Date("2026-11-12T00:00:00Z");
    const result = await runUsageSources(t.db, { now, settings: usageSettings(settings), pull });
    expect(result).toEqual({ pulled: 1, failed: ["broken source: HTTP 401: invalid key"], compared: 1 });
    expect(seen[0]?.now).toBe(now);
    expect(seen[0]?.secrets("CEILINGS_SECRET_TEST")).toBe("k");
    expect(seen[0]?.egress.allowHosts).toEqual(["127.0.0.1"]);
    expect(seen[0]?.retryCapMs).toBe(1000);
    expect(
      await t.db
        .select()
        .from(alerts)
        .where(eq(alerts.dedupeKey, `reconciliation:endpoint:${e.id}:${day}`)),
    ).toHaveLength(1);
  });

  it("a comparison that fails does not undo the pull: the other sources go on and the job fails after them", async () => {
    const sourceId = await makeSource(t.db);
    const after: number[] = [];
    // A database error is what fails a comparison (a source that vanished compares to nothing).
    const broken = new Proxy(t.db, {
      // (The comparison reads inside a transaction of its own, under the source's lock.)
      get: (target, prop, receiver) =>
        prop === "select" || prop === "transaction"
          ? () => {
              throw new Error("database went away");
            }
          : Reflect.get(target, prop, receiver),
    });
    const pull: PullDueSources = async (_db, opts) => {
      await opts.afterPull?.({ sourceId, days: ["2026-11-10"], rows: 0, unmapped: 0 });
      after.push(sourceId);
      await opts.afterPull?.({ sourceId: sourceId + 1, days: ["2026-11-10"], rows: 0, unmapped: 0 });
      after.push(sourceId + 1);
      return [{ sourceId, name: "s", ok: true }];
    };
    await expect(runUsageSources(broken, { now: new Date(), settings: usageSettings(settings), pull })).rejects.toThrow(
      `comparison failed after a pull: source #${sourceId}: database went away; source #${sourceId + 1}: database went away`,
    );
    expect(after).toEqual([sourceId, sourceId + 1]);
    // Staff see it on the source: its pull went well, its comparison did not.
    const [source] = await t.db.select().from(usageSources).where(eq(usageSources.id, sourceId));
    expect(source?.lastPullError).toMatch(/^pulled, but the comparison failed: .*database went away/);
  });

  it("the job runs in the worker loop and its heartbeat is written", async () => {
    const jobs = await loadJobs();
    const e = await pricedEndpoint(t.db);
    const sourceId = await makeSource(t.db);
    await addRule(t.db, sourceId, "m", { endpointId: e.id });
    let seen = 0;
    plan = async (db, opts) => {
      await opts.afterPull?.({ sourceId: -1, days: ["2026-11-10"], rows: 0, unmapped: 0 });
      await writeDays(db, sourceId, ["2026-11-10"], []);
      await opts.afterPull?.({ sourceId, days: ["2026-11-10"], rows: 0, unmapped: 0 });
      seen += 1;
      return [{ sourceId, name: "s", ok: true }];
    };
    const outcomes = await runWorkerOnce(
      t.db,
      settings,
      undefined,
      jobs.filter((j) => j.name === "usage-sources"),
    );
    expect(outcomes[0]).toMatchObject({ ok: true, result: { pulled: 1, compared: 1 } });
    expect(seen).toBe(1);
    const [beat] = await t.db.select().from(workerHeartbeats).where(eq(workerHeartbeats.name, settings.name));
    expect(beat).toBeDefined();
  });

  it("a provider that does not answer holds back neither the loop's heartbeat nor its deliveries: pulls run in their own lane", async () => {
    let release: () => void = () => undefined;
    const hanging = new Promise<void>((resolve) => (release = resolve));
    let pulls = 0;
    plan = async () => {
      pulls += 1;
      await hanging;
      return [];
    };
    const beats = async () => (await t.db.select().from(workerHeartbeats).where(eq(workerHeartbeats.name, "usage-lane-test")))[0]?.beatAt?.getTime() ?? 0;
    const stop = new AbortController();
    const running = runWorker(t.db, { ...settings, name: "usage-lane-test", intervalMs: 100 }, stop.signal);
    try {
      await expect.poll(() => pulls, { timeout: 5000 }).toBe(1);
      // A loop's first pass runs every job that is due; beside a full test run on two cores it has
      // taken more than 5 s (2026-12-06). The waits are long, not the point: a pull that held the
      // loop back would leave the heartbeat unwritten however long they were.
      await expect.poll(beats, { timeout: 20_000 }).toBeGreaterThan(0);
      const first = await beats();
      // The loop (its deliveries, then its heartbeat) keeps going while the pull hangs, and the lane
      // starts no second pull beside the first.
      await expect.poll(beats, { timeout: 20_000 }).toBeGreaterThan(first);
      expect(pulls).toBe(1);
    } finally {
      release();
      stop.abort();
      await running;
    }
  }, 60_000);

  it("without usage settings, pulls reach no inside host and read secrets from the environment", () => {
    const { usage: _omit, ...rest } = settings;
    const s = usageSettings(rest);
    expect(s.egress.allowHosts).toEqual([]);
    expect(s.recompareEveryMs).toBe(600_000);
  });
});
