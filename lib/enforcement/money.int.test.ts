import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { seededRandom } from "@/lib/demo/random";
import { budgetUsage, makeBudget, priceEndpoint } from "./budget-fixtures";
import { callReserveBatch } from "./batcher";
import { makeEndpoint } from "./test-fixtures";

// Money is rounded up once per reservation, never down: held against exact rational arithmetic
// (BigInt) over random prices, parts and amounts, in the function the batch and settle use
// (money_of) and in the batch's own one-part arithmetic.

/** ceil(sum(units * picos) / 10^6), exactly. */
function exactMicros(parts: Record<string, number>, prices: Record<string, number>): bigint {
  let picos = 0n;
  for (const [name, units] of Object.entries(parts)) picos += BigInt(units) * BigInt(prices[name] ?? 0);
  return (picos + 999_999n) / 1_000_000n;
}

describe.skipIf(skipWithoutDatabase())("money", () => {
  const t = useTestDatabase("money", { max: 4 });
  const random = seededRandom(7).next;
  // Prices from a thousandth of a pico to $1,000 a unit, many with digits below a micro.
  const price = () => Math.floor(random() ** 4 * 1e15) + (random() < 0.5 ? Math.floor(random() * 1_000_000) : 0);
  const units = () => (random() < 0.1 ? 0 : Math.floor(random() ** 3 * 10_000_000));

  it("money_of rounds up once and never under-counts, over 5,000 random prices and parts", async () => {
    const cases = Array.from({ length: 5_000 }, () => {
      const names = ["input", "output", "cached"].slice(0, 1 + Math.floor(random() * 3));
      return { parts: Object.fromEntries(names.map((n) => [n, units()])), prices: Object.fromEntries(names.map((n) => [n, price()])) };
    });
    const rows = resultRows<{ i: number; micros: string }>(
      await t.db.execute(sql`select (c.ordinality - 1)::int as i, ceilings.money_of(c.value->'parts', c.value->'prices')::text as micros
                             from jsonb_array_elements(${JSON.stringify(cases)}::jsonb) with ordinality c`),
    );
    const exact = (i: number) => {
      const c = cases[i];
      if (!c) throw new Error(`no case ${i}`);
      return exactMicros(c.parts, c.prices);
    };
    const wrong = rows.filter((r) => BigInt(r.micros) !== exact(r.i));
    expect(rows).toHaveLength(5_000);
    expect(wrong.map((r) => [r.micros, exact(r.i).toString(), JSON.stringify(cases[r.i])])).toEqual([]);
  });

  it("reserve_batch charges a budget the exact rounded-up money of one amount or of parts", async () => {
    const single = await makeEndpoint(t.db, { perCallMax: 100_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1e12 }] });
    const parted = await makeEndpoint(t.db, { perCallMax: 100_000_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1e12 }] });
    const one = { units: 2_500_001 };
    const two = { input: 333_333, output: 7_777_777 };
    await priceEndpoint(t.db, single.endpointId, one);
    await priceEndpoint(t.db, parted.endpointId, two);
    const budget = await makeBudget(t.db, { endpointIds: [single.endpointId, parted.endpointId], value: 1e15 });
    let expected = 0n;
    const requests = Array.from({ length: 400 }, (_, i) => {
      if (i % 2 === 0) {
        const amount = 1 + Math.floor(random() * 9_999_999);
        expected += exactMicros({ units: amount }, one);
        return { endpoint: single.key, amount };
      }
      const parts = { input: units(), output: 1 + units() };
      expected += exactMicros(parts, two);
      return { endpoint: parted.key, parts };
    });
    const answers = await callReserveBatch(t.db, requests);
    expect(answers.filter((a) => a.status !== "granted").slice(0, 2)).toEqual([]);
    expect(BigInt((await budgetUsage(t.db, budget.id)).held)).toBe(expected);
  });

  it("every reservation keeps the prices it was granted at, in a budget or not, and settles at them after the prices change", async () => {
    const parted = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1e9 }] });
    await priceEndpoint(t.db, parted.endpointId, { input: 1_000_000, output: 2_000_000 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => callReserveBatch(t.db, [{ endpoint: parted.key, parts: { input: 10, output: 10 } }])));
    const ids = answers.flat().map((a) => (a.status === "granted" ? a.reservationId : ""));
    expect(ids.filter((id) => id !== "")).toHaveLength(8);
    // Every price raised since: the reservations keep what they were granted at.
    await priceEndpoint(t.db, parted.endpointId, { input: 5_000_000, output: 9_000_000 });
    await Promise.all(
      ids.map((id) => t.db.execute(sql`select ceilings.settle(${id}::uuid, null, actual_parts => ${JSON.stringify({ input: 4, output: 3 })}::jsonb)`)),
    );
    const rows = resultRows<{ prices: Record<string, number>; settled_money: string }>(
      await t.db.execute(sql`select prices, settled_money::text from reservations where endpoint_id = ${parted.endpointId}`),
    );
    expect(rows).toEqual(Array(8).fill({ prices: { input: 1_000_000, output: 2_000_000 }, settled_money: String(4 * 1 + 3 * 2) }));
  });
});
