import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "./reserve";
import { expireReservations, releaseReservation, reservationEndpointKey, settleReservation } from "./resolve";
import { counterTotals, countRows, makeEndpoint } from "./test-fixtures";
import { useRacingPools } from "./test-suite";
import type { Granted } from "./types";

describe.skipIf(skipWithoutDatabase())("settle, release and expiry on real Postgres", () => {
  const t = useTestDatabase("resolve", { max: 8 });
  const pools = useRacingPools(t, 3, 6);

  async function grant(key: string, amount: number, ttlSeconds?: number): Promise<Granted> {
    const d = await reserve(t.db, { endpoint: key, amount, ttlSeconds });
    if (d.status !== "granted") throw new Error(`expected a grant, got ${d.status}: ${d.message}`);
    return d;
  }

  const unitsAndCalls = [
    { metric: "units", scope: "global", window: "utc_day", value: 1000 },
    { metric: "calls", scope: "global", window: "utc_day", value: 100 },
  ] as const;

  it("names the endpoint of each of many reservations looked up at once, an unknown one as none", async () => {
    const one = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000 }] });
    const two = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000 }] });
    const granted = await Promise.all(Array.from({ length: 40 }, (_, i) => reserve(t.db, { endpoint: (i % 2 ? two : one).key, amount: 1 })));
    const ids = granted.map((d) => (d.status === "granted" ? d.reservationId : ""));
    const unknown = "00000000-0000-7000-8000-000000000000";
    // Concurrent lookups share a query; each gets its own answer, an id in capitals too.
    const keys = await Promise.all([...ids, unknown, (ids[1] ?? "").toUpperCase()].map((id) => reservationEndpointKey(t.db, id)));
    expect(keys).toEqual([...ids.map((_, i) => (i % 2 ? two : one).key), null, two.key]);
    await expect(reservationEndpointKey(t.db, "not-a-uuid")).rejects.toThrow(/UUID/);
  });

  it("settle keeps the call counted and corrects the units; an overrun is recorded and flagged", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [...unitsAndCalls] });
    const a = await grant(e.key, 100);
    const b = await grant(e.key, 100);
    expect(await settleReservation(t.db, { reservationId: a.reservationId, actual: 40 })).toMatchObject({
      status: "settled",
      overrun: false,
    });
    expect(await settleReservation(t.db, { reservationId: b.reservationId, actual: 130 })).toMatchObject({
      status: "settled",
      overrun: true,
    });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 170 });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 0, settled: 2 });
    expect(await countRows(t.db, sql`select count(*) as n from alerts where kind = 'overrun' and dedupe_key = ${"overrun:" + b.reservationId}`)).toBe(1);
  });

  it("release returns the units and the call; twice is harmless; after settle it changes nothing", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [...unitsAndCalls] });
    const a = await grant(e.key, 50);
    expect(await releaseReservation(t.db, { reservationId: a.reservationId })).toMatchObject({ status: "released", replay: false });
    expect(await releaseReservation(t.db, { reservationId: a.reservationId })).toMatchObject({ status: "released", replay: true });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 0 });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 0, settled: 0 });
    const b = await grant(e.key, 50);
    await settleReservation(t.db, { reservationId: b.reservationId, actual: 50 });
    expect(await releaseReservation(t.db, { reservationId: b.reservationId })).toMatchObject({
      status: "already_resolved",
      state: "settled",
    });
    expect(await settleReservation(t.db, { reservationId: a.reservationId, actual: 1 })).toMatchObject({
      status: "already_resolved",
      state: "released",
    });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 50 });
  });

  it("a late release cannot undo a newer reservation", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const old = await grant(e.key, 10);
    await releaseReservation(t.db, { reservationId: old.reservationId });
    await grant(e.key, 10);
    await releaseReservation(t.db, { reservationId: old.reservationId });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 10, settled: 0 });
    expect((await reserve(t.db, { endpoint: e.key, amount: 1 })).status).toBe("refused");
  });

  it("settle, release and expiry racing on one id: exactly one wins", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [...unitsAndCalls] });
    const rounds = 20;
    for (let round = 0; round < rounds; round++) {
      const g = await grant(e.key, 10, 1);
      await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where id = ${g.reservationId}`);
      const [s, r, x] = await Promise.all([
        settleReservation(pools.dbs[0] ?? t.db, { reservationId: g.reservationId, actual: 3 }),
        releaseReservation(pools.dbs[1] ?? t.db, { reservationId: g.reservationId }),
        expireReservations(pools.dbs[2] ?? t.db),
      ]);
      const winners = [s.status === "settled", r.status === "released", x === 1].filter(Boolean).length;
      expect(winners).toBe(1);
      // A loser that found the row held by the winner answered unavailable (retry) instead of
      // waiting; its retry is answered already_resolved, never a second win.
      const retried = [
        s.status === "unavailable" ? await settleReservation(t.db, { reservationId: g.reservationId, actual: 3 }) : s,
        r.status === "unavailable" ? await releaseReservation(t.db, { reservationId: g.reservationId }) : r,
      ];
      for (const loser of retried.filter((o) => o.status !== "settled" && o.status !== "released")) {
        expect(loser.status).toBe("already_resolved");
      }
      expect(retried.filter((o, i) => o.status !== [s, r][i]?.status && (o.status === "settled" || o.status === "released"))).toEqual([]);
    }
    const units = await counterTotals(t.db, e.ceilingIds[0] ?? 0);
    const settled = await countRows(
      t.db,
      sql`select coalesce(sum(case state when 'settled' then settled_amount when 'expired' then amount else 0 end), 0) as n from reservations where endpoint_id = ${e.endpointId}`,
    );
    expect(units).toEqual({ held: 0, settled });
  });

  it("expires held reservations past their TTL as fully spent; two sweepers at once expire each once", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [...unitsAndCalls] });
    const grants = await Promise.all(Array.from({ length: 40 }, () => grant(e.key, 7)));
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where endpoint_id = ${e.endpointId}`);
    const swept = await Promise.all([
      expireReservations(pools.dbs[0] ?? t.db, 7),
      expireReservations(pools.dbs[1] ?? t.db, 7),
      expireReservations(pools.dbs[2] ?? t.db),
    ]);
    let total = swept.reduce((a, b) => a + b, 0);
    while (total < grants.length) {
      const more = await expireReservations(t.db);
      if (more === 0) break;
      total += more;
    }
    expect(total).toBe(40);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 280 });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 0, settled: 40 });
    expect(await countRows(t.db, sql`select count(*) as n from reservations where endpoint_id = ${e.endpointId} and state = 'expired'`)).toBe(40);
    expect(await countRows(t.db, sql`select count(*) as n from alerts where kind = 'expiry' and endpoint_id = ${e.endpointId}`)).toBe(1);
    expect(await settleReservation(t.db, { reservationId: grants[0]?.reservationId ?? "", actual: 1 })).toMatchObject({
      status: "already_resolved",
      state: "expired",
    });
  });

  it("settles into the window the reservation was made in", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const g = await grant(e.key, 20);
    // Move the reservation's counter to yesterday, as if midnight passed before the settle.
    await t.db.execute(
      sql`update counters set window_start = window_start - interval '1 day', window_end = window_end - interval '1 day' where limit_id = (select limit_id from ceilings where id = ${e.ceilingIds[0] ?? 0})`,
    );
    await t.db.execute(
      sql`update reservations set charges[1] = row((charges[1]).limit_id, (charges[1]).scope_key, (charges[1]).window_start - interval '1 day',
                                               (charges[1]).measure, (charges[1]).amount)::reservation_charge
          where id = ${g.reservationId}`,
    );
    await settleReservation(t.db, { reservationId: g.reservationId, actual: 5 });
    const rows = resultRows(await t.db.execute(sql`select held::int, settled::int from usage where ceiling_id = ${e.ceilingIds[0] ?? 0}`));
    expect(rows).toEqual([{ held: 0, settled: 5 }]);
    // Today's window is untouched: the full ceiling remains.
    expect((await reserve(t.db, { endpoint: e.key, amount: 100 })).status).toBe("granted");
  });

  it("checks the owner when a caller is given", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 100 }],
    });
    const d = await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_a" });
    if (d.status !== "granted") throw new Error("expected a grant");
    expect(await settleReservation(t.db, { reservationId: d.reservationId, actual: 1, caller: "acct_b" })).toMatchObject({ status: "forbidden" });
    expect(await releaseReservation(t.db, { reservationId: d.reservationId, caller: "acct_b" })).toMatchObject({ status: "forbidden" });
    expect(await releaseReservation(t.db, { reservationId: "5f0c8d0e-0000-4000-8000-000000000000" })).toMatchObject({ status: "not_found" });
  });

  it("holds each reservation for its own TTL from when it was made, in a batch and by every entry", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000 }] });
    // Submitted together: the library's typed batches (two of three requests, one a lane), each request
    // with a TTL of its own.
    const library = await Promise.all([undefined, 1, 60, 86_400, 7, undefined].map((ttl) => grant(e.key, 1, ttl)));
    // Batches none of whose requests names a TTL, whose compact answer sends one expiry for all.
    const defaults = await Promise.all([undefined, undefined, undefined, undefined].map((ttl) => grant(e.key, 1, ttl)));
    // The JSON entry, and the one-call function's default and named TTL.
    // Among them a TTL out of range (answered, nothing written) and a key sent twice with two TTLs:
    // the repeat follows the first request, whose TTL its reservation keeps.
    const requests = JSON.stringify([
      { endpoint: e.key, amount: 1, ttlSeconds: 42 },
      { endpoint: e.key, amount: 1, ttlSeconds: 0 },
      { endpoint: e.key, amount: 1 },
      { endpoint: e.key, amount: 1, idempotencyKey: "ttl-twice", ttlSeconds: 5 },
      { endpoint: e.key, amount: 1, idempotencyKey: "ttl-twice", ttlSeconds: 600 },
    ]);
    const [json] = resultRows<{ a: (Granted | { status: "error"; code: string })[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${requests}::jsonb) as a`),
    );
    const [, bad, , first, repeat] = json?.a ?? [];
    expect(bad).toMatchObject({ status: "error", code: "invalid_ttl" });
    expect(repeat).toMatchObject({ status: "granted", reservationId: (first as Granted | undefined)?.reservationId });
    const [lone] = resultRows<{ a: Granted }>(await t.db.execute(sql`select ceilings.reserve(${e.key}, 1) as a`));
    const [named] = resultRows<{ a: Granted }>(await t.db.execute(sql`select ceilings.reserve(${e.key}, 1, ttl_seconds => 9) as a`));
    const answers = [...library, ...defaults, ...(json?.a ?? []).filter((a): a is Granted => a.status === "granted"), lone?.a, named?.a];
    const held = new Map(
      resultRows<{ id: string; seconds: number; expires: string }>(
        await t.db.execute(sql`
          select id::text, extract(epoch from expires_at - created_at)::int as seconds, expires_at as expires
          from reservations where endpoint_id = ${e.endpointId}`),
      ).map((r) => [r.id, r]),
    );
    expect(held.size).toBe(15);
    expect(answers.map((a) => held.get(a?.reservationId ?? "")?.seconds)).toEqual([300, 1, 60, 86_400, 7, 300, 300, 300, 300, 300, 42, 300, 5, 5, 300, 9]);
    // Each answer's expiry is the one its reservation keeps, which the sweeper reads.
    for (const a of answers) expect(new Date(a?.expiresAt ?? "").getTime()).toBe(new Date(held.get(a?.reservationId ?? "")?.expires ?? "").getTime());
  });
});
