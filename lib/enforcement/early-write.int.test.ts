import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type BatchRequest, callReserveBatch } from "./batcher";
import { batcherFor } from "./reserve";
import { counterTotals, countRows, makeEndpoint, PATIENT } from "./test-fixtures";
import type { BatchAnswer } from "./types";

// reserve_batch writes a batch's reservations before it locks the counters, when every counter
// has room for the whole batch, and grants such a batch without its loop over the requests: a
// reservation row exists for every grant and for nothing else, and each grant sees the counters
// after the grants before it, whichever way the batch was decided.

const ceilings = [
  { metric: "units" as const, scope: "global" as const, window: "utc_day" as const, value: 1000 },
  { metric: "calls" as const, scope: "global" as const, window: "utc_day" as const, value: 1000 },
  { metric: "units" as const, scope: "caller" as const, window: "utc_day" as const, value: 1000 },
];

/** Per grant, the used value of each counter it charged, in ceiling id order; a refusal is its gate. */
function seen(answers: BatchAnswer[]): (number[] | string)[] {
  return answers.map((a) => (a.status === "granted" ? a.remaining.map((r) => r.used) : a.status === "refused" ? a.gate : a.status));
}

describe.skipIf(skipWithoutDatabase())("reservations written before the counters are locked", () => {
  const t = useTestDatabase("early_write", { max: 4 });

  beforeAll(async () => {
    batcherFor(t.db, PATIENT);
    // This suite's database only: every reservation row deleted, to tell a row written early and
    // deleted from one never written.
    await t.ownerDb.execute(sql`create table deleted_reservations (id uuid primary key, endpoint_id int not null)`);
    await t.ownerDb.execute(sql`
      create function note_deleted_reservation() returns trigger language plpgsql as $$
      begin insert into deleted_reservations values (old.id, old.endpoint_id) on conflict do nothing; return old; end $$`);
    await t.ownerDb.execute(sql`
      create trigger note_deleted after delete on reservations for each row execute function note_deleted_reservation()`);
    await t.ownerDb.execute(sql`grant insert, select on deleted_reservations to public`);
  });

  const rowsOf = (endpointId: number) => countRows(t.db, sql`select count(*)::int as n from reservations where endpoint_id = ${endpointId}`);
  const deletedOf = (endpointId: number) => countRows(t.db, sql`select count(*)::int as n from deleted_reservations where endpoint_id = ${endpointId}`);

  it("answers each grant the counters after the grants before it, the same whether the whole batch fits or not", async () => {
    const requests = (key: string): BatchRequest[] =>
      ["a", "b", "a", "b", "a", "c"].map((caller, i) => ({ endpoint: key, amount: i + 1, caller, idempotencyKey: `k${i}` }));
    // Fits: granted without the loop.
    const fits = await makeEndpoint(t.db, { ceilings });
    const quick = await callReserveBatch(t.db, requests(fits.key));
    // The same six and a seventh too big for the global ceiling: decided in the loop, one by one.
    const tight = await makeEndpoint(t.db, { ceilings });
    const looped = await callReserveBatch(t.db, [...requests(tight.key), { endpoint: tight.key, amount: 990, caller: "d" }]);
    const expected = [
      [1, 1, 1],
      [3, 2, 2],
      [6, 3, 4],
      [10, 4, 6],
      [15, 5, 9],
      [21, 6, 6],
    ];
    expect(seen(quick)).toEqual(expected);
    expect(seen(looped)).toEqual([...expected, "ceiling"]);
    expect(await rowsOf(fits.endpointId)).toBe(6);
    expect(await rowsOf(tight.endpointId)).toBe(6);
    expect(await counterTotals(t.db, fits.ceilingIds[0] ?? 0)).toEqual({ held: 21, settled: 0 });
    expect(await counterTotals(t.db, tight.ceilingIds[0] ?? 0)).toEqual({ held: 21, settled: 0 });
  });

  // Three times: a batch of keyed requests is decide_batch's, which deletes the rows of the four it
  // refuses; a batch of the common kind (no keys) is written early by reserve_batch_arrays, which
  // finds the room gone once it holds the counter (its one counter by the guarded update, or two
  // locked in one statement), deletes its five rows and hands the batch to decide_batch, which
  // writes the one grant again (late: it knows there is no room).
  it.each([
    ["decide_batch, keyed requests", true, 1, 4],
    ["reserve_batch_arrays, the common batch on one counter", false, 1, 5],
    ["reserve_batch_arrays, the common batch on two counters", false, 2, 5],
  ])("deletes the row of a request written early and then refused, when another batch took the room meanwhile (%s)", async (_, keyed, counters, deleted) => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 10 },
        ...(counters === 2 ? [{ metric: "calls" as const, scope: "global" as const, window: "utc_day" as const, value: 100 }] : []),
      ],
    });
    // No alert thresholds: a batch crossing one is handed over for the alert, and this one must
    // be handed over for the room alone.
    await t.ownerDb.execute(sql`update ceilings set alert_thresholds = '{}' where endpoint_id = ${e.endpointId}`);
    // The counter's row exists and is empty.
    const [first] = await callReserveBatch(t.db, [{ endpoint: e.key, amount: 1 }]);
    expect(first?.status).toBe("granted");
    await t.db.execute(sql`update counters set held = 0 where limit_id = (select limit_id from ceilings where id = ${e.ceilingIds[0] ?? 0})`);
    await t.db.execute(sql`delete from reservations where endpoint_id = ${e.endpointId}`);
    await t.ownerDb.execute(sql`delete from deleted_reservations where endpoint_id = ${e.endpointId}`);
    const holder = openPostgres(t.url, { max: 1 });
    const batcher = openPostgres(t.url, { max: 1 });
    let batch: Promise<BatchAnswer[]> | undefined;
    try {
      await holder.db.transaction(async (tx) => {
        // Another batch has locked the counter and taken 8 of its 10, not yet committed: read
        // without a lock it is still empty, so the five requests below (10 in all) fit.
        await tx.execute(sql`update counters set held = held + 8 where limit_id = (select limit_id from ceilings where id = ${e.ceilingIds[0] ?? 0})`);
        batch = callReserveBatch(
          batcher.db,
          Array.from({ length: 5 }, (_, i) => ({ endpoint: e.key, amount: 2, ...(keyed ? { idempotencyKey: `room-${i}` } : {}) })),
        );
        await new Promise((r) => setTimeout(r, 300));
        // Written before the lock the batch now waits on, invisible to everyone else.
        expect(await countRows(tx, sql`select count(*)::int as n from reservations where endpoint_id = ${e.endpointId}`)).toBe(0);
        const waiting = await countRows(
          tx,
          sql`select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and query like '%reserve_batch%'`,
        );
        expect(waiting).toBe(1);
        // It waits for the counter with its reservations written (it holds the table's write
        // lock): not at the counter's insert, which would wait for this transaction too.
        const writing = await countRows(
          tx,
          sql`select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
              where a.datname = current_database() and a.wait_event_type = 'Lock' and a.query like '%reserve_batch%'
                and l.relation = 'reservations'::regclass and l.mode = 'RowExclusiveLock' and l.granted`,
        );
        expect(writing).toBe(1);
      });
      const answers = (await batch) ?? [];
      expect(answers.map((a) => (a.status === "refused" ? a.gate : a.status))).toEqual(["granted", "ceiling", "ceiling", "ceiling", "ceiling"]);
    } finally {
      await Promise.all([holder.close(), batcher.close()]);
    }
    expect(await rowsOf(e.endpointId)).toBe(1);
    expect(await deletedOf(e.endpointId)).toBe(deleted);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 10, settled: 0 });
  });

  it("writes nothing it would delete when a counter has no room for the whole batch", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 3 }] });
    const answers = await callReserveBatch(
      t.db,
      Array.from({ length: 50 }, (_, i) => ({ endpoint: e.key, amount: 1, idempotencyKey: `storm-${i}` })),
    );
    expect(answers.filter((a) => a.status === "granted")).toHaveLength(3);
    expect(await rowsOf(e.endpointId)).toBe(3);
    expect(await deletedOf(e.endpointId)).toBe(0);
  });

  it("decides a key named again after its first request was refused on its own, and writes the grant once", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const answers = await callReserveBatch(t.db, [
      { endpoint: e.key, amount: 11, idempotencyKey: "again" },
      { endpoint: e.key, amount: 4, idempotencyKey: "again" },
      { endpoint: e.key, amount: 4, idempotencyKey: "again" },
    ]);
    expect(answers.map((a) => (a.status === "refused" ? a.gate : a.status))).toEqual(["ceiling", "granted", "granted"]);
    const [, grant, replay] = answers;
    expect(replay).toMatchObject({ replay: true, reservationId: grant?.status === "granted" ? grant.reservationId : "" });
    expect(await rowsOf(e.endpointId)).toBe(1);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 4, settled: 0 });
  });
});
