import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, scheduledChanges } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint, startFixtureProcess } from "@/lib/enforcement/test-fixtures";
import { createSchedule } from "./schedules";
import { staffMember } from "./test-fixtures";

// Three workers, each its own OS process with its own pool, running the real loop (every 5 s, as
// WORKER_INTERVAL_MS defaults) with its fast lane: every schedule due applies exactly once, within
// 5 s of its time.

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skipWithoutDatabase())("schedules with three workers", () => {
  const t = useTestDatabase("schedule_workers", { max: 4 });

  it("apply each due schedule exactly once, within 5 s of its time", async () => {
    const admin = await staffMember(t.db, "admin");
    const endpoints = await Promise.all(
      Array.from({ length: 5 }, () => makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] })),
    );
    const workers = ["w1", "w2", "w3"].map((name) => startFixtureProcess<{ name: string }>(path.join(__dirname, "worker.fixture.ts"), [t.url, name]));
    const ids: number[] = [];
    let runAt = new Date();
    try {
      await Promise.all(workers.map((w) => w.ready));
      // All at the same time, so the three claim at once; the last one is daily.
      runAt = new Date(Date.now() + 2_500);
      for (const [i, e] of endpoints.entries()) {
        const daily = i === endpoints.length - 1;
        const s = await createSchedule(t.db, {
          endpointKey: e.key,
          action: "kill",
          repeat: daily ? "daily" : "once",
          ...(daily ? { timeOfDay: "00:00" } : { runAt }),
          reason: "three workers",
          by: admin,
        });
        if (daily) await t.db.update(scheduledChanges).set({ runAt }).where(eq(scheduledChanges.id, s.id));
        ids.push(s.id);
      }
      const deadline = runAt.getTime() + 8_000;
      while (Date.now() < deadline) {
        const [row] = await t.db
          .select({ n: sql<number>`count(*)::int` })
          .from(scheduledChanges)
          .where(and(sql`${scheduledChanges.id} in ${ids}`, sql`${scheduledChanges.runs} > 0`));
        if (row?.n === ids.length) break;
        await pause(100);
      }
      // Time for a second claim by a slower worker, which must find nothing.
      await pause(2_500);
    } finally {
      for (const w of workers) w.send();
    }
    await Promise.all(workers.map((w) => w.done));

    for (const [i, id] of ids.entries()) {
      const [s] = await t.db.select().from(scheduledChanges).where(eq(scheduledChanges.id, id));
      expect(s?.runs).toBe(1);
      expect(s?.state).toBe(i === ids.length - 1 ? "scheduled" : "done");
      const byId = sql`${auditEvents.details}->>'scheduleId' = ${String(id)}`;
      const applies = await t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, "schedule.apply"), byId));
      const kills = await t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, "ceiling.kill"), byId));
      expect(applies).toHaveLength(1);
      expect(kills).toHaveLength(1);
      const late = (kills[0]?.at.getTime() ?? Infinity) - runAt.getTime();
      expect(late).toBeGreaterThanOrEqual(-50);
      expect(late).toBeLessThan(5_000);
    }
    const [daily] = await t.db
      .select()
      .from(scheduledChanges)
      .where(eq(scheduledChanges.id, ids[ids.length - 1] ?? 0));
    expect(daily?.runAt.getTime()).toBe(runAt.getTime() + 86_400_000);
  }, 40_000);
});
