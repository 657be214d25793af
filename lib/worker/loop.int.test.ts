import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts, reservations, workerHeartbeats } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { startReceiver } from "@/lib/alerts/test-receiver";
import { killEndpoint } from "@/lib/ceilings";
import { reserve } from "@/lib/enforcement";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { jobs } from "./jobs";
import { newWorkerState, runFastLaneOnce, runWorker, runWorkerOnce } from "./loop";
import type { WorkerSettings } from "./settings";

const settings = (name: string): WorkerSettings => ({
  name,
  intervalMs: 50,
  fastIntervalMs: 50,
  silentAfterSeconds: 60,
  reconcileEveryMs: 0,
  digestEveryMs: 0,
  purgeEveryMs: 0,
  refusalRetentionDays: 90,
  rules: { unavailableBurst: 20, unavailableWindowMinutes: 5, refusalSpike: 500, refusalSpikeWindowMinutes: 5, adjustFactor: 5 },
  delivery: { retryBaseMs: 5, retryCapMs: 20, maxAttempts: 5, timeoutMs: 2000, egress: { allowHosts: ["127.0.0.1"] } },
});

describe.skipIf(skipWithoutDatabase())("the worker loop", () => {
  const t = useTestDatabase("worker_loop", { max: 4 });

  it("sweeps expired reservations, fires the kill alert and delivers it in one loop, then beats", async () => {
    const receiver = await startReceiver();
    try {
      await t.db.insert(alertDestinations).values({ name: "hook", kind: "webhook", target: receiver.url, signingSecret: "x".repeat(32), createdBy: "test" });
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
      const d = await reserve(t.db, { endpoint: e.key, amount: 5, ttlSeconds: 1 });
      if (d.status !== "granted") throw new Error("expected a grant");
      await t.db
        .update(reservations)
        .set({ expiresAt: sql`now() - interval '1 second'` })
        .where(eq(reservations.id, d.reservationId));
      await killEndpoint(t.db, { endpointKey: e.key, actor: { type: "cli", name: "root" }, reason: "test" });

      const outcomes = await runWorkerOnce(t.db, settings("loop-a"));
      expect(outcomes.map((o) => o.job)).toEqual(jobs.map((j) => j.name));
      expect(outcomes.every((o) => o.ok)).toBe(true);
      const [r] = await t.db.select().from(reservations).where(eq(reservations.id, d.reservationId));
      expect(r?.state).toBe("expired");
      const fired = await t.db.select().from(alerts).where(eq(alerts.endpointId, e.endpointId));
      expect(fired.map((a) => a.kind).sort()).toEqual(["expiry", "kill"]);
      expect(receiver.accepted()).toHaveLength(2);
      const delivered = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.state, "delivered"));
      expect(delivered).toHaveLength(2);
      const [beat] = await t.db.select().from(workerHeartbeats).where(eq(workerHeartbeats.name, "loop-a"));
      expect(beat?.detail).toContain('"failed":[]');
    } finally {
      await receiver.close();
    }
  });

  it("a failing job is recorded in the heartbeat and does not stop the jobs after it", async () => {
    const ran: string[] = [];
    const outcomes = await runWorkerOnce(t.db, settings("loop-b"), newWorkerState(), [
      { name: "broken", everyMs: () => 0, run: async () => Promise.reject(new Error("boom")) },
      { name: "next", everyMs: () => 0, run: async () => (ran.push("next"), {}) },
    ]);
    expect(outcomes.map((o) => [o.job, o.ok])).toEqual([
      ["broken", false],
      ["next", true],
    ]);
    expect(ran).toEqual(["next"]);
    const [beat] = await t.db.select().from(workerHeartbeats).where(eq(workerHeartbeats.name, "loop-b"));
    expect(beat?.detail).toContain("broken: boom");
  });

  it("a fast lane failure rides on the loop's next heartbeat, until the job succeeds again", async () => {
    const state = newWorkerState();
    let fail = true;
    const lane = [{ name: "schedules", everyMs: () => 0, run: async () => (fail ? Promise.reject(new Error("db gone")) : {}) }];
    expect((await runFastLaneOnce(t.db, settings("loop-f"), state, lane)).map((o) => o.ok)).toEqual([false]);
    await runWorkerOnce(t.db, settings("loop-f"), state, []);
    const beat = async () => (await t.db.select().from(workerHeartbeats).where(eq(workerHeartbeats.name, "loop-f")))[0]?.detail;
    expect(await beat()).toContain("fast schedules: db gone");
    fail = false;
    await runFastLaneOnce(t.db, settings("loop-f"), state, lane);
    await runWorkerOnce(t.db, settings("loop-f"), state, []);
    expect(await beat()).toContain('"failed":[]');
  });

  it("runs slow jobs only when due", async () => {
    const state = newWorkerState();
    let runs = 0;
    const job = { name: "hourly", everyMs: () => 3_600_000, run: async () => (runs++, {}) };
    await runWorkerOnce(t.db, settings("loop-c"), state, [job]);
    await runWorkerOnce(t.db, settings("loop-c"), state, [job]);
    expect(runs).toBe(1);
  });

  it("a worker starting after a silence raises it, its own included, then keeps beating", async () => {
    await t.db.insert(workerHeartbeats).values({ name: "loop-d", beatAt: sql`now() - interval '10 minutes'` });
    const controller = new AbortController();
    const running = runWorker(t.db, settings("loop-d"), controller.signal);
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    await running;
    const raised = await t.db.select().from(alerts).where(eq(alerts.kind, "worker_silent"));
    expect(raised.filter((a) => a.details?.worker === "loop-d")).toHaveLength(1);
    const [beat] = await t.db
      .select({ age: sql<number>`extract(epoch from now() - ${workerHeartbeats.beatAt})`.mapWith(Number) })
      .from(workerHeartbeats)
      .where(eq(workerHeartbeats.name, "loop-d"));
    expect(beat?.age).toBeLessThan(5);
  });
});
