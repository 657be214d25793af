import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { batcherFor, reserve, settleReservation } from "@/lib/enforcement";
import { makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import { checkMetricsAccess, metrics, startMetricsServer } from "./index";

// The counters move with real reservations on real Postgres, and the worker's port serves them
// only to loopback or with the token.

/** The value of one sample line of the exposition, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf("}"));
    if (wanted.every((w) => inside.split(",").includes(w))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

describe.skipIf(skipWithoutDatabase())("Prometheus metrics", () => {
  const t = useTestDatabase("metrics", { max: 6 });
  const m = metrics("app");

  it("counts grants, refusals by gate and endpoint, unavailable by reason, overruns, expiries and batch sizes", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 10, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 20 }] });
    const before = await m.registry.metrics();
    const grants = await Promise.all(Array.from({ length: 5 }, () => reserve(t.db, { endpoint: e.key, amount: 4 })));
    expect(grants.filter((g) => g.status === "granted")).toHaveLength(5);
    expect(await reserve(t.db, { endpoint: e.key, amount: 11 })).toMatchObject({ gate: "per_call_max" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1 })).toMatchObject({ gate: "ceiling" });
    const first = grants[0];
    if (first?.status !== "granted") throw new Error("no grant");
    expect(await settleReservation(t.db, { reservationId: first.reservationId, actual: 6 })).toMatchObject({ overrun: true });
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1 })).toMatchObject({ gate: "kill_switch" });

    const dead = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    try {
      batcherFor(dead.db, { deadlineMs: 5000 });
      expect(await reserve(dead.db, { endpoint: e.key, amount: 1 })).toMatchObject({ gate: "unavailable" });
    } finally {
      await dead.close();
    }
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where state = 'held'`);
    const { expireReservations } = await import("@/lib/enforcement");
    const expired = await expireReservations(t.db);
    expect(expired).toBe(4);

    const after = await m.registry.metrics();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta("ceilings_reservations_granted_total", { endpoint: e.key })).toBe(5);
    expect(delta("ceilings_reservations_refused_total", { endpoint: e.key, gate: "per_call_max" })).toBe(1);
    expect(delta("ceilings_reservations_refused_total", { endpoint: e.key, gate: "ceiling" })).toBe(1);
    expect(delta("ceilings_reservations_refused_total", { endpoint: e.key, gate: "kill_switch" })).toBe(1);
    expect(delta("ceilings_reservations_unavailable_total", { reason: "connection" })).toBe(1);
    expect(delta("ceilings_settle_overruns_total", { process: "app" })).toBe(1);
    expect(delta("ceilings_reservations_expired_total", { process: "app" })).toBe(4);
    expect(delta("ceilings_reserve_batch_size_count", { process: "app" })).toBeGreaterThanOrEqual(3);
    expect(delta("ceilings_reserve_batch_duration_seconds_count", { outcome: "ok" })).toBeGreaterThanOrEqual(3);
    expect(after).toContain("# TYPE ceilings_reserve_batch_size histogram");
  });

  it("serves the worker's port to loopback without a token, and requires the token when one is set", async () => {
    await t.db.execute(sql`insert into worker_heartbeats (name, beat_at) values ('w-metrics', now() - interval '42 seconds')`);
    const open = await startMetricsServer({ metrics: m, db: async () => t.db, port: 0 });
    try {
      const text = await (await fetch(open.url)).text();
      expect(sample(text, "ceilings_worker_heartbeat_age_seconds", { worker: "w-metrics" })).toBeGreaterThanOrEqual(42);
      expect(text).toContain('ceilings_alert_deliveries{state="pending"');
      expect(sample(text, "ceilings_db_connections", { state: "active" })).toBeGreaterThanOrEqual(1);
    } finally {
      await open.close();
    }
    const locked = await startMetricsServer({ metrics: m, db: async () => t.db, port: 0, token: "a-token-of-sixteen-chars" });
    try {
      expect((await fetch(locked.url)).status).toBe(401);
      expect((await fetch(locked.url, { headers: { authorization: "Bearer wrong-token-xxxxxxxx" } })).status).toBe(401);
      expect((await fetch(locked.url, { headers: { authorization: "Bearer a-token-of-sixteen-chars" } })).status).toBe(200);
    } finally {
      await locked.close();
    }
  });
});

describe("metrics access", () => {
  it("refuses the app's route without METRICS_TOKEN (a Next route cannot see the socket), and a wrong token", () => {
    expect(checkMetricsAccess(null, undefined)).toMatchObject({ ok: false, status: 403 });
    expect(checkMetricsAccess("Bearer x", "the-right-token-123")).toMatchObject({ ok: false, status: 401 });
    expect(checkMetricsAccess("Bearer the-right-token-123", "the-right-token-123")).toEqual({ ok: true });
  });
});
