import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint, updateEndpoint } from "@/lib/catalog";

// The worst case of one call in money (its per-call max at the dearest part's price) must be a
// number the system can count: reserve_batch refuses a worst case past 2^53 - 1 micros as "more
// money than can be counted", so an endpoint that allows one would refuse calls within its own
// per-call max. The catalog says so when the endpoint is saved.

const actor = { type: "system" as const, name: "review test" };
const ceilings = [{ metric: "units" as const, scope: "global" as const, window: "utc_day" as const, value: 1_000, min: 0, max: 1_000, default: 1_000 }];

describe.skipIf(skipWithoutDatabase())("a per-call worst case in money past 2^53 micros", () => {
  const t = useTestDatabase("per_call_money");

  it("is refused on create and on edit, naming the per-call max, and a countable one is taken", async () => {
    const spec = (key: string, perCallMax: number, price: string) => ({
      key,
      name: key,
      unit: "tokens",
      parts: [{ name: "units", price }],
      perCallMax,
      ceilings,
    });
    // 2^53 - 1 units at $1000 each: about 9 * 10^24 micros.
    await expect(createEndpoint(t.db, { spec: spec("t.dear", Number.MAX_SAFE_INTEGER, "1000"), actor, reason: "test" })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("perCallMax"),
    });
    const ok = await createEndpoint(t.db, { spec: spec("t.fine", 9_000_000, "1000"), actor, reason: "test" });
    expect(ok.perCallMax).toBe(9_000_000);
    const { key: _key, ceilings: _ceilings, ...fields } = spec("t.fine", 10_000_000, "1000");
    await expect(
      updateEndpoint(t.db, { key: "t.fine", expectedVersion: ok.version, fields, actor, reason: "test", confirm: "10000000" }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("perCallMax"),
    });
  });
});
