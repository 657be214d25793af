import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";

import { skipWithoutDatabase, type TestDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { callReserveBatch } from "./batcher";
import { batcherFor, reserve } from "./reserve";
import { expireReservations, releaseReservation, settleReservation } from "./resolve";
import { counterTotals, countRows, makeEndpoint, PATIENT } from "./test-fixtures";
import { type Decision, ReservationInputError } from "./types";
import { insertOverride } from "@/lib/limits/test-fixtures";

// No grant without a hold: `granted` names a reservation that is held when the answer commits,
// and one caller is one string everywhere.

async function stateOf(db: TestDatabase["db"], id: string): Promise<string | undefined> {
  const rows = resultRows<{ state: string }>(await db.execute(sql`select state::text as state from reservations where id = ${id}`));
  return rows[0]?.state;
}

describe.skipIf(skipWithoutDatabase())("grant answers and canonical callers", () => {
  const t = useTestDatabase("grant_answer", { max: 6 });

  beforeAll(async () => {
    batcherFor(t.db, PATIENT);
  });

  const oneCeiling = [{ metric: "units" as const, scope: "global" as const, window: "utc_day" as const, value: 1000 }];

  it("answers a key named twice in one batch: a grant's twin is its replay, another amount a conflict", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const answers = await callReserveBatch(t.db, [
      { endpoint: e.key, amount: 4, idempotencyKey: "twice" },
      { endpoint: e.key, amount: 4, idempotencyKey: "twice" },
      { endpoint: e.key, amount: 8, idempotencyKey: "too-big" },
      { endpoint: e.key, amount: 8, idempotencyKey: "too-big" },
      { endpoint: e.key, amount: 5, idempotencyKey: "twice" },
      { endpoint: e.key, amount: 6 },
    ]);
    const [first, copy, refused, refusedCopy, conflict, last] = answers;
    expect(first).toMatchObject({ status: "granted", replay: false });
    expect(copy).toMatchObject({ status: "granted", replay: true, reservationId: first?.status === "granted" ? first.reservationId : "" });
    expect(copy?.status === "granted" && copy.remaining).toEqual(first?.status === "granted" && first.remaining);
    // A refusal holds nothing to replay: its twin is decided on its own, against the same counter.
    expect(refused).toMatchObject({ status: "refused", gate: "ceiling", remaining: 6 });
    expect(refusedCopy).toEqual(refused);
    expect(conflict).toMatchObject({ status: "error", code: "idempotency_conflict" });
    expect(last).toMatchObject({ status: "granted", replay: false });
    // One hold per key: 4 + 6 of 10, and both refusals of "too-big" logged (folded into one row).
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 10, settled: 0 });
    const logged = resultRows<{ n: number }>(await t.db.execute(sql`select sum(count)::int as n from refusals where endpoint_key = ${e.key}`));
    expect(logged[0]?.n).toBe(2);
  });

  it("charges each destination of a batch in its own cooldown window, one opened earlier and one opened now", async () => {
    // A limit's part of an answer is shared by its counters except a cooldown's: each destination's
    // window starts at its own first hit, and a charge naming another's start resolves nowhere.
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 2, windowSeconds: 3600 },
      ],
    });
    const [opened] = await callReserveBatch(t.db, [{ endpoint: e.key, amount: 1, destination: "a@example.com" }]);
    expect(opened).toMatchObject({ status: "granted" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const answers = await callReserveBatch(t.db, [
      { endpoint: e.key, amount: 1, destination: "a@example.com" },
      { endpoint: e.key, amount: 1, destination: "b@example.com" },
    ]);
    expect(answers.map((a) => a?.status)).toEqual(["granted", "granted"]);
    const [unmatched] = resultRows<{ n: number }>(
      await t.db.execute(sql`
        select count(*)::int as n from reservations r cross join unnest(r.charges) ch
        where r.endpoint_id = ${e.endpointId} and not exists (
          select 1 from counters c
          where c.limit_id = ch.limit_id and c.scope_key = ch.scope_key and c.window_start = ch.window_start)`),
    );
    expect(unmatched?.n).toBe(0);
    for (const a of answers) if (a?.status === "granted") await releaseReservation(t.db, { reservationId: a.reservationId });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 1, settled: 0 });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 1, settled: 0 });
  });

  it("answers each grant of a batch that fits whole with the counters as its own charge left them, as the full answer does", async () => {
    // The compact fast path sends the counters as locked and leaves each charge's count to the
    // library: two endpoints of the same shape, the same batch, one answered each way.
    const shape = [
      { metric: "units" as const, scope: "global" as const, window: "utc_day" as const, value: 1000 },
      { metric: "calls" as const, scope: "global" as const, window: "utc_day" as const, value: 50 },
      { metric: "units" as const, scope: "caller" as const, window: "utc_day" as const, value: 100 },
    ];
    const compact = await makeEndpoint(t.db, { ceilings: shape });
    const full = await makeEndpoint(t.db, { ceilings: shape });
    const batch = (key: string) => [
      { endpoint: key, amount: 7, caller: "acct_a" },
      { endpoint: key, amount: 3, caller: "acct_b" },
      { endpoint: key, amount: 5, caller: "acct_a" },
      { endpoint: key, amount: 1, caller: "acct_b" },
    ];
    // Something held before the batch on each, so "as locked" is not zero.
    for (const e of [compact, full]) await callReserveBatch(t.db, [{ endpoint: e.key, amount: 10, caller: "acct_a" }]);
    const answers = await callReserveBatch(t.db, batch(compact.key));
    const rows = resultRows<{ answers: { remaining: { used: number; limit: number; remaining: number }[] }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(batch(full.key))}::jsonb) as answers`),
    );
    const expected = rows[0]?.answers.map((a) => a.remaining.map(({ used, limit, remaining }) => ({ used, limit, remaining })));
    expect(answers.map((a) => (a.status === "granted" ? a.remaining.map(({ used, limit, remaining }) => ({ used, limit, remaining })) : a))).toEqual(expected);
    // Spelled out for the first caller's second grant: 10 + 7 + 3 + 5 units, its 3rd call, 10 + 7 + 5 of its own.
    expect(answers[2]?.status === "granted" && answers[2].remaining.map((r) => r.used)).toEqual([25, 4, 22]);
  });

  it("answers a retry of a released, expired or settled key with its state, never a grant", async () => {
    const e = await makeEndpoint(t.db, { ceilings: oneCeiling });
    const grant = async (key: string) => {
      const d = await reserve(t.db, { endpoint: e.key, amount: 5, idempotencyKey: key });
      if (d.status !== "granted") throw new Error(`expected a grant, got ${d.status}`);
      return d.reservationId;
    };
    const released = await grant("k-released");
    await releaseReservation(t.db, { reservationId: released });
    const expired = await grant("k-expired");
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where id = ${expired}`);
    await expireReservations(t.db);
    const settled = await grant("k-settled");
    await settleReservation(t.db, { reservationId: settled, actual: 3 });
    const held = await grant("k-held");

    const again = (key: string) => reserve(t.db, { endpoint: e.key, amount: 5, idempotencyKey: key });
    expect(await again("k-released")).toMatchObject({ status: "resolved", state: "released", existingReservationId: released, replay: true });
    expect(await again("k-expired")).toMatchObject({ status: "resolved", state: "expired", existingReservationId: expired });
    expect(await again("k-settled")).toMatchObject({ status: "resolved", state: "settled", existingReservationId: settled });
    expect(await again("k-held")).toMatchObject({ status: "granted", replay: true, reservationId: held });
    // Nothing was charged by the retries: 5 held, 5 expired, 3 settled.
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 5, settled: 8 });
  });

  it("keeps a grant held for the twin of a caller whose deadline passed while their batch waited", async () => {
    const e = await makeEndpoint(t.db, { ceilings: oneCeiling });
    const pool = openPostgres(t.url, { max: 2 });
    const holder = openPostgres(t.url, { max: 1 });
    try {
      batcherFor(pool.db, { ...PATIENT, maxInFlight: 1 });
      // Warm the batcher (contract check, connection) so the next batch goes out at once.
      expect((await reserve(pool.db, { endpoint: e.key, amount: 1 })).status).toBe("granted");
      let unlock: () => void = () => undefined;
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((r) => (locked = r));
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`select ceilings.lock_endpoints_for_change(array[${e.endpointId}::int])`);
        locked();
        await new Promise<void>((r) => (unlock = r));
      });
      await isLocked;
      const params = { endpoint: e.key, amount: 7, idempotencyKey: "twin" };
      // One turn of the event loop: both go out in one batch, which waits on the edit's lock.
      const early = reserve(pool.db, params, { deadlineMs: 300 });
      const late = reserve(pool.db, params, { deadlineMs: 10_000 });
      expect(await early).toMatchObject({ status: "refused", gate: "unavailable" });
      unlock();
      await held;
      const answer: Decision = await late;
      expect(answer.status).toBe("granted");
      if (answer.status !== "granted") return;
      // The batcher gives back late grants nobody receives; this one has a receiver.
      await new Promise((r) => setTimeout(r, 300));
      expect(await stateOf(t.db, answer.reservationId)).toBe("held");
      expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 8, settled: 0 });
    } finally {
      await pool.close();
      await holder.close();
    }
  });

  it("refuses an account with an override of 0 under every spelling of its name", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 100 },
      ],
    });
    const perCaller = e.ceilingIds[1] ?? 0;
    await insertOverride(t.db, "ceiling", perCaller, { caller: "acct", value: 0, reason: "blocked" });
    for (const caller of ["acct", "acct ", "acct\t", " acct", "\u00a0acct\u2003", "acct\n"]) {
      const d = await reserve(t.db, { endpoint: e.key, amount: 1, caller });
      expect(d, JSON.stringify(caller)).toMatchObject({
        status: "refused",
        gate: "ceiling",
        message: `ceiling ${perCaller} allows this account nothing: its override or its plan is 0`,
      });
    }
    // The same through SQL, for callers in other languages.
    for (const caller of ["acct ", "acct\t", " acct"]) {
      const rows = resultRows<{ d: { status: string; gate?: string } }>(await t.db.execute(sql`select ceilings.reserve(${e.key}, 1, ${caller}) as d`));
      expect(rows[0]?.d, JSON.stringify(caller)).toMatchObject({ status: "refused", gate: "ceiling" });
    }
    // Control characters inside the name are an input error, not another account.
    await expect(reserve(t.db, { endpoint: e.key, amount: 1, caller: "ac\tct" })).rejects.toBeInstanceOf(ReservationInputError);
    expect(await countRows(t.db, sql`select count(*) as n from usage where ceiling_id = ${perCaller} and scope_key <> 'acct'`)).toBe(0);
    const refusals = resultRows<{ caller: string }>(await t.db.execute(sql`select distinct caller from refusals where endpoint_key = ${e.key}`));
    expect(refusals).toEqual([{ caller: "acct" }]);
  });

  it("settles and releases for the canonical account whatever its spelling", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 100 }] });
    const d = await reserve(t.db, { endpoint: e.key, amount: 4, caller: " payer\t" });
    if (d.status !== "granted") throw new Error("expected a grant");
    expect(await settleReservation(t.db, { reservationId: d.reservationId, actual: 2, caller: "payer " })).toMatchObject({ status: "settled" });
    expect(await releaseReservation(t.db, { reservationId: d.reservationId, caller: "other" })).toMatchObject({ status: "forbidden" });
  });
});
