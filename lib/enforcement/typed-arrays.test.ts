import { describe, expect, it } from "vitest";
import { typedArrays, type BatchRequest } from "./batcher";

// The library sends a batch as typed arrays (reserve_batch_arrays) when every value is of its type,
// and as JSON (reserve_batch) otherwise, so a value of the wrong type gets the contract's answer.
// typed-entry.int.test.ts holds the two entries to the same answers.

const ok: BatchRequest = { endpoint: "e", amount: 1, caller: "acct" };
const as = (r: Record<string, unknown>) => r as unknown as BatchRequest;

describe("typedArrays", () => {
  it("writes each field as one array literal, every value quoted and escaped, NULL for none, and NULL for a field no request has", () => {
    const arrays = typedArrays([
      { endpoint: "e", amount: 2, caller: 'a"b\\c', idempotencyKey: "{,}", ttlSeconds: 60 },
      { endpoint: "e", parts: { input: 3, output: 1 }, destination: "NULL", requestId: "r" },
    ]);
    expect(arrays).toEqual([
      '{"e","e"}',
      '{"2",NULL}',
      '{"a\\"b\\\\c",NULL}',
      '{NULL,"NULL"}',
      null,
      '{"{,}",NULL}',
      '{"60",NULL}',
      '{NULL,"r"}',
      '{NULL,"{\\"input\\":3,\\"output\\":1}"}',
    ]);
  });

  it("takes bad values of the right type: the database answers them", () => {
    for (const r of [{ ...ok, amount: 0 }, { ...ok, amount: -5 }, { ...ok, ttlSeconds: 0 }, { ...ok, caller: "a\tb" }, { endpoint: "" }]) {
      expect(typedArrays([ok, r]), JSON.stringify(r)).toBeDefined();
    }
  });

  it("sends the batch as JSON when a value is not of its type, or Postgres text cannot hold it", () => {
    for (const r of [
      as({ ...ok, amount: "5" }),
      as({ ...ok, amount: 1.5 }),
      as({ ...ok, amount: 2 ** 53 }),
      as({ ...ok, amount: Number.NaN }),
      as({ ...ok, ttlSeconds: 1.5 }),
      as({ ...ok, ttlSeconds: 2 ** 31 }),
      as({ ...ok, endpoint: 5 }),
      as({ ...ok, caller: {} }),
      as({ ...ok, parts: [1] }),
      as({ ...ok, parts: "x" }),
      { ...ok, caller: "acct\u0000x" },
      { ...ok, idempotencyKey: "k\ud800" },
      { ...ok, parts: { "in\u0000": 1 } },
    ]) {
      expect(typedArrays([ok, r]), JSON.stringify(r)).toBeUndefined();
    }
  });
});
