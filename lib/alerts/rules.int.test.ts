import { and, eq, like, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alerts, ceilings, refusals, workerHeartbeats } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { AuditActor } from "@/lib/audit/record";
import { adjustCeiling, killEndpoint, restoreEndpoint } from "@/lib/ceilings";
import { setupControl } from "@/lib/control/context";
import { readCeiling } from "@/lib/ceilings/test-fixtures";
import { reserve, settleReservation, releaseReservation } from "@/lib/enforcement";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { fireQuotaDigest } from "./digest";
import { raiseSilentWorkers, readWorkerHealth } from "./heartbeat";
import { findDrift, reconcileCounters } from "./reconcile";
import { fireAdjustmentAlerts, fireKillRestoreAlerts, fireRefusalSpikes, fireUnavailableBursts } from "./rules";
import { insertCounters } from "@/lib/counters/insert";

const actor: AuditActor = { type: "staff", email: "ops@example.com" };

describe.skipIf(skipWithoutDatabase())("alert rules fire once each, on real Postgres", () => {
  const t = useTestDatabase("alert_rules", { max: 4 });

  const alertsOf = (endpointId: number, kind: string) =>
    t.db
      .select()
      .from(alerts)
      .where(and(eq(alerts.endpointId, endpointId), eq(alerts.kind, kind)));

  it("kill and restore each alert once per endpoint, however many ceilings they change", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100 },
        { metric: "calls", scope: "global", window: "utc_day", value: 50 },
      ],
    });
    await killEndpoint(t.db, { endpointKey: e.key, actor, reason: "bill spike" });
    expect(await fireKillRestoreAlerts(t.db)).toBe(1);
    expect(await fireKillRestoreAlerts(t.db)).toBe(0);
    const [kill] = await alertsOf(e.endpointId, "kill");
    expect(kill?.message).toBe(`${e.key} was killed by ops@example.com: 2 ceiling(s) set to 0, every call is refused (bill spike)`);

    await restoreEndpoint(t.db, { endpointKey: e.key, actor });
    await killEndpoint(t.db, { endpointKey: e.key, actor, reason: "again" });
    expect(await fireKillRestoreAlerts(t.db)).toBe(2);
    expect(await alertsOf(e.endpointId, "kill")).toHaveLength(2);
    expect(await alertsOf(e.endpointId, "restore")).toHaveLength(1);
  });

  it("alerts on an adjustment of the factor or more, up or down, and not below it", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const id = e.ceilingIds[0] ?? 0;
    await t.db.update(ceilings).set({ maxValue: 100_000 }).where(eq(ceilings.id, id));
    const adjust = async (input: string) => {
      const c = await readCeiling(t.db, id);
      // The raises stand for approved ones (change control); the rule reads the ceiling.adjust events.
      await adjustCeiling(t.db, {
        ceilingId: id,
        input,
        expectedVersion: c.version,
        actor,
        reason: "test",
        confirm: input,
        changeControl: setupControl("test"),
      });
    };
    await adjust("400"); // 4x: below the factor
    expect(await fireAdjustmentAlerts(t.db, 5)).toBe(0);
    await adjust("2000"); // 5x
    await adjust("300"); // lowered 6.7x
    expect(await fireAdjustmentAlerts(t.db, 5)).toBe(2);
    expect(await fireAdjustmentAlerts(t.db, 5)).toBe(0);
    const fired = (await alertsOf(e.endpointId, "adjustment")).map((a) => a.message).sort();
    expect(fired).toEqual([
      `${e.key}: ceiling ${id} lowered from 2000 to 300 by ops@example.com (test)`,
      `${e.key}: ceiling ${id} raised from 400 to 2000 by ops@example.com (test)`,
    ]);
  });

  async function addRefusals(key: string, endpointId: number, gate: "unavailable" | "throttle" | "cooldown" | "ceiling", count: number, at = sql`now()`) {
    await t.db.insert(refusals).values({
      endpointId,
      endpointKey: key,
      gate,
      caller: `acct_${gate}_${count}`,
      amount: 1,
      count,
      bucket: sql`to_timestamp(floor(extract(epoch from now()) / 10) * 10 + ${Math.random()})`,
      at,
    });
  }

  it("a burst of unavailable refusals alerts once; fewer than N, or older than M minutes, do not", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const settings = { unavailableBurst: 20, unavailableWindowMinutes: 5 };
    await addRefusals(e.key, e.endpointId, "unavailable", 15, sql`now() - interval '10 minutes'`);
    await addRefusals(e.key, e.endpointId, "unavailable", 19);
    expect(await fireUnavailableBursts(t.db, settings)).toBe(0);
    await addRefusals(e.key, e.endpointId, "unavailable", 1);
    expect(await fireUnavailableBursts(t.db, settings)).toBe(1);
    expect(await fireUnavailableBursts(t.db, settings)).toBe(0);
    const [a] = await alertsOf(e.endpointId, "fail_closed");
    expect(a?.details).toMatchObject({ refusals: 20, byGate: { unavailable: 20 } });
  });

  it("a spike of throttle and cooldown refusals alerts once per endpoint and hour", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const settings = { refusalSpike: 100, refusalSpikeWindowMinutes: 5 };
    await addRefusals(e.key, e.endpointId, "throttle", 60);
    await addRefusals(e.key, e.endpointId, "ceiling", 500);
    expect(await fireRefusalSpikes(t.db, settings)).toBe(0);
    await addRefusals(e.key, e.endpointId, "cooldown", 40);
    expect(await fireRefusalSpikes(t.db, settings)).toBe(1);
    await addRefusals(e.key, e.endpointId, "throttle", 500);
    expect(await fireRefusalSpikes(t.db, settings)).toBe(0);
    const [a] = await alertsOf(e.endpointId, "refusal_spike");
    expect(a?.details).toMatchObject({ refusals: 100, byGate: { throttle: 60, cooldown: 40 } });
  });

  it("reconcile: counters that agree with their reservations raise nothing; a tampered counter alerts once", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 1000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 1000 },
      ],
    });
    const ds = await Promise.all(Array.from({ length: 12 }, (_, i) => reserve(t.db, { endpoint: e.key, amount: 10, caller: `acct_${i % 3}` })));
    const ids = ds.flatMap((d) => (d.status === "granted" ? [d.reservationId] : []));
    expect(ids).toHaveLength(12);
    // Settled below, above (an overrun) and released: each keeps what it should.
    await settleReservation(t.db, { reservationId: ids[0] ?? "", actual: 4 });
    await settleReservation(t.db, { reservationId: ids[1] ?? "", actual: 13 });
    await releaseReservation(t.db, { reservationId: ids[2] ?? "" });
    const mine = async () => (await findDrift(t.db)).filter((d) => d.endpointId === e.endpointId);
    expect(await mine()).toEqual([]);

    const [units] = e.ceilingIds;
    await t.db.execute(sql`update counters set held = held + 5 where limit_id = (select limit_id from ceilings where id = ${units ?? 0}) and scope_key = ''`);
    const drift = await mine();
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ ceilingId: units, held: 95, heldByReservations: 90, settled: 17, settledByReservations: 17 });
    await reconcileCounters(t.db);
    await reconcileCounters(t.db);
    expect(await alertsOf(e.endpointId, "drift")).toHaveLength(1);
  });

  it("reconcile compares settled only where every grant has its reservation row", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const d = await reserve(t.db, { endpoint: e.key, amount: 10 });
    if (d.status !== "granted") throw new Error("expected a grant");
    await settleReservation(t.db, { reservationId: d.reservationId, actual: 10 });
    const id = e.ceilingIds[0] ?? 0;
    const mine = async () => (await findDrift(t.db)).filter((x) => x.endpointId === e.endpointId);
    // Settled spend with no reservation row is drift while the grant count says every grant has one...
    await t.db.execute(sql`update counters set settled = settled + 50 where limit_id = (select limit_id from ceilings where id = ${id})`);
    expect(await mine()).toHaveLength(1);
    // ...and history (imported or seeded, 5 more grants than rows) where it does not.
    await t.db.execute(sql`update counters set reservations = reservations + 5 where limit_id = (select limit_id from ceilings where id = ${id})`);
    expect(await mine()).toEqual([]);
  });

  it("a silent worker is shown as silent and alerted once per silence", async () => {
    const name = `w-${Date.now()}`;
    await t.db.insert(workerHeartbeats).values({ name, beatAt: sql`now() - interval '5 minutes'`, detail: "{}" });
    await t.db.insert(workerHeartbeats).values({ name: `${name}-alive`, beatAt: sql`now()`, detail: "{}" });
    const health = await readWorkerHealth(t.db, { silentAfterSeconds: 60 });
    expect(health.find((h) => h.name === name)?.state).toBe("silent");
    expect(health.find((h) => h.name === `${name}-alive`)?.state).toBe("running");
    expect(await raiseSilentWorkers(t.db, { silentAfterSeconds: 60, except: name })).toBe(0);
    expect(await raiseSilentWorkers(t.db, { silentAfterSeconds: 60 })).toBe(1);
    expect(await raiseSilentWorkers(t.db, { silentAfterSeconds: 60 })).toBe(0);
    // It beat again and went silent again: a new silence, a new alert.
    await t.db
      .update(workerHeartbeats)
      .set({ beatAt: sql`now() - interval '2 minutes'` })
      .where(eq(workerHeartbeats.name, name));
    expect(await raiseSilentWorkers(t.db, { silentAfterSeconds: 60 })).toBe(1);
    expect(
      await t.db
        .select()
        .from(alerts)
        .where(like(alerts.dedupeKey, `worker_silent:${name}:%`)),
    ).toHaveLength(2);
  });

  it("the daily digest counts accounts that hit a per-caller quota yesterday, once per day", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100_000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 50 },
      ],
    });
    const [globalId, callerId] = e.ceilingIds;
    const now = new Date();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const yesterday = new Date(today.getTime() - 86_400_000);
    const at = new Date(yesterday.getTime() + 3_600_000);
    const refused = (caller: string, ceilingId: number | undefined, when: Date) =>
      t.db
        .insert(refusals)
        .values({ endpointId: e.endpointId, endpointKey: e.key, ceilingId, gate: "ceiling", caller, amount: 5, count: 3, bucket: when, at: when });
    await refused("acct_a", callerId, at);
    await refused("acct_b", callerId, at);
    await refused("acct_b", callerId, new Date(at.getTime() + 60_000));
    await refused("acct_c", globalId, at); // the global ceiling: not a quota
    await refused("acct_d", callerId, new Date(today.getTime() + 1000)); // today: not yet
    // acct_e reached its 50 exactly without being refused.
    await insertCounters(t.db, [
      { ceilingId: callerId ?? 0, scopeKey: "acct_e", windowStart: yesterday, windowEnd: today, settled: 50, reservations: 5 },
      { ceilingId: callerId ?? 0, scopeKey: "acct_f", windowStart: yesterday, windowEnd: today, settled: 49, reservations: 5 },
    ]);
    const first = await fireQuotaDigest(t.db, { now });
    const mine = first.digest.endpoints.find((x) => x.endpointId === e.endpointId);
    expect(mine).toMatchObject({ accounts: 3, refusals: 9 });
    expect(first.fired).toBe(true);
    const again = await fireQuotaDigest(t.db, { now: new Date(now.getTime() + 60_000) });
    expect(again.fired).toBe(false);
    expect(
      await t.db
        .select()
        .from(alerts)
        .where(eq(alerts.dedupeKey, `digest:${yesterday.toISOString().slice(0, 10)}`)),
    ).toHaveLength(1);
  });
});
