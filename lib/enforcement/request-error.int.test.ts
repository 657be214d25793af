import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";

// ceilings.request_error is the input check every request of reserve_batch passes, whatever language
// sent it: the TypeScript library checks before it sends, a service calling the SQL function does
// not. Each row is one request as JSON and the answer it gets (null: the database can take it), in
// the order the checks run: the first that fails answers.

const TOO_LONG = "caller (200), destination (320) or requestId (100) is too long";
const AMOUNT = "amount must be a positive whole number, got";
const TTL = "ttlSeconds must be a whole number between 1 and 86400";
const base = { endpoint: "e", amount: 1 };

const cases: [unknown, string | null, string | null][] = [
  [[], "invalid_input", "each request must be a JSON object"],
  ["x", "invalid_input", "each request must be a JSON object"],
  [null, "invalid_input", "each request must be a JSON object"],
  [{ endpoint: 5, amount: 1 }, "invalid_input", "endpoint must be a string"],
  [{ ...base, caller: {} }, "invalid_input", "caller must be a string"],
  [{ ...base, requestId: true }, "invalid_input", "requestId must be a string"],
  [{ ...base, destination: ["a"] }, "invalid_input", "destination must be a string"],
  // The first field in the checks' order answers.
  [{ ...base, destinationKey: 7, idempotencyKey: 8 }, "invalid_input", "destinationKey must be a string"],
  [{ ...base, idempotencyKey: 8 }, "invalid_input", "idempotencyKey must be a string"],
  [{ ...base, endpoint: "e\u0007" }, "invalid_input", "endpoint must not contain control characters"],
  // A caller is checked trimmed: a tab or a no-break space around it is whitespace, one inside is not.
  [{ ...base, caller: " acct\t" }, null, null],
  [{ ...base, caller: "\u3000acct\u00a0" }, null, null],
  [{ ...base, caller: "ac\tct" }, "invalid_input", "caller must not contain control characters"],
  [{ ...base, caller: "a\u009fb" }, "invalid_input", "caller must not contain control characters"],
  [{ ...base, requestId: "r\u0085" }, "invalid_input", "requestId must not contain control characters"],
  [{ ...base, destination: "a@b\n" }, "invalid_input", "destination must not contain control characters"],
  [{ ...base, parts: [1] }, "invalid_parts", 'parts must be an object of units per part, e.g. {"input": 1200, "output": 800}'],
  [{ ...base, parts: "x" }, "invalid_parts", 'parts must be an object of units per part, e.g. {"input": 1200, "output": 800}'],
  [{ endpoint: "e", parts: { input: 1 }, amount: "1" }, "invalid_amount", `${AMOUNT} "1"`],
  [{ endpoint: "e", parts: { input: 1 }, amount: 0 }, "invalid_amount", `${AMOUNT} 0`],
  [{ endpoint: "e", parts: { input: 1 } }, null, null],
  [{ endpoint: "e", parts: { input: 1 }, amount: null }, null, null],
  [{ ...base, parts: null }, null, null],
  [{ endpoint: "e", parts: null }, "invalid_amount", `${AMOUNT} null`],
  [{ endpoint: "e" }, "invalid_amount", `${AMOUNT} null`],
  [{ endpoint: "e", amount: null }, "invalid_amount", `${AMOUNT} null`],
  [{ endpoint: "e", amount: 0 }, "invalid_amount", `${AMOUNT} 0`],
  [{ endpoint: "e", amount: -5 }, "invalid_amount", `${AMOUNT} -5`],
  [{ endpoint: "e", amount: 1.5 }, "invalid_amount", `${AMOUNT} 1.5`],
  [{ endpoint: "e", amount: "5" }, "invalid_amount", `${AMOUNT} "5"`],
  [{ endpoint: "e", amount: 9007199254740991 }, null, null],
  [{ endpoint: "e", amount: 9007199254740992 }, "invalid_amount", `${AMOUNT} 9007199254740992`],
  [{ ...base, ttlSeconds: 0 }, "invalid_ttl", TTL],
  [{ ...base, ttlSeconds: 86401 }, "invalid_ttl", TTL],
  [{ ...base, ttlSeconds: 1.5 }, "invalid_ttl", TTL],
  [{ ...base, ttlSeconds: 86400 }, null, null],
  [{ ...base, ttlSeconds: null }, null, null],
  // A TTL written as a string of digits is read as its number, as it always was; anything else is not.
  [{ ...base, ttlSeconds: "60" }, null, null],
  [{ ...base, ttlSeconds: "" }, "invalid_ttl", TTL],
  [{ ...base, ttlSeconds: " 60" }, "invalid_ttl", TTL],
  [{ ...base, ttlSeconds: "86401" }, "invalid_ttl", TTL],
  [{ ...base, idempotencyKey: "k".repeat(201) }, "invalid_idempotency_key", "idempotencyKey must be at most 200 characters"],
  [{ ...base, idempotencyKey: "k".repeat(200) }, null, null],
  [{ ...base, caller: "c".repeat(201) }, "invalid_input", TOO_LONG],
  [{ ...base, caller: `  ${"c".repeat(200)}  ` }, null, null],
  [{ ...base, destination: "d".repeat(321) }, "invalid_input", TOO_LONG],
  [{ ...base, destinationKey: "d".repeat(321) }, "invalid_input", TOO_LONG],
  [{ ...base, requestId: "r".repeat(101) }, "invalid_input", TOO_LONG],
  [{ ...base, requestId: "r".repeat(100) }, null, null],
];

describe.skipIf(skipWithoutDatabase())("request_error: the input check of every request", () => {
  const t = useTestDatabase("request_error", { max: 1 });

  it("answers each malformed request with its code and message, and takes the well-formed ones", async () => {
    const rows = resultRows<{ code: string | null; message: string | null }>(
      await t.db.execute(sql`
        select e->>'code' as code, e->>'message' as message
        from jsonb_array_elements(${JSON.stringify(cases.map(([request]) => request))}::jsonb) with ordinality r(request, o)
        cross join lateral (select ceilings.request_error(r.request) as e) x
        order by r.o`),
    );
    expect(rows.map((r, i) => ({ request: cases[i]?.[0], ...r }))).toEqual(cases.map(([request, code, message]) => ({ request, code, message })));
  });

  // Every request of a batch runs these checks: the planner must inline them into the batch's
  // statement (an argument that costs more than 10 operators and is read twice stops it, and each
  // request then calls a SQL function: a quarter more instructions a batch of the JSON entry).
  it("is inlined where a batch calls it, from either entry, with no function call per request", async () => {
    const plan = async (query: ReturnType<typeof sql>) =>
      resultRows<{ "QUERY PLAN": string }>(await t.db.execute(sql`explain verbose ${query}`))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    const json = await plan(sql`select ceilings.request_error(r.request) from jsonb_array_elements('[{"amount": 1}]'::jsonb) r(request)`);
    const typed = await plan(sql`
      select ceilings.input_error(a.e[g.i], a.c[g.i], a.c[g.i], a.c[g.i], a.c[g.i], a.c[g.i], a.p[g.i], a.n[g.i], null, a.t[g.i], a.b)
      from (select '{e}'::text[] e, '{c}'::text[] c, '{null}'::jsonb[] p, '{1}'::bigint[] n, '{null}'::int[] t, random() > 2 b) a,
        generate_series(1, 1) g(i)`);
    for (const text of [json, typed]) {
      expect(text).toMatch(/jsonb_build_object/);
      expect(text).not.toMatch(/(request_error|input_error|canonical_caller|has_control_chars)\(/);
    }
  });

  // 1e9 is the number 1000000000 to JSON: a whole amount, as a service in another language may write it.
  it("takes an amount written with an exponent as the whole number it is", async () => {
    const [row] = resultRows<{ e: unknown }>(await t.db.execute(sql`select ceilings.request_error('{"endpoint": "e", "amount": 1e9}'::jsonb) as e`));
    expect(row?.e).toBeNull();
  });

  // The amount is read as a number, so how it was written matters only through its value and scale:
  // 1.0 and 10e-1 are not whole numbers to Postgres (they keep a decimal place), 1E2 and 100.0e0... are
  // what they print as.
  it.each([
    ['{"endpoint": "e", "amount": 1E2}', null],
    ['{"endpoint": "e", "amount": 1.0}', "amount must be a positive whole number, got 1.0"],
    ['{"endpoint": "e", "amount": 10e-1}', "amount must be a positive whole number, got 1.0"],
    ['{"endpoint": "e", "amount": 9.007199254740991e15}', null],
    ['{"endpoint": "e", "amount": 1e16}', "amount must be a positive whole number, got 10000000000000000"],
    ['{"endpoint": "e", "amount": -0}', "amount must be a positive whole number, got 0"],
  ])("reads the amount of %s by its value", async (request, message) => {
    const [row] = resultRows<{ message: string | null }>(await t.db.execute(sql`select ceilings.request_error(${request}::jsonb)->>'message' as message`));
    expect(row?.message ?? null).toBe(message);
  });
});
