import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { arrayLiteral, callReserveBatch, type BatchRequest } from "./batcher";
import { makeEndpoint } from "./test-fixtures";

// Two entries decide a batch: reserve_batch (JSON, what a service in any language calls) and
// reserve_batch_arrays (one typed array per field, what the TypeScript library calls). One
// implementation sits behind both; here every request a typed array can carry, good or bad, gets
// the same answer from each, from the same state (each batch run in a transaction rolled back).

type Answer = Record<string, unknown>;

/** Ids and times (an expiry, a cooldown's end) differ between two runs; everything else must not. */
const normal = (answers: Answer[]) =>
  JSON.parse(
    JSON.stringify(answers)
      .replace(/"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '"<id>"')
      .replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"<time>"'),
  ) as Answer[];

// A small deterministic generator, so a failure names a batch that can be run again.
function generator(seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  return <T>(options: readonly T[]): T => options[Math.floor(next() * options.length)] as T;
}

// Requests good and bad, each at an edge of what the entries take.
const handPicked: BatchRequest[] = [
  { endpoint: "typed.email", amount: 1, caller: "acct-1" },
  { endpoint: "typed.email", amount: 1, caller: " acct-1\t" },
  { endpoint: "typed.email", amount: 2, caller: "acct-1", idempotencyKey: "k1" },
  { endpoint: "typed.email", amount: 2, caller: "acct-1", idempotencyKey: "k1" },
  { endpoint: "typed.email", amount: 1, caller: "acct-1", idempotencyKey: "k1" },
  { endpoint: "typed.email", amount: 1 },
  { endpoint: "typed.email", amount: 0, caller: "acct-2" },
  { endpoint: "typed.email", amount: -5, caller: "acct-2" },
  { endpoint: "typed.email", amount: 2 ** 53, caller: "acct-2" },
  { endpoint: "typed.email", amount: 4, caller: "acct-2" },
  { endpoint: "typed.email", caller: "acct-2" },
  { endpoint: "typed.email", amount: 1, caller: "ac\tct" },
  { endpoint: "typed.email", amount: 1, caller: "a\u009fb" },
  { endpoint: "typed.email\u0007", amount: 1 },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", requestId: "r\u0085" },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", ttlSeconds: 0 },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", ttlSeconds: 86401 },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", ttlSeconds: 86400 },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", idempotencyKey: "k".repeat(201) },
  { endpoint: "typed.email", amount: 1, caller: "c".repeat(201) },
  { endpoint: "typed.email", amount: 1, caller: `  ${"c".repeat(200)}  ` },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", requestId: "r".repeat(101) },
  { endpoint: "typed.email", amount: 1, caller: "acct-3", parts: { units: 1 } },
  { endpoint: "typed.email", amount: 2, caller: "acct-3", parts: { units: 1 } },
  { endpoint: "no.such", amount: 1 },
  { endpoint: "", amount: 1 },
  { endpoint: "typed.sms", amount: 1 },
  { endpoint: "typed.sms", amount: 1, destination: "+1 415 555 0100" },
  { endpoint: "typed.sms", amount: 1, destination: "+1 (415) 555-0100" },
  { endpoint: "typed.sms", amount: 1, destination: "someone@example.com" },
  { endpoint: "typed.sms", amount: 1, destinationKey: "d".repeat(321) },
  { endpoint: "typed.llm", amount: 5 },
  { endpoint: "typed.llm", parts: { input: 100, output: 20 } },
  { endpoint: "typed.llm", parts: { input: 100, output: 20 }, amount: 120 },
  { endpoint: "typed.llm", parts: { input: 100, output: 20 }, amount: 121 },
  { endpoint: "typed.llm", parts: { input: 100 } },
  { endpoint: "typed.llm", parts: { input: 100, output: 20, extra: 1 } },
  { endpoint: "typed.llm", parts: { input: 1000, output: 20 } },
];

describe.skipIf(skipWithoutDatabase())("reserve_batch and reserve_batch_arrays: one decision, two ways in", () => {
  const t = useTestDatabase("enforcement_typed_entry", { max: 1 });

  async function setUp() {
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts) values
        ('typed.email', 'typed.email', 'emails', 3, '[{"name": "units", "pricePico": 2000000}]'),
        ('typed.sms', 'typed.sms', 'messages', 5, '[{"name": "units", "pricePico": 0}]'),
        ('typed.llm', 'typed.llm', 'tokens', 100000, '[{"name": "input", "pricePico": 1000000}, {"name": "output", "pricePico": 3000000}]')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", window_seconds, destination_kind, value, max_value, default_value)
      select e.id, v.metric::ceiling_metric, v.scope::ceiling_scope, v.win::ceiling_window, v.secs, v.kind::destination_kind, v.value, 1000, v.value
      from endpoints e join (values
        ('typed.email', 'units', 'global', 'utc_day', null, null, 12),
        ('typed.email', 'units', 'caller', 'utc_day', null, null, 4),
        ('typed.sms', 'calls', 'global', 'utc_day', null, null, 100),
        ('typed.sms', 'calls', 'destination', 'first_hit', 60, 'phone', 1),
        ('typed.llm', 'units', 'global', 'utc_day', null, null, 1000)) v(ep, metric, scope, win, secs, kind, value) on v.ep = e.key
      where not exists (select from ceilings c where c.endpoint_id = e.id)`);
  }

  async function viaJson(requests: BatchRequest[]): Promise<Answer[]> {
    await t.db.execute(sql`begin`);
    try {
      const [row] = resultRows<{ a: Answer[] }>(await t.db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(requests)}::jsonb) as a`));
      return row?.a ?? [];
    } finally {
      await t.db.execute(sql`rollback`);
    }
  }

  /**
   * One call of the typed entry, in the transaction the caller holds: a list for every field, or
   * (`absent: "null"`) NULL for a field no request has, as the library sends it.
   */
  async function arraysCall(requests: BatchRequest[], absent: "list" | "null" = "list"): Promise<Answer[]> {
    const field = (f: (r: BatchRequest) => string | number | null | undefined) => {
      const values = requests.map(f);
      return absent === "null" && values.every((v) => v === undefined || v === null) ? null : arrayLiteral(values);
    };
    const [row] = resultRows<{ a: Answer[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch_arrays(${field((r) => r.endpoint)}::text[], ${field((r) => r.amount)}::bigint[],
        ${field((r) => r.caller)}::text[], ${field((r) => r.destination)}::text[], ${field((r) => r.destinationKey)}::text[],
        ${field((r) => r.idempotencyKey)}::text[], ${field((r) => r.ttlSeconds)}::int[], ${field((r) => r.requestId)}::text[],
        ${field((r) => (r.parts ? JSON.stringify(r.parts) : null))}::jsonb[]) as a`),
    );
    return row?.a ?? [];
  }

  /** The requests as batches of at most `size` (all of them by default), one after another in one transaction, rolled back. */
  async function viaArrays(requests: BatchRequest[], size = requests.length, absent: "list" | "null" = "list"): Promise<Answer[]> {
    await t.db.execute(sql`begin`);
    try {
      const answers: Answer[] = [];
      for (let at = 0; at < requests.length; at += Math.max(1, size)) answers.push(...(await arraysCall(requests.slice(at, at + size), absent)));
      return answers;
    } finally {
      await t.db.execute(sql`rollback`);
    }
  }

  /**
   * The requests as batches of `size`, one after another in one transaction (rolled back): their
   * answers, and what they left, the counters they moved and the reservations they wrote (caller,
   * amount, money). Through the typed entry as a SQL caller sends it (a list for every field), or
   * through the library's call (only each answer's status, gate or code).
   */
  async function decided(requests: BatchRequest[], size: number, via: "arrays" | "library" = "arrays") {
    await t.db.execute(sql`begin`);
    try {
      const answers: Answer[] = [];
      for (let at = 0; at < requests.length; at += size) {
        const batch = requests.slice(at, at + size);
        if (via === "arrays") answers.push(...(await arraysCall(batch)));
        else answers.push(...(await callReserveBatch(t.db, batch)).map((a) => ("code" in a ? a.code : "gate" in a ? a.gate : a.status) as unknown as Answer));
      }
      const [state] = resultRows<{ counters: unknown; reservations: unknown }>(
        await t.db.execute(sql`select
          (select coalesce(json_agg(json_build_array(c.limit_id, c.scope_key, c.held) order by c.limit_id, c.scope_key), '[]')
           from counters c where c.xmin = xid(pg_current_xact_id())) as counters,
          (select coalesce(json_agg(json_build_array(r.caller, r.amount, r.money) order by r.caller, r.amount, r.money), '[]')
           from reservations r where r.xmin = xid(pg_current_xact_id())) as reservations`),
      );
      return { answers: via === "arrays" ? normal(answers) : answers, state };
    } finally {
      await t.db.execute(sql`rollback`);
    }
  }

  /**
   * The requests decided whole, in batches of 4 (the loop's: under 8, phase 2's statement never
   * runs) and through the library's call, which must agree: answers, counters and reservations.
   * The whole's answers and state.
   */
  async function decidedAlike(requests: BatchRequest[]) {
    const whole = await decided(requests, requests.length);
    expect(whole, JSON.stringify(requests)).toEqual(await decided(requests, 4));
    // The library's call (compact answers, a NULL list for a field no request has, its own ids)
    // takes the same path and leaves the same counters and reservations.
    expect(await decided(requests, requests.length, "library"), JSON.stringify(requests)).toEqual({
      answers: whole.answers.map((a) => a.code ?? a.gate ?? a.status),
      state: whole.state,
    });
    return whole;
  }

  /** An endpoint of `key` at `pricePico` a unit (per-call max 5), with these ceilings (metric, scope, value, each max 1000), made once. */
  async function endpointWithCeilings(key: string, pricePico: number, ceilings: [string, string, number][]) {
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts)
      values (${key}, ${key}, 'tokens', 5, ${JSON.stringify([{ name: "units", pricePico }])}::jsonb)
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
      select e.id, v.metric::ceiling_metric, v.scope::ceiling_scope, 'utc_day', v.value, 1000, v.value
      from endpoints e, jsonb_to_recordset(${JSON.stringify(ceilings.map(([metric, scope, value]) => ({ metric, scope, value })))}::jsonb)
        as v(metric text, scope text, value bigint)
      where e.key = ${key} and not exists (select from ceilings c where c.endpoint_id = e.id)`);
  }

  it("gives every request, good or bad, the same answer either way", async () => {
    await setUp();
    const requests = handPicked;
    const json = normal(await viaJson(requests));
    expect(json.map((a) => a.code ?? a.gate ?? a.status)).toContain("granted");
    expect(normal(await viaArrays(requests))).toEqual(json);
    // The library sends these as typed arrays, and answers them as the JSON entry does.
    const library = await callReserveBatch(t.db, requests);
    expect(library.map((a) => ("code" in a ? a.code : "gate" in a ? a.gate : a.status))).toEqual(json.map((a) => a.code ?? a.gate ?? a.status));
  });

  // A batch whose lists pass input_error's checks as wholes, and whose every text is short enough,
  // is answered without input_error (reserve_batch_arrays' clean): each request here sits between
  // two good ones, with NULL for every field none of the three has (as the library sends them), so
  // a bad one is all that can make its batch unclean, and must still be answered.
  it("answers each request between two good ones as the JSON entry does", async () => {
    await setUp();
    const good: BatchRequest = { endpoint: "typed.email", amount: 1, caller: "acct-9" };
    const edges: BatchRequest[] = [
      { endpoint: "typed.email", amount: 2 ** 53 - 1, caller: "acct-9" },
      { endpoint: "typed.email", amount: 1, caller: "c".repeat(200) },
      { endpoint: "typed.email", amount: 1, caller: "acct-9", requestId: "r".repeat(100) },
      { endpoint: "typed.email", amount: 1, caller: "acct-9", idempotencyKey: "k".repeat(200) },
      { endpoint: "typed.email", amount: 1, caller: "acct-9", ttlSeconds: 1 },
    ];
    for (const r of [...handPicked, ...edges]) {
      // A TTL is checked as a list only when every request names one.
      const neighbour = r.ttlSeconds === undefined ? good : { ...good, ttlSeconds: 300 };
      const batch = [neighbour, r, neighbour];
      expect(normal(await viaArrays(batch, batch.length, "null")), JSON.stringify(r)).toEqual(normal(await viaJson(batch)));
    }
  });

  // ceilings.reserve, one request for SQL callers, calls the typed entry with its typed values.
  it("answers a lone ceilings.reserve(...) as the JSON entry answers the same request", async () => {
    await setUp();
    // A part of null is not sent, as reserve() has always built its request (jsonb_strip_nulls).
    const nullPart = { endpoint: "typed.llm", parts: { input: 100, output: null } as unknown as BatchRequest["parts"] };
    const lone: [BatchRequest, BatchRequest][] = [
      ...handPicked.filter((r) => r.requestId === undefined).map((r): [BatchRequest, BatchRequest] => [r, r]),
      [nullPart, { endpoint: "typed.llm", parts: { input: 100 } }],
    ];
    for (const [r, sent] of lone) {
      const json = normal(await viaJson([sent]));
      await t.db.execute(sql`begin`);
      try {
        const [row] = resultRows<{ a: Answer }>(
          await t.db.execute(sql`select ceilings.reserve(${r.endpoint ?? null}, ${r.amount ?? null}::bigint, ${r.caller ?? null},
            ${r.destination ?? null}, ${r.idempotencyKey ?? null}, ${r.ttlSeconds ?? 300}::int, ${r.destinationKey ?? null},
            ${r.parts ? JSON.stringify(r.parts) : null}::jsonb) as a`),
        );
        expect(normal([row?.a ?? {}]), JSON.stringify(r)).toEqual(json);
      } finally {
        await t.db.execute(sql`rollback`);
      }
    }
    // A JSON null for parts is no parts, as in a JSON request.
    const [row] = resultRows<{ a: Answer }>(await t.db.execute(sql`select ceilings.reserve('typed.email', 1, 'acct-null', parts => 'null'::jsonb) as a`));
    expect(row?.a.status).toBe("granted");
  });

  it("agrees on 400 generated batches of edge values", async () => {
    await setUp();
    const pick = generator(20261206);
    const text = ["acct-1", "acct-2", " acct-1 ", "\u3000acct-1", "a\tb", "x\u0085", "", "c".repeat(201), "é", "😀", 'a"b\\c', "NULL", "{}", ","];
    for (let batch = 0; batch < 400; batch++) {
      const requests: BatchRequest[] = Array.from({ length: 1 + Math.floor(pick([0, 1, 2, 3, 4, 5, 6, 7])) }, () => {
        const r: BatchRequest = { endpoint: pick(["typed.email", "typed.email", "typed.sms", "typed.llm", "no.such", "typed.email\u0001"]) };
        const amount = pick([undefined, 1, 1, 2, 3, 0, -1, 6, 2 ** 53 - 1, 2 ** 53]);
        if (amount !== undefined) r.amount = amount;
        const maybe = (f: keyof BatchRequest, values: readonly unknown[]) => {
          const v = pick(values);
          if (v !== undefined) (r as Record<string, unknown>)[f] = v;
        };
        maybe("caller", [undefined, ...text]);
        maybe("destination", [undefined, undefined, "+14155550100", "a@b.co", " +1 415 555 0100 ", "x\u0007"]);
        maybe("destinationKey", [undefined, undefined, undefined, "key-1", "d".repeat(321)]);
        maybe("idempotencyKey", [undefined, undefined, "k1", "k2", "", "k".repeat(201)]);
        maybe("ttlSeconds", [undefined, undefined, 1, 0, 86400, 86401, -3]);
        maybe("requestId", [undefined, undefined, "req", "r".repeat(101)]);
        maybe("parts", [undefined, undefined, undefined, { input: 10, output: 2 }, { units: 1 }, { input: 10 }, { input: -1, output: 1 }]);
        return r;
      });
      expect(normal(await viaArrays(requests)), JSON.stringify(requests)).toEqual(normal(await viaJson(requests)));
    }
  }, 120_000);

  // A batch of 8 or more on one endpoint whose gates no request can fail but by its own numbers is
  // gated by one statement (phase 2), not the loop: a request naming another endpoint, asking more
  // than the per-call max or more money than can be counted sends the batch back to the loop. The
  // same requests in batches of 4 (the loop's) are decided in the same order against the same
  // counters, so every answer is the same.
  it("gates a batch as one statement exactly as the loop gates it", async () => {
    await setUp();
    const max = Number.MAX_SAFE_INTEGER;
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts) values
        ('gate.small', 'gate.small', 'emails', 3, '[{"name": "units", "pricePico": 2000000}]'),
        ('gate.big', 'gate.big', 'tokens', ${max}, '[{"name": "units", "pricePico": 2000000}]'),
        ('gate.negative', 'gate.negative', 'tokens', 3, '[{"name": "units", "pricePico": -2000000000}]')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
      select e.id, 'units', v.scope::ceiling_scope, 'utc_day', v.value, ${max}, v.value
      from endpoints e join (values ('gate.small', 'global', 1000::bigint), ('gate.small', 'caller', 20), ('gate.big', 'global', ${max}::bigint),
                                  ('gate.negative', 'global', ${max}::bigint))
        v(ep, scope, value) on v.ep = e.key
      where not exists (select from ceilings c where c.endpoint_id = e.id)`);
    await t.ownerDb.execute(
      sql`insert into accounts (account, blocked_at) values ('acct-blocked', now()) on conflict (account) do update set blocked_at = now()`,
    );
    // An endpoint in a per-account budget and no per-caller ceiling: a caller is required all the same.
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts) values ('gate.budgeted', 'gate.budgeted', 'emails', 3, '[{"name": "units", "pricePico": 2000000}]')
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
      select e.id, 'units', 'global', 'utc_day', 1000, 1000, 1000 from endpoints e
      where e.key = 'gate.budgeted' and not exists (select from ceilings c where c.endpoint_id = e.id)`);
    await t.ownerDb.execute(sql`
      insert into budgets (key, name, scope, "window", value, max_value, default_value)
      values ('gate.per-account', 'gate per account', 'account', 'utc_day', 1000000, 1000000, 1000000) on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e
      where b.key = 'gate.per-account' and e.key = 'gate.budgeted' on conflict do nothing`);
    const pick = generator(20261207);
    let plainBatches = 0;
    for (let batch = 0; batch < 150; batch++) {
      const odd = pick([0, 0, 1]) === 1;
      const requests: BatchRequest[] = Array.from({ length: 8 + Math.floor(pick([0, 4, 8, 12])) }, () => {
        const r: BatchRequest = { endpoint: odd ? pick(["gate.small", "gate.small", "gate.small", "no.such", "typed.email"]) : "gate.small" };
        // A plain batch's requests pass every gate but their own input (an amount of 0 or -1, a
        // caller with a tab are answered before it) and the ceilings.
        const amount = odd ? pick([1, 2, 3, 4, 0, -1, 2 ** 53, undefined]) : pick([1, 1, 2, 3, 1, 2, 0, -1]);
        if (amount !== undefined) r.amount = amount;
        const caller = odd
          ? pick(["acct-1", "acct-2", " acct-1 ", "", "a\tb", "acct-blocked"])
          : pick(["acct-1", "acct-2", "acct-3", " acct-1 ", "acct-4", "a\tb"]);
        if (caller !== "") r.caller = caller;
        return r;
      });
      if (!odd) plainBatches++;
      await decidedAlike(requests);
    }
    expect(plainBatches).toBeGreaterThan(50);
    // Each gate the statement stands for, alone in a batch of 8 that would pass every gate without it.
    const plain = (endpoint: string, n: number): BatchRequest[] => Array.from({ length: n }, (_, i) => ({ endpoint, amount: 1, caller: `acct-${i % 3}` }));
    const cases: [BatchRequest, string][] = [
      [{ endpoint: "gate.small", amount: 4, caller: "acct-1" }, "per_call_max"],
      [{ endpoint: "gate.big", amount: 2 ** 53 - 1, caller: "acct-1" }, "invalid_amount"],
      [{ endpoint: "no.such", amount: 1, caller: "acct-1" }, "unknown_endpoint"],
      [{ endpoint: "gate.small", amount: 1 }, "caller_required"],
      [{ endpoint: "gate.small", amount: 1, caller: "acct-blocked" }, "blocked"],
      [{ endpoint: "gate.small", amount: 1, caller: "acct-1", parts: { units: 1 } }, "granted"],
      [{ endpoint: "gate.small", amount: 2, caller: "acct-1", parts: { units: 1 } }, "invalid_amount"],
      [{ endpoint: "gate.small", amount: 3, caller: "acct-1" }, "granted"],
      [{ endpoint: "gate.budgeted", amount: 1 }, "caller_required"],
      // A price below zero (the catalog refuses one; the table does not): a request another gate
      // answers is never made a bigint, whatever its money.
      [{ endpoint: "gate.negative", amount: 9_000_000_000_000_000, caller: "acct-1" }, "per_call_max"],
    ];
    for (const [odd, answer] of cases) {
      const endpoint = odd.endpoint === "no.such" ? "gate.small" : odd.endpoint;
      const requests = [...plain(endpoint, 4), odd, ...plain(endpoint, 3)];
      const whole = await decided(requests, requests.length);
      expect(whole, JSON.stringify(odd)).toEqual(await decided(requests, 4));
      expect(
        whole.answers.map((a) => a.gate ?? a.code ?? a.status),
        JSON.stringify(odd),
      ).toEqual([...Array(4).fill("granted"), answer, ...Array(3).fill("granted")]);
    }
    // And each gate of the endpoint, which the statement is not run for.
    await t.ownerDb.execute(sql`
      insert into endpoints (key, name, unit, per_call_max, parts, throttle_per_minute, archived_at) values
        ('gate.killed', 'gate.killed', 'emails', 3, '[{"name": "units", "pricePico": 0}]', null, null),
        ('gate.throttled', 'gate.throttled', 'emails', 3, '[{"name": "units", "pricePico": 0}]', 2, null),
        ('gate.archived', 'gate.archived', 'emails', 3, '[{"name": "units", "pricePico": 0}]', null, now())
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
      select e.id, 'units', 'global', 'utc_day', case when e.key = 'gate.killed' then 0 else 1000 end, 1000, 1000
      from endpoints e where e.key in ('gate.killed', 'gate.throttled', 'gate.archived')
        and not exists (select from ceilings c where c.endpoint_id = e.id)`);
    for (const [endpoint, answer] of [
      ["gate.killed", "kill_switch"],
      ["gate.throttled", "throttle"],
      ["gate.archived", "endpoint_archived"],
      ["typed.llm", "invalid_parts"],
      ["typed.sms", "destination_required"],
    ] as const) {
      const requests = plain(endpoint, 8);
      const whole = normal(await viaArrays(requests));
      expect(whole, endpoint).toEqual(normal(await viaArrays(requests, 4)));
      expect(
        whole.map((a) => a.gate ?? a.code ?? a.status),
        endpoint,
      ).toContain(answer);
    }
    // A key a reservation already holds is a replay, not a second grant.
    const keyed: BatchRequest[] = [...plain("gate.small", 7), { endpoint: "gate.small", amount: 1, caller: "acct-1", idempotencyKey: "k-replay" }];
    await t.db.execute(sql`begin`);
    try {
      await arraysCall(keyed);
      const again = await arraysCall(keyed);
      expect(again.map((a) => a.replay)).toEqual([...Array(7).fill(false), true]);
    } finally {
      await t.db.execute(sql`rollback`);
    }
  });

  // A batch every request of which passes phase 2's statement is decided as the loop decides it
  // (batches of 4 never take the statement) on every kind of limit such a batch can meet: global
  // and per account, units, calls and money, an account's override, its plan's value, an override
  // of 0, near enough to each limit that each refuses some, and many callers new to the batch; at
  // a price of 2.5 micros a unit, so each request's money is rounded up. And each limit holds:
  // what a batch granted stays within every value that binds it, whichever way it was decided.
  it("decides a batch that passed every gate as the loop decides it, on every kind of limit", async () => {
    await setUp();
    await endpointWithCeilings("pass.rich", 2_500_000, [
      ["units", "global", 24],
      ["calls", "global", 10],
      ["units", "caller", 9],
    ]);
    await t.ownerDb.execute(sql`
      insert into budgets (key, name, scope, "window", value, max_value, default_value) values
        ('pass.global', 'pass global', 'global', 'utc_day', 62, 1000, 62),
        ('pass.account', 'pass per account', 'account', 'utc_day', 26, 1000, 26)
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e
      where b.key in ('pass.global', 'pass.account') and e.key = 'pass.rich' on conflict do nothing`);
    await t.ownerDb.execute(sql`insert into plans (key, name) values ('pass-plan', 'pass plan') on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into plan_limit_values (plan_id, limit_id, value) select p.id, b.limit_id, 8 from plans p, budgets b
      where p.key = 'pass-plan' and b.key = 'pass.account' on conflict do nothing`);
    await t.ownerDb.execute(sql`
      insert into accounts (account, plan_id) select 'acct-plan', p.id from plans p where p.key = 'pass-plan'
      on conflict (account) do update set plan_id = excluded.plan_id`);
    await t.ownerDb.execute(sql`
      insert into limit_overrides (limit_id, caller, value, reason)
      select c.limit_id, v.caller, v.value, 'test' from ceilings c join endpoints e on e.id = c.endpoint_id,
        (values ('acct-over', 4), ('acct-zero', 0)) v(caller, value)
      where e.key = 'pass.rich' and c.scope = 'caller' on conflict do nothing`);
    const [ids] = resultRows<{ ceilings: Record<string, number>; budgets: Record<string, number> }>(
      await t.db.execute(sql`select
        (select json_object_agg(c.metric || '.' || c.scope, c.id) from ceilings c join endpoints e on e.id = c.endpoint_id where e.key = 'pass.rich') as ceilings,
        (select json_object_agg(b.key, b.id) from budgets b where b.key like 'pass.%') as budgets`),
    );
    const money = (units: number) => Math.ceil(units * 2.5);
    const pick = generator(20261208);
    const refusedBy = new Map<string, number>();
    let fitted = 0;
    for (let batch = 0; batch < 60; batch++) {
      // Every fifth batch fits whole (the decision's fast path); the rest crowd the limits.
      const fits = batch % 5 === 0;
      const requests: BatchRequest[] = Array.from({ length: fits ? 8 : 8 + Math.floor(pick([0, 3, 7, 12])) }, (_, i) => ({
        endpoint: "pass.rich",
        amount: fits ? 1 : pick([1, 2, 3, 4, 5]),
        caller: fits ? `acct-fit-${i % 4}` : pick(["acct-1", "acct-2", " acct-1 ", "acct-over", "acct-plan", "acct-zero", `acct-new-${batch}`]),
      }));
      const whole = await decidedAlike(requests);
      // What was granted, by caller and in all, within every value that binds it.
      const granted = requests.filter((_, i) => whole.answers[i]?.status === "granted");
      const units = (caller?: string) =>
        granted.filter((r) => caller === undefined || r.caller?.trim() === caller).reduce((sum, r) => sum + (r.amount ?? 0), 0);
      const spent = (caller?: string) =>
        granted.filter((r) => caller === undefined || r.caller?.trim() === caller).reduce((sum, r) => sum + money(r.amount ?? 0), 0);
      expect(units(), "global units").toBeLessThanOrEqual(24);
      expect(granted.length, "global calls").toBeLessThanOrEqual(10);
      expect(spent(), "global budget").toBeLessThanOrEqual(62);
      for (const caller of new Set(requests.map((r) => r.caller?.trim() ?? ""))) {
        expect(units(caller), caller).toBeLessThanOrEqual(caller === "acct-over" ? 4 : caller === "acct-zero" ? 0 : 9);
        expect(spent(caller), caller).toBeLessThanOrEqual(caller === "acct-plan" ? 8 : 26);
      }
      for (const a of whole.answers) {
        if (a.status !== "refused") continue;
        const limit = Object.entries({ ...ids?.ceilings, ...ids?.budgets }).find(([, id]) => id === (a.ceilingId ?? a.budgetId))?.[0] ?? String(a.gate);
        refusedBy.set(limit, (refusedBy.get(limit) ?? 0) + 1);
      }
      if (fits) {
        expect(whole.answers.map((a) => a.status)).toEqual(Array(8).fill("granted"));
        fitted++;
      }
    }
    expect(fitted).toBe(12);
    // Every limit refused some request: each one's value was the one that bound it.
    expect([...refusedBy.keys()].sort()).toEqual(["calls.global", "pass.account", "pass.global", "units.caller", "units.global"]);
    // With room to spare on every counter a batch fits whole however its charges were summed per
    // counter, and is granted at once: only the right sums leave the counters as the loop does.
    await endpointWithCeilings("pass.roomy", 2_500_000, [
      ["units", "global", 1000],
      ["calls", "global", 1000],
      ["units", "caller", 1000],
    ]);
    await t.ownerDb.execute(sql`
      insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e
      where b.key = 'pass.account' and e.key = 'pass.roomy' on conflict do nothing`);
    for (let batch = 0; batch < 6; batch++) {
      const requests: BatchRequest[] = Array.from({ length: 8 + batch }, (_, i) => ({
        endpoint: "pass.roomy",
        amount: 1 + ((i * 7 + batch) % 3),
        caller: ["acct-1", "acct-2", "acct-3", "acct-4"][(i + batch) % 4],
      }));
      const whole = await decidedAlike(requests);
      expect(whole.answers.map((a) => a.status)).toEqual(requests.map(() => "granted"));
    }
    // A per-account budget switched off binds every account, whatever its plan says (acct-plan's is 8).
    await t.ownerDb.execute(sql`update budgets set value = 0 where key = 'pass.account'`);
    const off = Array.from({ length: 8 }, (_, i): BatchRequest => ({ endpoint: "pass.roomy", amount: 1, caller: i % 2 ? "acct-plan" : "acct-1" }));
    const whole = await decidedAlike(off);
    expect(whole.answers.map((a) => (a.budgetId === ids?.budgets["pass.account"] ? a.gate : a.status))).toEqual(off.map(() => "budget"));
  });

  // On an endpoint whose every limit is global, a batch that passed every gate is charged as lists
  // (phase 4), not by the loop: whole, in batches of 4 (the loop's) and through the library, each
  // batch is decided alike. Some batches hold an input error, which sends them to the loop.
  it("charges a batch on an endpoint of only global limits as the loop charges it", async () => {
    await setUp();
    await endpointWithCeilings("pass.flat", 2_100_000, [
      ["units", "global", 20],
      ["calls", "global", 8],
    ]);
    await t.ownerDb.execute(sql`
      insert into budgets (key, name, scope, "window", value, max_value, default_value) values ('flat.global', 'flat global', 'global', 'utc_day', 46, 1000, 46)
      on conflict (key) do nothing`);
    await t.ownerDb.execute(sql`
      insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b, endpoints e
      where b.key = 'flat.global' and e.key = 'pass.flat' on conflict do nothing`);
    const [ids] = resultRows<{ limits: Record<string, number> }>(
      await t.db.execute(sql`select (select json_object_agg(k, id) from (
        select c.metric::text as k, c.id from ceilings c join endpoints e on e.id = c.endpoint_id where e.key = 'pass.flat'
        union all select b.key, b.id from budgets b where b.key = 'flat.global') x) as limits`),
    );
    const pick = generator(20261207);
    const refusedBy = new Set<string>();
    let fitted = 0;
    for (let batch = 0; batch < 40; batch++) {
      const fits = batch % 5 === 0;
      const requests: BatchRequest[] = Array.from({ length: fits ? 8 : 8 + Math.floor(pick([0, 3, 9])) }, () => ({
        endpoint: "pass.flat",
        amount: fits ? 1 : pick([1, 1, 2, 3, 4, 5, 5, 5, 0]),
        caller: pick([undefined, "acct-1", "acct-2", `acct-new-${batch}`]),
      }));
      const whole = await decidedAlike(requests);
      const granted = requests.filter((_, i) => whole.answers[i]?.status === "granted");
      expect(
        granted.reduce((sum, r) => sum + (r.amount ?? 0), 0),
        "units",
      ).toBeLessThanOrEqual(20);
      expect(granted.length, "calls").toBeLessThanOrEqual(8);
      expect(
        granted.reduce((sum, r) => sum + Math.ceil((r.amount ?? 0) * 2.1), 0),
        "budget",
      ).toBeLessThanOrEqual(46);
      for (const a of whole.answers) {
        const limit = Object.entries(ids?.limits ?? {}).find(([, id]) => id === (a.ceilingId ?? a.budgetId))?.[0];
        if (a.status === "refused" && limit) refusedBy.add(limit);
      }
      if (fits) {
        expect(whole.answers.map((a) => a.status)).toEqual(Array(8).fill("granted"));
        fitted++;
      }
    }
    expect(fitted).toBe(8);
    expect([...refusedBy].sort()).toEqual(["calls", "flat.global", "units"]);
  });

  // A caller is registered as an account the first time it is seen (3c), only if it can be one:
  // one with a control character is an input error and never an account, on either entry.
  it("registers the callers it can take, trimmed, and never one with a control character", async () => {
    await setUp();
    const requests: BatchRequest[] = [
      { endpoint: "typed.email", amount: 1, caller: "acct-reg-1" },
      { endpoint: "typed.email", amount: 1, caller: " acct-reg-2\t" },
      { endpoint: "typed.email", amount: 1, caller: "acct-reg\u00073" },
      { endpoint: "typed.email", amount: 1, caller: "acct-reg\u00854" },
    ];
    const entries = {
      json: sql`select ceilings.reserve_batch(${JSON.stringify(requests)}::jsonb) as a`,
      arrays: sql`select ceilings.reserve_batch_arrays(${arrayLiteral(requests.map((r) => r.endpoint))}::text[], '{1,1,1,1}',
        ${arrayLiteral(requests.map((r) => r.caller))}::text[]) as a`,
    };
    for (const [entry, call] of Object.entries(entries)) {
      await t.db.execute(sql`begin`);
      try {
        const [row] = resultRows<{ a: Answer[] }>(await t.db.execute(call));
        expect(
          row?.a.map((a) => a.code ?? a.status),
          entry,
        ).toEqual(["granted", "granted", "invalid_input", "invalid_input"]);
        const accounts = resultRows<{ account: string }>(await t.db.execute(sql`select account from accounts where account like 'acct-reg%' order by 1`));
        expect(
          accounts.map((a) => a.account),
          entry,
        ).toEqual(["acct-reg-1", "acct-reg-2"]);
      } finally {
        await t.db.execute(sql`rollback`);
      }
    }
  });

  // A batch whose charges all fit is decided without the loop over its requests; a refusal made
  // before the counters were locked (here the per-call max) is logged all the same.
  it("logs the refusals of a batch whose charges all fit", async () => {
    await setUp();
    const answers = await callReserveBatch(t.db, [
      { endpoint: "typed.email", amount: 1, caller: "acct-log-1", requestId: "fit-1" },
      { endpoint: "typed.email", amount: 4, caller: "acct-log-2", requestId: "fit-2" },
    ]);
    expect(answers.map((a) => ("gate" in a ? a.gate : a.status))).toEqual(["granted", "per_call_max"]);
    const [row] = resultRows<{ n: number }>(
      await t.db.execute(sql`select coalesce(sum(count), 0)::int as n from refusals where gate = 'per_call_max' and request_id = 'fit-2'`),
    );
    expect(row?.n).toBe(1);
  });

  // An endpoint of its own (the fixture's), with room whatever the tests before spent.
  const idsEndpoint = () => makeEndpoint(t.db, { perCallMax: 3, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });

  it("writes each new reservation under the id its caller made, and the library makes a UUIDv7 for each", async () => {
    const { key } = await idsEndpoint();
    const before = Date.now();
    const answers = await callReserveBatch(t.db, [
      { endpoint: key, amount: 1, caller: "acct-id-1" },
      { endpoint: key, amount: 1, caller: "acct-id-2" },
    ]);
    const ids = answers.map((a) => (a.status === "granted" ? a.reservationId : ""));
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // Its first 48 bits are the milliseconds it was made at.
      const ms = parseInt(id.replace(/-/g, "").slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(Date.now());
    }
    const stored = resultRows<{ id: string }>(await t.db.execute(sql`select id::text as id from reservations where caller like 'acct-id-%' order by caller`));
    expect(stored.map((r) => r.id)).toEqual(ids);

    // From SQL: the ids sent are the ones written and answered; none is made for a request refused.
    // The compact answer does not send them back (its caller has them), the full one names each.
    const mine = ["0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c8d", "0190a3c4-5e6f-7a1b-9c2d-3e4f5a6b7c8e"];
    const [row] = resultRows<{ batch: { reservationIds: string | null } }>(
      await t.db.execute(sql`select ceilings.reserve_batch_arrays(${arrayLiteral([key, key])}::text[], '{1,4}', '{acct-id-3,acct-id-3}',
        compact => true, reservation_ids => ${arrayLiteral(mine)}::uuid[]) as batch`),
    );
    expect(row?.batch.reservationIds).toBeNull();
    const [full] = resultRows<{ batch: Answer[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch_arrays(${arrayLiteral([key])}::text[], '{1}', '{acct-id-6}',
        reservation_ids => ${arrayLiteral([mine[1]])}::uuid[]) as batch`),
    );
    expect(full?.batch[0]).toMatchObject({ status: "granted", reservationId: mine[1] });
    const written = resultRows<{ id: string }>(
      await t.db.execute(sql`select id::text as id from reservations where caller in ('acct-id-3', 'acct-id-6') order by caller`),
    );
    expect(written.map((r) => r.id)).toEqual(mine);
  });

  it("refuses a missing id, a list of another length, and the same id twice, writing nothing", async () => {
    const { key } = await idsEndpoint();
    const id = "0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c99";
    for (const ids of ["{NULL}", `{${id},${id}}`]) {
      await expect(
        t.db.execute(sql`select ceilings.reserve_batch_arrays(${arrayLiteral([key])}::text[], '{1}', '{acct-id-4}', reservation_ids => ${ids}::uuid[])`),
      ).rejects.toMatchObject({ cause: { code: "22023" } });
    }
    // Two requests under one id: the second write fails, and with it the batch, nothing charged.
    await expect(
      t.db.execute(sql`select ceilings.reserve_batch_arrays(${arrayLiteral([key, key])}::text[], '{1,1}', '{acct-id-4,acct-id-5}',
        reservation_ids => ${`{${id},${id}}`}::uuid[])`),
    ).rejects.toMatchObject({ cause: { code: "23505" } });
    const [row] = resultRows<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from reservations where caller in ('acct-id-4', 'acct-id-5')`));
    expect(row?.n).toBe(0);
  });

  it("refuses arrays of different lengths, and an input error that is not an error", async () => {
    await expect(t.db.execute(sql`select ceilings.reserve_batch_arrays('{a,b}', '{1}')`)).rejects.toMatchObject({ cause: { code: "22023" } });
    // As long (or as high), but not read by the same positions: numbered from 0 or 2 (request 2
    // would take request 1's amount, or request 1 request 2's key), or of two dimensions.
    const { key } = await idsEndpoint();
    const keys = arrayLiteral([key, key]);
    for (const [name, call] of [
      ["amounts from 2", sql`select ceilings.reserve_batch_arrays(${keys}::text[], '[2:3]={1,2}', '{acct-lb-1,acct-lb-2}')`],
      ["amounts from 0", sql`select ceilings.reserve_batch_arrays(${keys}::text[], '[0:1]={1,2}', '{acct-lb-1,acct-lb-2}')`],
      ["keys from 0", sql`select ceilings.reserve_batch_arrays(${`[0:1]=${keys}`}::text[], '{1,2}', '{acct-lb-1,acct-lb-2}')`],
      ["callers from 2", sql`select ceilings.reserve_batch_arrays(${keys}::text[], '{1,2}', '[2:3]={acct-lb-1,acct-lb-2}')`],
      ["one amount at 2", sql`select ceilings.reserve_batch_arrays(${keys}::text[], '[2:2]={1}', '{acct-lb-1,acct-lb-2}')`],
      ["callers 2-D", sql`select ceilings.reserve_batch_arrays(${keys}::text[], '{1,2}', '{{acct-lb-1},{acct-lb-2}}')`],
      ["keys 2-D", sql`select ceilings.reserve_batch_arrays(${`{{${key}},{${key}}}`}::text[], '{1,2}', '{acct-lb-1,acct-lb-2}')`],
      [
        "ids from 0",
        sql`select ceilings.reserve_batch_arrays(${keys}::text[], '{1,2}', '{acct-lb-1,acct-lb-2}', reservation_ids =>
        '[0:1]={0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c01,0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c02}')`,
      ],
      [
        "ids 2-D",
        sql`select ceilings.reserve_batch_arrays(${keys}::text[], '{1,2}', '{acct-lb-1,acct-lb-2}', reservation_ids =>
        '{{0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c01},{0190a3c4-5e6f-7a1b-8c2d-3e4f5a6b7c02}}')`,
      ],
    ] as const) {
      await expect(t.db.execute(call), name).rejects.toMatchObject({ cause: { code: "22023" } });
    }
    const [row] = resultRows<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from reservations where caller like 'acct-lb-%'`));
    expect(row?.n).toBe(0);
    // Numbered from 1, the same batch is decided.
    const [ok] = resultRows<{ a: { status: string }[] }>(
      await t.db.execute(sql`select ceilings.reserve_batch_arrays(${keys}::text[], '[1:2]={1,2}', '{acct-lb-1,acct-lb-2}') as a`),
    );
    expect(ok?.a.map((answer) => answer.status)).toEqual(["granted", "granted"]);
    await expect(
      t.db.execute(sql`select ceilings.reserve_batch_arrays('{a}', '{1}', input_errors => array['{"status": "granted"}'::jsonb])`),
    ).rejects.toMatchObject({ cause: { code: "22023" } });
  });

  it("checks every request an input error does not answer, even when the caller passed input_errors", async () => {
    const { key } = await idsEndpoint();
    const keys = arrayLiteral([key, key, key, key]);
    // NULL in input_errors is "no error found as JSON", never "not to be checked". Unchecked, the
    // amount of -5 reached the reservations' CHECK and the whole batch raised (23514): one bad
    // request took the three others with it, and a caller with a tab would have been written.
    const [row] = resultRows<{ a: { status: string; code?: string }[] }>(
      await t.db
        .execute(sql`select ceilings.reserve_batch_arrays(${keys}::text[], '{-5,0,1,1}', ${arrayLiteral(["acct-ie-1", "acct-ie-2", "ac\tct", "acct-ie-3"])}::text[],
        input_errors => '{NULL,NULL,NULL,NULL}') as a`),
    );
    expect(row?.a.map((answer) => answer.code ?? answer.status)).toEqual(["invalid_amount", "invalid_amount", "invalid_input", "granted"]);
    const [held] = resultRows<{ n: number; used: string }>(
      await t.db.execute(sql`select (select count(*)::int from reservations where caller like 'acct-ie-%' or caller like 'ac%ct') as n,
        (select sum(held + settled)::text from counters u join ceilings c on c.limit_id = u.limit_id join endpoints e on e.id = c.endpoint_id where e.key = ${key}) as used`),
    );
    expect(held).toEqual({ n: 1, used: "1" });
  });
});
