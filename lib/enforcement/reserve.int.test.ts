import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeBudget } from "./budget-fixtures";
import { reserve } from "./reserve";
import { releaseReservation, settleReservation } from "./resolve";
import { counterTotals, countRows, makeEndpoint, openPools, setCeilingValue } from "./test-fixtures";
import { useRacingPools } from "./test-suite";
import { type Decision, ReservationInputError } from "./types";
import { insertOverride } from "@/lib/limits/test-fixtures";

const granted = (ds: Decision[]) => ds.filter((d) => d.status === "granted").length;

describe.skipIf(skipWithoutDatabase())("reserve: one atomic step on real Postgres", () => {
  const t = useTestDatabase("reserve", { max: 8 });
  // Four independent pools, each with its own batcher: four "processes" racing on one row.
  // Small batches, many in flight: the most chances for two batches to race on one row.
  const pools = useRacingPools(t, 4, 6, { maxInFlight: 4, maxBatch: 16 });

  it("admits exactly floor(L / a) of N concurrent reservations from independent pools", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const calls = Array.from({ length: 240 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 3 }));
    const decisions = await Promise.all(calls);
    expect(granted(decisions)).toBe(33);
    expect(decisions.filter((d) => d.status === "refused" && d.gate === "ceiling")).toHaveLength(207);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 99, settled: 0 });
  });

  it("is exact unbatched too (one request per database call)", async () => {
    const single = openPools(t.url, 3, 8, { maxBatch: 1, maxInFlight: 8 });
    try {
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 50 }] });
      const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => reserve(single.dbs[i % 3] ?? t.db, { endpoint: e.key, amount: 7 })));
      expect(granted(decisions)).toBe(50);
    } finally {
      await single.close();
    }
  });

  it("charges all ceilings or none: a per-caller refusal leaves the global counters untouched", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 1000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 10 },
      ],
    });
    // 3 callers x 40 calls of 1 unit, interleaved across pools: each caller may get 10.
    const decisions = await Promise.all(
      Array.from({ length: 120 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 1, caller: `acct_${i % 3}` })),
    );
    expect(granted(decisions)).toBe(30);
    const refusedGates = new Set(decisions.filter((d) => d.status === "refused").map((d) => d.status === "refused" && d.gate));
    expect([...refusedGates]).toEqual(["ceiling"]);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 30, settled: 0 });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 30, settled: 0 });
    expect(await counterTotals(t.db, e.ceilingIds[2] ?? 0)).toEqual({ held: 30, settled: 0 });
  });

  it("never deadlocks when callers touch the same rows in different orders", async () => {
    const a = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100_000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 100_000 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 100_000, windowSeconds: 60 },
      ],
    });
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        reserve(pools.dbs[i % 4] ?? t.db, {
          endpoint: a.key,
          amount: 1,
          caller: `acct_${(i * 7) % 5}`,
          destination: `user${(i * 3) % 4}@example.com`,
        }),
      ),
    );
    expect(granted(decisions)).toBe(200);
  });

  it("reserves the worst case first and settles to the actual", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const d = await reserve(t.db, { endpoint: e.key, amount: 800 });
    if (d.status !== "granted") throw new Error("expected a grant");
    expect(d.remaining).toMatchObject([{ limit: 1000, used: 800, remaining: 200 }]);
    expect((await reserve(t.db, { endpoint: e.key, amount: 300 })).status).toBe("refused");
    await settleReservation(t.db, { reservationId: d.reservationId, actual: 120 });
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 120 });
    expect((await reserve(t.db, { endpoint: e.key, amount: 300 })).status).toBe("granted");
  });

  it("binds a kill switch on the very next reservation, and a lowered ceiling too", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const id = e.ceilingIds[0] ?? 0;
    expect((await reserve(t.db, { endpoint: e.key, amount: 1 })).status).toBe("granted");
    await setCeilingValue(t.db, id, 0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1 })).toMatchObject({ status: "refused", gate: "kill_switch" });
    await setCeilingValue(t.db, id, 2);
    expect((await reserve(t.db, { endpoint: e.key, amount: 1 })).status).toBe("granted");
    expect(await reserve(t.db, { endpoint: e.key, amount: 1 })).toMatchObject({ status: "refused", gate: "ceiling" });
  });

  it("grants nothing that commits after a kill under load", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const id = e.ceilingIds[0] ?? 0;
    let stop = false;
    const load = pools.dbs.map(async (db) => {
      while (!stop) await Promise.all(Array.from({ length: 16 }, () => reserve(db, { endpoint: e.key, amount: 1 })));
    });
    const count = () => countRows(t.db, sql`select count(*) as n from reservations where endpoint_id = ${e.endpointId}`);
    let inKill = 0;
    for (let round = 0; round < 8; round++) {
      await new Promise((r) => setTimeout(r, 40));
      await setCeilingValue(t.db, id, 0);
      const atKill = await count();
      await new Promise((r) => setTimeout(r, 40));
      inKill += (await count()) - atKill;
      await setCeilingValue(t.db, id, 1_000_000);
    }
    stop = true;
    await Promise.all(load);
    expect(await count()).toBeGreaterThan(0);
    expect(inKill).toBe(0);
  });

  it("grants nothing that commits after a kill typed by hand as one UPDATE, under load", async () => {
    // No lock taken by the editor: the trigger on ceilings takes the endpoint's lock for it.
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const id = e.ceilingIds[0] ?? 0;
    let stop = false;
    const load = pools.dbs.map(async (db) => {
      while (!stop) await Promise.all(Array.from({ length: 16 }, () => reserve(db, { endpoint: e.key, amount: 1 })));
    });
    const count = () => countRows(t.db, sql`select count(*) as n from reservations where endpoint_id = ${e.endpointId}`);
    let inKill = 0;
    for (let round = 0; round < 8; round++) {
      await new Promise((r) => setTimeout(r, 40));
      await t.db.execute(sql`update ceilings set value = 0 where id = ${id}`);
      const atKill = await count();
      await new Promise((r) => setTimeout(r, 40));
      inKill += (await count()) - atKill;
      await t.db.execute(sql`update ceilings set value = 1000000 where id = ${id}`);
    }
    stop = true;
    await Promise.all(load);
    expect(await count()).toBeGreaterThan(0);
    expect(inKill).toBe(0);
  });

  it("makes every edit of a ceiling, a budget or a budget's members wait for the batches in flight, however it is typed", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const budget = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 1_000 });
    const edits = [
      sql`update ceilings set value = 50 where id = ${e.ceilingIds[0] ?? 0}`,
      sql`update budgets set value = 500 where id = ${budget.id}`,
      sql`insert into budget_members (budget_id, endpoint_id) values (${budget.id}, ${other.endpointId})`,
      sql`delete from budget_members where budget_id = ${budget.id} and endpoint_id = ${other.endpointId}`,
    ];
    const batch = openPostgres(t.url, { max: 1 });
    const editor = openPostgres(t.url, { max: 1 });
    try {
      for (const edit of edits) {
        let done = false;
        let editing: Promise<unknown> | undefined;
        await batch.db.transaction(async (tx) => {
          // What a batch in flight holds on this endpoint.
          await tx.execute(sql`select pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(${e.endpointId}))`);
          await tx.execute(sql`select pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(${other.endpointId}))`);
          editing = editor.db.execute(edit).then(() => {
            done = true;
          });
          await new Promise((r) => setTimeout(r, 300));
          expect(done).toBe(false);
        });
        await editing;
        expect(done).toBe(true);
      }
    } finally {
      await Promise.all([batch.close(), editor.close()]);
    }
  });

  it("refuses above the per-call max and at a per-account override of 0, charging nothing", async () => {
    const e = await makeEndpoint(t.db, {
      perCallMax: 5,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100 },
        { metric: "units", scope: "caller", window: "utc_day", value: 50 },
      ],
    });
    expect(await reserve(t.db, { endpoint: e.key, amount: 6, caller: "a" })).toMatchObject({ status: "refused", gate: "per_call_max" });
    await insertOverride(t.db, "ceiling", e.ceilingIds[1] ?? 0, { caller: "blocked", value: 0, reason: "abuse" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "blocked" })).toMatchObject({ status: "refused", gate: "ceiling" });
    expect((await reserve(t.db, { endpoint: e.key, amount: 1, caller: "other" })).status).toBe("granted");
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 1, settled: 0 });
  });

  it("cools a destination down from its first hit: one of 60 concurrent sends to one inbox wins", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 1, windowSeconds: 86_400 },
      ],
    });
    const decisions = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 1, destination: i % 2 ? "Alice@Example.com" : "alice@example.com" }),
      ),
    );
    expect(granted(decisions)).toBe(1);
    expect(decisions.filter((d) => d.status === "refused" && d.gate === "cooldown")).toHaveLength(59);
    // The cooldown refusals charged nothing on the global ceiling.
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 1, settled: 0 });
  });

  it("returns one reservation for 100 concurrent calls with one idempotency key", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const decisions = await Promise.all(
      Array.from({ length: 100 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 5, idempotencyKey: "order-1" })),
    );
    const ids = new Set(decisions.map((d) => (d.status === "granted" ? d.reservationId : "refused")));
    expect(ids.size).toBe(1);
    expect(decisions.filter((d) => d.status === "granted" && !d.replay)).toHaveLength(1);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 5, settled: 0 });
    await expect(reserve(t.db, { endpoint: e.key, amount: 6, idempotencyKey: "order-1" })).rejects.toMatchObject({
      code: "idempotency_conflict",
    });
    // Scoped to the caller: another caller's key of the same name is its own.
    expect(await reserve(t.db, { endpoint: e.key, amount: 6, idempotencyKey: "order-1", caller: "b" })).toMatchObject({
      status: "granted",
      replay: false,
    });
  });

  it("does not remember a refused attempt: its retry is decided afresh", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    expect((await reserve(t.db, { endpoint: e.key, amount: 1, idempotencyKey: "k" })).status).toBe("refused");
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 10);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, idempotencyKey: "k" })).toMatchObject({ status: "granted", replay: false });
  });

  it("rejects invalid input as a typed error, not a refusal, and charges nothing", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 10 },
        { metric: "units", scope: "caller", window: "utc_day", value: 10 },
      ],
    });
    const cases: [Parameters<typeof reserve>[1], string][] = [
      [{ endpoint: "no.such-endpoint", amount: 1, caller: "a" }, "unknown_endpoint"],
      [{ endpoint: e.key, amount: 0, caller: "a" }, "invalid_amount"],
      [{ endpoint: e.key, amount: -5, caller: "a" }, "invalid_amount"],
      [{ endpoint: e.key, amount: 1.5, caller: "a" }, "invalid_amount"],
      [{ endpoint: e.key, amount: 2 ** 63, caller: "a" }, "invalid_amount"],
      [{ endpoint: e.key, amount: 1 }, "caller_required"],
      [{ endpoint: e.key, amount: 1, caller: "a", ttlSeconds: 0 }, "invalid_ttl"],
    ];
    for (const [params, code] of cases) {
      const error = await reserve(t.db, params).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ReservationInputError);
      expect(error).toMatchObject({ code });
    }
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 0 });
  });

  it("keeps settled + held within the value while reservations, settles and releases race", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 500 }] });
    const id = e.ceilingIds[0] ?? 0;
    let violations = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { held, settled } = await counterTotals(t.db, id);
        if (held + settled > 500) violations++;
      }
    })();
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const db = pools.dbs[i % 4] ?? t.db;
        const amount = 1 + (i % 9);
        const d = await reserve(db, { endpoint: e.key, amount });
        if (d.status !== "granted") return;
        if (i % 3 === 0) await releaseReservation(db, { reservationId: d.reservationId });
        // The invariant holds without overruns: settle at or below what was reserved.
        else await settleReservation(db, { reservationId: d.reservationId, actual: Math.min(amount, i % 4) });
      }),
    );
    sampling = false;
    await sampler;
    expect(violations).toBe(0);
    const { held, settled } = await counterTotals(t.db, id);
    expect(held).toBe(0);
    expect(settled).toBeLessThanOrEqual(500);
  });
});
