import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { CuttableProxy } from "@/db/cuttable-proxy";
import { databaseUrl, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type KeySource, lookUpKey } from "@/lib/api-keys/authenticate";
import { batcherFor } from "@/lib/enforcement/reserve";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { env } from "@/lib/env";
import { handleReserve } from "./reserve-handler";
import { apiRequest, makeKey, read } from "./test-support";

// A 503 never hides a grant: the connection goes mute after the batch's statement was sent, so
// the reservation commits and its answer is lost. The HTTP answer says the call may have been
// granted (mayHaveApplied: true), and the retry with the same idempotency key answers that very
// reservation. A request refused before it was sent still says nothing was charged.

describe.skipIf(skipWithoutDatabase())("a reserve whose answer is lost", () => {
  const t = useTestDatabase("lost_answer", { max: 4 });
  let proxy: CuttableProxy;
  let proxied: string;

  beforeAll(async () => {
    const server = new URL(env().TEST_DATABASE_URL ?? "");
    proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const via = new URL(databaseUrl(env().TEST_DATABASE_URL ?? "", t.name));
    via.hostname = "127.0.0.1";
    via.port = String(await proxy.listen());
    proxied = via.toString();
  });
  afterAll(async () => {
    await proxy?.close();
  });
  // The API key is read on the healthy database: only the reservation goes the broken way.
  const keys: KeySource = { lookUp: (_db, hash) => lookUpKey(t.db, hash) };

  it("answers 503 mayHaveApplied: true, and the retry with the same key answers the reservation", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_lost" });
    const pool = openPostgres(proxied, { max: 2, connectTimeoutSeconds: 1, connection: { statement_timeout: 1500, lock_timeout: 1000 } });
    batcherFor(pool.db, { deadlineMs: 800, maxInFlight: 1, maxBatch: 64 });
    const deps = { db: async () => pool.db, keys };
    // The batcher's lane is open before the answers go mute.
    const warm = await read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1 } }), deps));
    expect(warm.status).toBe(201);
    try {
      proxy.muteAnswers();
      const body = { endpoint: e.key, amount: 7, idempotencyKey: "order-lost-1" };
      const lost = await read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body }), deps));
      expect(lost).toMatchObject({ status: 503, body: { gate: "unavailable", reason: "deadline", mayHaveApplied: true, error: { code: "unavailable" } } });
      expect(JSON.stringify(lost.body)).not.toMatch(/nothing was charged/);
      // It did commit: held under its key.
      const held = resultRows<{ id: string; state: string }>(
        await t.db.execute(sql`select id, state::text from reservations where idempotency_key = 'order-lost-1'`),
      );
      expect(held).toEqual([{ id: expect.any(String), state: "held" }]);
      // The retry through a healthy connection answers that reservation, charging nothing again.
      const retry = await read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body }), { db: async () => t.db }));
      expect(retry).toMatchObject({ status: 200, body: { replay: true, reservationId: held[0]?.id } });
      const [used] = resultRows<{ n: number }>(
        await t.db.execute(sql`select coalesce(sum(amount), 0)::int as n from reservations where endpoint_id = ${e.endpointId}`),
      );
      expect(used?.n).toBe(1 + 7);
    } finally {
      proxy.heal();
      await pool.close();
    }
  }, 30_000);

  it("says nothing was charged when the request never reached the database", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_lost" });
    const closed = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    try {
      batcherFor(closed.db, { deadlineMs: 1500, maxInFlight: 1, maxBatch: 64 });
      const deps = { db: async () => closed.db, keys };
      const refused = await read(
        await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 3, idempotencyKey: "never-sent" } }), deps),
      );
      expect(refused).toMatchObject({ status: 503, body: { reason: "connection", mayHaveApplied: false } });
    } finally {
      await closed.close();
    }
  }, 30_000);
});
