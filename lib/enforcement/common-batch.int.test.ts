import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { compactAnswers, reservationIds, typedArrays, type BatchRequest, type CompactWire } from "./batcher";

// reserve_batch_arrays decides the common batch itself (the library's compact call, one endpoint,
// no key, destination or parts, every gate passed, every counter with room) and hands every other
// one to decide_batch. Here each batch runs twice from the same state, in a transaction rolled
// back: through reserve_batch_arrays and through decide_batch with the same arguments (the same
// ids). The answers and everything written (every column of the reservations and counters the
// transaction wrote) must be the same, and decide_batch must have run only where the batch is not
// the common one (its calls counted by the statistics of functions, track_functions = 'pl').

type Outcome = { answer: unknown; reservations: unknown; counters: unknown; handedOver: number };

describe.skipIf(skipWithoutDatabase())("reserve_batch_arrays: the common batch decided whole, as decide_batch decides it", () => {
  const t = useTestDatabase("enforcement_common_batch", { max: 1 });

  async function setUp() {
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts) values
        ('common.one', 'common.one', 'emails', 5, '[{"name": "units", "pricePico": 2500000}]'),
        ('common.full', 'common.full', 'tokens', 5, '[{"name": "units", "pricePico": 2100000}]'),
        ('common.alert', 'common.alert', 'emails', 5, '[{"name": "units", "pricePico": 0}]'),
        ('common.off', 'common.off', 'emails', 5, '[{"name": "units", "pricePico": 0}]')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value, alert_thresholds)
      select e.id, v.metric::ceiling_metric, v.scope::ceiling_scope, 'utc_day', v.value, 100000, v.value, v.alerts::smallint[]
      from endpoints e join (values
        ('common.one', 'units', 'global', 100000, '{}'),
        ('common.full', 'units', 'global', 100000, '{}'),
        ('common.full', 'calls', 'global', 100000, '{}'),
        ('common.full', 'units', 'caller', 30, '{50,80,100}'),
        ('common.alert', 'units', 'global', 200, '{50,80,100}'),
        ('common.off', 'units', 'global', 0, '{}')) v(ep, metric, scope, value, alerts) on v.ep = e.key
      where not exists (select from ceilings c where c.endpoint_id = e.id)`);
    await t.ownerDb.execute(sql`
      insert into budgets (key, name, scope, "window", value, max_value, default_value, alert_thresholds) values
        ('common.global', 'common global', 'global', 'utc_day', 100000000, 1000000000, 100000000, '{}'),
        ('common.account', 'common per account', 'account', 'utc_day', 60, 1000000000, 60, '{50,80,100}')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e
      where b.key like 'common.%' and e.key = 'common.full' on conflict do nothing`);
    // A plan's value and an override on the per-account limits, a blocked account, known accounts.
    await t.ownerDb.execute(sql`insert into plans (key, name) values ('common-plan', 'common plan') on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into plan_limit_values (plan_id, limit_id, value) select p.id, b.limit_id, 40 from plans p, budgets b
      where p.key = 'common-plan' and b.key = 'common.account' on conflict do nothing`);
    await t.ownerDb.execute(sql`
      insert into accounts (account, plan_id, blocked_at)
      select v.account, case when v.planned then p.id end, case when v.blocked then now() end
      from plans p, (values ('acct-1', false, false), ('acct-2', false, false), ('acct-3', false, false), ('acct-plan', true, false),
                            ('acct-over', false, false), ('acct-blocked', false, true)) v(account, planned, blocked)
      where p.key = 'common-plan' on conflict (account) do nothing`);
    await t.ownerDb.execute(sql`
      insert into limit_overrides (limit_id, caller, value, reason)
      select c.limit_id, 'acct-over', 12, 'test' from ceilings c join endpoints e on e.id = c.endpoint_id
      where e.key = 'common.full' and c.scope = 'caller' on conflict do nothing`);
  }

  /** One batch through `entry` (the library's arguments: compact, the ids sent), rolled back. */
  async function outcome(entry: "reserve_batch_arrays" | "decide_batch", requests: BatchRequest[], ids: string[], before?: string): Promise<Outcome> {
    const arrays = typedArrays(requests);
    if (!arrays) throw new Error("not a typed batch");
    const fn = sql.raw(`ceilings.${entry}`);
    let result: Outcome | undefined;
    const rolledBack = new Error("rolled back");
    try {
      await t.ownerDb.transaction(async (tx) => {
        await tx.execute(sql`set local track_functions = 'pl'`);
        if (before) await tx.execute(sql.raw(before));
        // The view counts what this backend has not yet reported (calls of earlier transactions
        // too, until it does): the calls of this one are the difference.
        const calls = sql`(select coalesce(sum(f.calls), 0)::int from pg_stat_xact_user_functions f where f.schemaname = 'ceilings' and f.funcname = 'decide_batch')`;
        const [earlier] = resultRows<{ n: number }>(await tx.execute(sql`select ${calls} as n`));
        const [row] = resultRows<{ answer: CompactWire }>(
          await tx.execute(sql`select ${fn}(${arrays[0]}::text[], ${arrays[1]}::bigint[], ${arrays[2]}::text[], ${arrays[3]}::text[],
            ${arrays[4]}::text[], ${arrays[5]}::text[], ${arrays[6]}::int[], ${arrays[7]}::text[], ${arrays[8]}::jsonb[], true, NULL,
            ${`{${ids.join(",")}}`}::uuid[]) as answer`),
        );
        const [state] = resultRows<Omit<Outcome, "answer">>(
          await tx.execute(sql`select
            (select coalesce(json_agg(json_build_array(r.id, r.endpoint_id, r.caller, r.destination, r.destination_key, r.amount, r.state,
                      r.idempotency_key, r.charges, r.created_at = now(), r.expires_at - now(), r.parts, r.money, r.prices) order by r.id), '[]')
             from reservations r where r.xmin = xid(pg_current_xact_id())) as reservations,
            (select coalesce(json_agg(json_build_array(c.limit_id, c.scope_key, c.window_start, c.window_end, c.held, c.settled, c.reservations)
                      order by c.limit_id, c.scope_key, c.window_start), '[]')
             from counters c where c.xmin = xid(pg_current_xact_id())) as counters,
            ${calls} - ${earlier?.n ?? 0}::int as "handedOver"`),
        );
        if (!row || !state) throw new Error("no answer");
        // A time in the answer is now() plus a TTL: the same offset in both runs, at different nows.
        const answer = JSON.parse(JSON.stringify(compactAnswers(row.answer, ids)).replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"<time>"')) as unknown;
        result = { answer, ...state };
        throw rolledBack;
      });
    } catch (error) {
      if (error !== rolledBack) throw error;
    }
    if (!result) throw new Error("no outcome");
    return result;
  }

  /** The batch through both entries: the same outcome; whether reserve_batch_arrays handed it over. */
  async function decidedAlike(requests: BatchRequest[], before?: string): Promise<{ handedOver: boolean; outcome: Outcome }> {
    const ids = reservationIds(requests.length);
    const common = await outcome("reserve_batch_arrays", requests, ids, before);
    const general = await outcome("decide_batch", requests, ids, before);
    expect(general.handedOver, "decide_batch called directly").toBe(1);
    expect({ ...common, handedOver: undefined }, JSON.stringify(requests)).toEqual({ ...general, handedOver: undefined });
    return { handedOver: common.handedOver > 0, outcome: common };
  }

  const batch = (endpoint: string, callers: (string | undefined)[], extra: Partial<BatchRequest> = {}): BatchRequest[] =>
    callers.map((caller, i) => ({ endpoint, amount: 1 + (i % 3), ...(caller === undefined ? {} : { caller }), ...extra }));

  it("decides the common batch whole, on one ceiling and on every kind of limit, as decide_batch does", async () => {
    await setUp();
    const cases: [string, BatchRequest[]][] = [
      [
        "32 on one ceiling",
        batch(
          "common.one",
          Array.from({ length: 32 }, (_, i) => ["acct-1", "acct-2", "acct-3"][i % 3]),
        ),
      ],
      ["a lone call", batch("common.one", ["acct-1"])],
      ["no caller where every limit is global", batch("common.one", [undefined, undefined, "acct-2"])],
      ["callers trimmed", batch("common.one", [" acct-1", "acct-1  ", "\u00a0acct-2 "])],
      ["TTLs", batch("common.one", ["acct-1", "acct-2"], { ttlSeconds: 3_600 })],
      ["request ids", batch("common.one", ["acct-1", "acct-2"], { requestId: "r-1" })],
      // Three ceilings, a global and a per-account budget: a plan's value, an override, the default plan.
      [
        "the full shape",
        batch(
          "common.full",
          Array.from({ length: 24 }, (_, i) => ["acct-1", "acct-plan", "acct-over", "acct-2"][i % 4]),
        ),
      ],
      ["the full shape, a lone call", batch("common.full", ["acct-plan"])],
    ];
    for (const [name, requests] of cases) {
      const { handedOver, outcome: o } = await decidedAlike(requests);
      expect(handedOver, name).toBe(false);
      expect((o.reservations as unknown[]).length, name).toBe(requests.length);
    }
  });

  it("hands every other batch to decide_batch, before writing anything", async () => {
    await setUp();
    const cases: [string, BatchRequest[], string?][] = [
      ["a caller seen for the first time", batch("common.one", ["acct-1", "acct-new"])],
      ["a blocked account", batch("common.one", ["acct-1", "acct-blocked"])],
      ["above the per-call max", [...batch("common.one", ["acct-1"]), { endpoint: "common.one", amount: 6, caller: "acct-2" }]],
      ["an idempotency key", batch("common.one", ["acct-1", "acct-2"], { idempotencyKey: "k-1" })],
      ["two endpoints", [...batch("common.one", ["acct-1"]), ...batch("common.full", ["acct-1"])]],
      ["an unknown endpoint", batch("common.none", ["acct-1"])],
      ["a control character", batch("common.one", ["acct-1", "acct\u00072"])],
      // A tab is trimmed from a caller, so no error, but decide_batch checks each request for it.
      ["a tab around a caller", batch("common.one", ["acct-1\t", "acct-2"])],
      ["a caller too long", batch("common.one", ["acct-1", "c".repeat(201)])],
      ["a request id too long", batch("common.one", ["acct-1"], { requestId: "r".repeat(101) })],
      ["a TTL out of range", batch("common.one", ["acct-1"], { ttlSeconds: 86_401 })],
      ["a limit at 0", batch("common.off", ["acct-1"])],
      ["no caller where a limit counts per account", batch("common.full", ["acct-1", undefined])],
      // 31 units on a per-caller ceiling of 30: no room as the counters are read.
      [
        "more than a counter's room",
        batch(
          "common.full",
          Array.from({ length: 16 }, () => "acct-1"),
        ),
      ],
      ["an override at 0", batch("common.full", ["acct-over"]), "update limit_overrides set value = 0 where caller = 'acct-over'"],
      ["an archived endpoint", batch("common.one", ["acct-1"]), "update endpoints set archived_at = now() where key = 'common.one'"],
    ];
    for (const [name, requests, before] of cases) {
      const { handedOver, outcome: o } = await decidedAlike(requests, before);
      expect(handedOver, name).toBe(true);
      // Nothing written twice: each request's reservation once, if it was granted.
      const ids = (o.reservations as [string][]).map((r) => r[0]);
      expect(new Set(ids).size, name).toBe(ids.length);
    }
  });

  // Found by a review: an empty list where a list of n is expected is refused by decide_batch
  // (22023), never read as NULL, and a limit whose value times a threshold is past 2^63 (only SQL
  // can type one) grants as decide_batch does, with no overflow in the threshold's test.
  it("refuses an empty list as decide_batch does, and tests a threshold of a huge limit without overflow", async () => {
    await setUp();
    for (const entry of ["reserve_batch_arrays", "decide_batch"]) {
      for (const empties of [
        ["'{}'", "NULL", "NULL"],
        ["NULL", "'{}'", "NULL"],
        ["NULL", "NULL", "'{}'"],
      ]) {
        const call = `select ceilings.${entry}('{common.one,common.one}', '{1,2}', ${empties[0]}, NULL, NULL, NULL, ${empties[1]}, ${empties[2]}, NULL, true, NULL,
          '{${reservationIds(2).join(",")}}')`;
        await expect(t.ownerDb.execute(sql.raw(call)), `${entry} ${empties.join(",")}`).rejects.toMatchObject({ cause: { code: "22023" } });
      }
    }
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts) values ('common.huge', 'common.huge', 'units', 5, '[{"name": "units", "pricePico": 0}]')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value, alert_thresholds)
      select e.id, 'units', 'global', 'utc_day', 100000000000000000, 100000000000000000, 100000000000000000, '{50,80,100}'
      from endpoints e where e.key = 'common.huge' and not exists (select from ceilings c where c.endpoint_id = e.id)`);
    const { handedOver, outcome: o } = await decidedAlike(batch("common.huge", ["acct-1", "acct-2"]));
    expect(handedOver).toBe(false);
    expect((o.reservations as unknown[]).length).toBe(2);
  });

  // A batch that crosses an alert threshold of a global limit is found so with the counters
  // locked and its reservations written: they are deleted and decide_batch decides it,
  // firing the alert, with each reservation written once. The same branch takes a batch that
  // another batch left without room between the counters' read and their lock.
  it("hands over a batch that crosses a threshold once the counters are locked, written once and alerted once", async () => {
    await setUp();
    // 99 of 200 used: the next batch of 2 units crosses 50%.
    const fill = `with e as (select c.limit_id, w.window_start, w.window_end from ceilings c join endpoints e on e.id = c.endpoint_id
        cross join lateral ceilings.window_bounds(c.window, e.billing_day, c.window_seconds, now()) w where e.key = 'common.alert')
      insert into counters (limit_id, scope_key, window_start, window_end, held) select limit_id, '', window_start, window_end, 99 from e
      on conflict (limit_id, scope_key, window_start) do update set held = 99`;
    const requests = batch("common.alert", ["acct-1", "acct-2"], { amount: 1 });
    const { handedOver, outcome: o } = await decidedAlike(requests, fill);
    expect(handedOver).toBe(true);
    expect((o.reservations as unknown[]).length).toBe(2);
    expect((o.counters as [number, string, string, string, number][])[0]?.[4]).toBe(101);
    // Between two thresholds (10 to 12 of 200), the same endpoint's batch is decided whole.
    const quiet = await decidedAlike(requests, fill.replaceAll("99", "10"));
    expect(quiet.handedOver).toBe(false);
    // And the alert is fired by the batch that crossed, through either entry.
    await t.ownerDb.execute(sql.raw(fill));
    const arrays = typedArrays(requests) ?? [];
    await t.db
      .execute(sql`select ceilings.reserve_batch_arrays(${arrays[0]}::text[], ${arrays[1]}::bigint[], ${arrays[2]}::text[], NULL, NULL, NULL, NULL, NULL, NULL,
      true, NULL, ${`{${reservationIds(2).join(",")}}`}::uuid[])`);
    const [alerts] = resultRows<{ n: number }>(
      await t.db.execute(sql`select count(*)::int as n from alerts a where a.kind = 'threshold' and a.dedupe_key like 'threshold:%:50'
        and a.ceiling_id in (select c.id from ceilings c join endpoints e on e.id = c.endpoint_id where e.key = 'common.alert')`),
    );
    expect(alerts?.n).toBe(1);
  });
});
