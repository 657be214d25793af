import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
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

/** A loopback TCP proxy to Postgres that can silence every connection it carries. */
class CuttableProxy {
  private server = net.createServer((client) => this.accept(client));
  private cut = false;
  private readonly pairs = new Set<{ silenced: boolean }>();

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    const address = this.server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    return address.port;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair = { silenced: this.cut };
    this.pairs.add(pair);
    // Bytes of a silenced connection are dropped, both ways, for good: it never recovers.
    client.on("data", (chunk) => {
      if (!pair.silenced) upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (!pair.silenced) client.write(chunk);
    });
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // A silenced connection does not even pass on a close: the far side never hears of it.
    client.on("close", () => {
      if (!pair.silenced) end();
    });
    upstream.on("close", () => {
      if (!pair.silenced) end();
    });
    client.on("error", () => {});
    upstream.on("error", () => {});
  }

  /** Every open connection, and every new one until heal, goes silent. */
  silence(): void {
    this.cut = true;
    for (const p of this.pairs) p.silenced = true;
  }

  /** New connections pass again; the silenced ones stay dead. */
  heal(): void {
    this.cut = false;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

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
      expect(settle).toMatchObject({ status: "unavailable", reason: "deadline", retryable: true });
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
