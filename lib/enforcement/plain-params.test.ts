import { describe, expect, it } from "vitest";
import { plainReserveParams, ReserveParams } from "./types";

// The library reads the common call by hand (plainReserveParams) and every other one with zod
// (ReserveParams). The hand-read path must never accept what zod refuses, nor give what zod would
// give otherwise (a caller zod trims, a field zod strips): every call it takes is compared here
// with zod's output, over the strings and numbers at the edges of each check.

const strings = [
  "a",
  "acct_1",
  "bench.one",
  "a b",
  " a",
  "a ",
  "\ta",
  "a\n",
  "a\u0000b",
  "a\u007f",
  "\u0085a",
  "a\u00a0",
  "\u2003a",
  "a\ufeff",
  "caf\u00e9",
  "\ud83d\ude00",
  "a\ud800",
  "\udc00a",
  "",
  " ",
  "x".repeat(64),
  "x".repeat(65),
  "x".repeat(100),
  "x".repeat(101),
  "x".repeat(200),
  "x".repeat(201),
  "~!@#$%^&*()",
];
const amounts: unknown[] = [1, 7, 0, -1, 1.5, 2 ** 53 - 1, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, "5", null, undefined];
const ttls: unknown[] = [undefined, 1, 60, 86_400, 0, 86_401, 1.5, "60", null];

/** Deterministic choices, so a failure is the same on every run. */
function* calls(): Generator<Record<string, unknown>> {
  let seed = 7;
  const pick = <T>(list: readonly T[]): T => {
    seed = (seed * 48271) % 2147483647;
    return list[seed % list.length] as T;
  };
  // Weighted toward values every check passes, so many calls pass all of them.
  const good = ["acct_1", "bench.one", "k-9", "x".repeat(64)];
  const optional = [...strings, ...good, ...good, ...good, undefined, undefined, undefined, undefined, undefined, null, 5];
  for (let i = 0; i < 50_000; i++) {
    const call: Record<string, unknown> = {
      endpoint: pick([...strings, ...good, ...good, ...good, 3, undefined]),
      amount: pick([...amounts, 1, 1, 1, 1, 1, 1]),
    };
    for (const field of ["caller", "idempotencyKey", "requestId"]) {
      const value = pick(optional);
      if (value !== undefined || pick([true, false])) call[field] = value;
    }
    const ttl = pick([...ttls, undefined, undefined, undefined]);
    if (ttl !== undefined) call.ttlSeconds = ttl;
    const extra = pick([0, 0, 0, 0, 1, 2, 3, 4]);
    if (extra === 1) call.parts = { units: 1 };
    if (extra === 2) call.destination = "ops@example.com";
    if (extra === 3) call.destinationKey = "ops@example.com";
    if (extra === 4) call.unknownField = "stripped";
    yield call;
  }
}

/** zod's output without the keys it keeps with an undefined value. */
function defined(value: object): object {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

describe("plainReserveParams", () => {
  it("takes only calls zod takes, and gives what zod gives for each", () => {
    let taken = 0;
    let zodTakes = 0;
    for (const call of calls()) {
      const fast = plainReserveParams(call);
      const parsed = ReserveParams.safeParse(call);
      if (parsed.success) zodTakes++;
      if (fast === undefined) continue;
      taken++;
      expect({ call, success: parsed.success }).toEqual({ call, success: true });
      if (parsed.success) expect({ call, fast }).toEqual({ call, fast: defined(parsed.data) });
    }
    // Both paths are exercised: the hand-read one takes many calls, and zod takes some it leaves.
    expect(taken).toBeGreaterThan(500);
    expect(zodTakes).toBeGreaterThan(taken);
  });

  it("takes the library's common calls, and leaves the rest to zod", () => {
    expect(plainReserveParams({ endpoint: "email.send", amount: 1, caller: "acct_42" })).toEqual({ endpoint: "email.send", amount: 1, caller: "acct_42" });
    expect(plainReserveParams({ endpoint: "e", amount: 3, caller: "a", idempotencyKey: "k-1", ttlSeconds: 60, requestId: "r" })).toEqual({
      endpoint: "e",
      amount: 3,
      caller: "a",
      idempotencyKey: "k-1",
      ttlSeconds: 60,
      requestId: "r",
    });
    // zod trims this caller, strips the unknown field, refuses the rest: none is read by hand.
    for (const call of [
      { endpoint: "e", amount: 1, caller: " a " },
      { endpoint: "e", amount: 1, extra: true },
      { endpoint: "e", parts: { units: 1 } },
      { endpoint: "e", amount: 0 },
      { endpoint: "e", amount: 1, caller: "" },
      null,
      "e",
      // An array with the fields set on it: zod's object refuses an array.
      Object.assign([], { endpoint: "e", amount: 1 }),
    ]) {
      const fast = plainReserveParams(call);
      if (call !== null && typeof call === "object" && "extra" in call) expect(fast).toEqual({ endpoint: "e", amount: 1 });
      else expect(fast).toBeUndefined();
    }
  });
});
