import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";

import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type BatchRequest, callReserveBatch } from "./batcher";
import { makeBudget, priceEndpoint } from "./budget-fixtures";
import { callResolveBatch, type ResolveAnswer, type ResolveItem } from "./resolve-batcher";
import { settleReservation } from "./resolve";
import { counterTotals, makeEndpoint } from "./test-fixtures";
import { insertOverride } from "@/lib/limits/test-fixtures";

// One lock order for every row a batch touches (see the top of db/functions/decide_batch.sql):
// batches holding the same callers, destinations and endpoints in opposite orders must never
// deadlock. No lock timeout here, so a cycle shows as a deadlock (40P01), not as a timeout.

const WORKERS = 4;
const BATCHES_PER_WORKER = 50;
const CALLERS = 10;
const DESTINATIONS = 5;

describe.skipIf(skipWithoutDatabase())("lock order", () => {
  const t = useTestDatabase("lock_order", { max: 2 });

  it("runs opposite-order batches on every lockable kind with no deadlock in 10,000 calls", async () => {
    // Endpoint locks (two endpoints), ceilings, budgets, overrides of both, throttle counters,
    // cooldown locks, usage and budget counters, refusal and rollup rows: each batch touches all.
    const throttled = await makeEndpoint(t.db, {
      throttlePerMinute: 1_000_000,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1_000_000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 1_000_000 },
        // Small enough that most requests are refused later on: refusal rows are upserted too.
        { metric: "units", scope: "caller", window: "utc_day", value: 300 },
        { metric: "units", scope: "destination", window: "first_hit", value: 1_000_000, windowSeconds: 3600 },
      ],
    });
    const other = await makeEndpoint(t.db, {
      throttlePerMinute: 1_000_000,
      ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 200 }],
    });
    for (let c = 0; c < CALLERS; c++) await insertOverride(t.db, "ceiling", throttled.ceilingIds[2] ?? 0, { caller: `acct_${c}`, value: 250 });
    // Budget rows, budget overrides and budget counters: a global budget and a per-account one
    // over both endpoints, priced so that the per-account one refuses some calls too.
    await priceEndpoint(t.db, throttled.endpointId, { units: 1_000_000 });
    await priceEndpoint(t.db, other.endpointId, { units: 2_000_000 });
    await makeBudget(t.db, { endpointIds: [throttled.endpointId, other.endpointId], value: 1_000_000_000 });
    const perAccount = await makeBudget(t.db, { endpointIds: [throttled.endpointId, other.endpointId], value: 400, scope: "account" });
    for (let c = 0; c < CALLERS / 2; c++) await insertOverride(t.db, "budget", perAccount.id, { caller: `acct_${c * 2}`, value: 300 });

    // Every worker names the same idempotency keys in the same round, half of them in the other
    // order: reservations' key entries are contended too. Only some requests carry one, so the
    // rest are decided afresh (a replay locks no counter).
    const forward = (round: number): BatchRequest[] => {
      const requests: BatchRequest[] = [];
      for (let c = 0; c < CALLERS; c++) {
        for (let d = 0; d < DESTINATIONS; d++) {
          const endpoint = d === DESTINATIONS - 1 ? other.key : throttled.key;
          const destination = `user${d}@example.com`;
          requests.push({
            endpoint,
            amount: 1,
            caller: `acct_${c}`,
            destination,
            destinationKey: destination,
            idempotencyKey: d % 2 === 0 ? `k${round}_${c}_${d}` : undefined,
          });
        }
      }
      return requests;
    };

    const pools = Array.from({ length: WORKERS }, () => openPostgres(t.url, { max: 1 }));
    const failures: string[] = [];
    let calls = 0;
    try {
      await Promise.all(
        pools.map(async (pool, w) => {
          for (let b = 0; b < BATCHES_PER_WORKER; b++) {
            const requests = w % 2 === 0 ? forward(b) : forward(b).reverse();
            try {
              const answers = await callReserveBatch(pool.db, requests);
              calls += answers.length;
            } catch (error) {
              const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
              failures.push(cause);
              // One is enough to fail; each costs the server's deadlock_timeout to find.
              break;
            }
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
    expect(failures).toEqual([]);
    expect(calls).toBe(WORKERS * BATCHES_PER_WORKER * CALLERS * DESTINATIONS);
    expect(calls).toBeGreaterThanOrEqual(10_000);
  }, 120_000);

  it("locks budget counters in key order: batches on two endpoints that share only per-account budget counters, in opposite orders, 10,000 calls", async () => {
    // No ceiling counter is shared between the two endpoints, so nothing serialises the batches
    // before they reach the budget's counters: only their key order keeps them from a cycle.
    const x = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 }] });
    const y = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 }] });
    await priceEndpoint(t.db, x.endpointId, { units: 1_000_000 });
    await priceEndpoint(t.db, y.endpointId, { units: 1_000_000 });
    await makeBudget(t.db, { endpointIds: [x.endpointId, y.endpointId], value: 1_000_000_000, scope: "account" });
    const round = (endpoint: string): BatchRequest[] => Array.from({ length: 50 }, (_, c) => ({ endpoint, amount: 1, caller: `acct_${c}` }));
    const pools = Array.from({ length: WORKERS }, () => openPostgres(t.url, { max: 1 }));
    const failures: string[] = [];
    let calls = 0;
    try {
      await Promise.all(
        pools.map(async (pool, w) => {
          for (let b = 0; b < BATCHES_PER_WORKER; b++) {
            const requests = w % 2 === 0 ? round(x.key) : round(y.key).reverse();
            try {
              const answers = await callReserveBatch(pool.db, requests);
              calls += answers.filter((a) => a.status === "granted").length;
            } catch (error) {
              failures.push(error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error));
              break;
            }
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
    expect(failures).toEqual([]);
    expect(calls).toBe(WORKERS * BATCHES_PER_WORKER * 50);
  }, 120_000);

  it("grants each idempotency key once when batches name the same keys in opposite orders, with no deadlock", async () => {
    // No throttle and no cooldown: only the counters and the reservations' key entries are shared.
    const plain = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 }] });
    const round = (r: number): BatchRequest[] =>
      Array.from({ length: 40 }, (_, i) => ({ endpoint: plain.key, amount: 1, caller: `acct_${i % 7}`, idempotencyKey: `r${r}_${i}` }));
    const pools = Array.from({ length: WORKERS }, () => openPostgres(t.url, { max: 1 }));
    const failures: string[] = [];
    const granted = new Map<string, Set<string>>();
    try {
      await Promise.all(
        pools.map(async (pool, w) => {
          for (let r = 0; r < 60; r++) {
            const requests = w % 2 === 0 ? round(r) : round(r).reverse();
            try {
              const answers = await callReserveBatch(pool.db, requests);
              answers.forEach((a, i) => {
                const key = requests[i]?.idempotencyKey ?? "";
                if (a.status === "granted") granted.set(key, (granted.get(key) ?? new Set()).add(a.reservationId));
              });
            } catch (error) {
              failures.push(error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error));
              break;
            }
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
    expect(failures).toEqual([]);
    // Every key was granted once, and every worker that named it was answered with that one hold.
    expect(granted.size).toBe(60 * 40);
    expect([...granted.values()].every((ids) => ids.size === 1)).toBe(true);
    const [{ held }] = (await t.db.execute(
      sql`select sum(held)::int as held from usage u join ceilings c on c.id = u.ceiling_id where c.endpoint_id = ${plain.endpointId}`,
    )) as unknown as [{ held: number }];
    expect(held).toBe(60 * 40);
  }, 120_000);

  it("locks every counter of a settle batch up front, in counter order, before applying any item", async () => {
    // Two endpoints whose counters sort apart (first's ceiling ids below second's). A batch that
    // settles second's reservation before first's must not hold second's counter while it waits
    // for first's: a reserve batch, which locks in counter order, may hold first's and want
    // second's next, and the two would wait on each other.
    const first = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const second = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const granted = await callReserveBatch(t.db, [
      { endpoint: second.key, amount: 5 },
      { endpoint: first.key, amount: 5 },
    ]);
    const ids = granted.map((a) => (a.status === "granted" ? a.reservationId : ""));
    expect(ids.every((id) => id !== "")).toBe(true);
    const holder = openPostgres(t.url, { max: 1 });
    const settler = openPostgres(t.url, { max: 1 });
    let settling: Promise<ResolveAnswer[]> | undefined;
    try {
      const counter = (ceilingId: number) =>
        sql`select 1 from counters where limit_id = (select limit_id from ceilings where id = ${ceilingId}) for update nowait`;
      await holder.db.transaction(async (tx) => {
        // Holding first's counter, as a reserve batch that has come that far does.
        await tx.execute(counter(first.ceilingIds[0] ?? 0));
        const items: ResolveItem[] = ids.map((id) => ({ id, verb: "settle", actual: 3 }));
        settling = callResolveBatch(settler.db, items);
        await new Promise((r) => setTimeout(r, 300));
        // The batch waits for first's counter and holds no other: second's is free to take.
        await expect(tx.execute(counter(second.ceilingIds[0] ?? 0))).resolves.toBeDefined();
      });
      const answers = await settling;
      expect(answers?.map((a) => a.status)).toEqual(["settled", "settled"]);
    } finally {
      await Promise.all([holder.close(), settler.close()]);
    }
    expect(await counterTotals(t.db, first.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 3 });
    expect(await counterTotals(t.db, second.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 3 });
  });

  it("answers a settle whose reservation another transaction holds as unavailable at once, and settles the rest of its batch", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const granted = await callReserveBatch(
      t.db,
      Array.from({ length: 3 }, () => ({ endpoint: e.key, amount: 5 })),
    );
    const ids = granted.map((a) => (a.status === "granted" ? a.reservationId : ""));
    const holder = openPostgres(t.url, { max: 1 });
    const settler = openPostgres(t.url, { max: 1 });
    try {
      await holder.db.transaction(async (tx) => {
        // Another call holds the first reservation's row (as a settle of it in flight would).
        await tx.execute(sql`select 1 from reservations where id = ${ids[0]}::uuid for update`);
        const started = performance.now();
        const answers = await Promise.race([
          callResolveBatch(
            settler.db,
            ids.map((id) => ({ id, verb: "settle", actual: 2 })),
          ),
          new Promise<"waited">((r) => setTimeout(() => r("waited"), 3000)),
        ]);
        expect(answers === "waited" ? "waited for the held row" : answers.map((a) => a.status)).toEqual(["unavailable", "settled", "settled"]);
        expect(performance.now() - started).toBeLessThan(1000);
        // Through the library: this call changed nothing, but the holder may be resolving it (an
        // earlier attempt still committing), so the answer cannot say "not applied".
        expect(await settleReservation(settler.db, { reservationId: ids[0] ?? "", actual: 2 })).toMatchObject({
          status: "unavailable",
          mayHaveApplied: true,
        });
      });
    } finally {
      await Promise.all([holder.close(), settler.close()]);
    }
    // The held one settles on retry once the row is free.
    const [again] = await callResolveBatch(t.db, [{ id: ids[0] ?? "", verb: "settle", actual: 2 }]);
    expect(again?.status).toBe("settled");
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 6 });
  });
});
