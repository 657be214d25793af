import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { CuttableProxy } from "@/db/cuttable-proxy";
import { databaseUrl, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { env } from "@/lib/env";
import { batcherFor, reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { makeEndpoint } from "./test-fixtures";
import type { Decision } from "./types";

// A deadline frees its slot: when every open connection goes silent (a network cut that drops
// packets, as a lost NAT entry does), the batch's connection is given up at the deadline, so once
// the network heals calls are decided again at once, not after TCP's minutes of retries.

describe.skipIf(skipWithoutDatabase())("a network cut", () => {
  const t = useTestDatabase("network_cut", { max: 2 });
  let proxy: CuttableProxy;
  let proxied: string;

  beforeAll(async () => {
    const server = new URL(env().TEST_DATABASE_URL ?? "");
    proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const port = await proxy.listen();
    const via = new URL(databaseUrl(env().TEST_DATABASE_URL ?? "", t.name));
    via.hostname = "127.0.0.1";
    via.port = String(port);
    proxied = via.toString();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("decides calls again within 2 s of the heal after 8 s of silence; settle and release fail retryably", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    // The enforcement pool's settings: bounded statements, so an abandoned backend lets go too.
    const pool = openPostgres(proxied, {
      max: 2,
      connectTimeoutSeconds: 1,
      connection: { statement_timeout: 1500, lock_timeout: 1000, idle_in_transaction_session_timeout: 10_000 },
    });
    const deadlineMs = 1000;
    batcherFor(pool.db, { deadlineMs, maxInFlight: 2, maxBatch: 64 });
    const log: { startedAt: number; endedAt: number; decision: Decision }[] = [];
    let stop = false;
    const callers = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const startedAt = Date.now();
        const decision = await reserve(pool.db, { endpoint: e.key, amount: 1 });
        log.push({ startedAt, endedAt: Date.now(), decision });
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      const before = await reserve(pool.db, { endpoint: e.key, amount: 1 });
      expect(before.status).toBe("granted");
      if (before.status !== "granted") return;

      // Warm the settle and release lane, so the cut meets a lane whose statement can be
      // cancelled: its cancel then waits out the grace on a connection the cut silences too.
      const warm = await reserve(pool.db, { endpoint: e.key, amount: 1 });
      if (warm.status !== "granted") throw new Error("no warm-up grant");
      expect(await releaseReservation(pool.db, { reservationId: warm.reservationId })).toMatchObject({ status: "released" });

      proxy.silence();
      const cutAt = Date.now();
      // Settle and release during the cut: a typed, retryable failure at their deadline, not
      // after the lane's cancel grace and a new connection (which the cut also silences).
      let started = Date.now();
      const settle = await settleReservation(pool.db, { reservationId: before.reservationId, actual: 1 }, { deadlineMs });
      const settleMs = Date.now() - started;
      // Sent on a warm lane and never answered: it may have committed.
      expect(settle).toMatchObject({ status: "unavailable", reason: "deadline", retryable: true, mayHaveApplied: true });
      started = Date.now();
      const release = await releaseReservation(pool.db, { reservationId: before.reservationId }, { deadlineMs });
      const releaseMs = Date.now() - started;
      expect(release).toMatchObject({ status: "unavailable", retryable: true });
      expect(settleMs).toBeGreaterThanOrEqual(deadlineMs - 5);
      expect(settleMs).toBeLessThan(deadlineMs + 250);
      expect(releaseMs).toBeLessThan(deadlineMs + 250);
      await new Promise((r) => setTimeout(r, Math.max(0, 8000 - (Date.now() - cutAt))));
      const during = log.filter((l) => l.startedAt > cutAt + 100 && l.endedAt < Date.now());
      expect(during.length).toBeGreaterThan(0);
      expect(during.every((l) => l.decision.status === "refused")).toBe(true);

      proxy.heal();
      const healedAt = Date.now();
      await new Promise((r) => setTimeout(r, 4000));
      const firstGrant = log.find((l) => l.startedAt >= healedAt && l.decision.status === "granted");
      expect(firstGrant, "no grant after the heal").toBeDefined();
      expect((firstGrant?.endedAt ?? Infinity) - healedAt).toBeLessThanOrEqual(2000);
      const settledLater = log.filter((l) => l.startedAt >= healedAt + 2000);
      expect(settledLater.length).toBeGreaterThan(0);
      expect(settledLater.filter((l) => l.decision.status !== "granted")).toEqual([]);
      // Settle works again too, on the reservation the cut left held.
      expect(await settleReservation(pool.db, { reservationId: before.reservationId, actual: 1 })).toMatchObject({ status: "settled" });
    } finally {
      stop = true;
      await Promise.all(callers);
      await pool.close();
    }
  }, 60_000);
});
