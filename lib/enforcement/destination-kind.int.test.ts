import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "./reserve";
import { counterTotals, makeEndpoint } from "./test-fixtures";
import { useRacingPools } from "./test-suite";

// A cooldown declares what it counts (destinationKind): one per email address cannot be dodged by
// sending the same message to a phone number, which would open a cooldown window of its own.

describe.skipIf(skipWithoutDatabase())("a cooldown's destination kind binds", () => {
  const t = useTestDatabase("destination_kind", { max: 8 });
  const pools = useRacingPools(t, 3, 6, { maxInFlight: 4, maxBatch: 16 });

  const cooldownPer = (destinationKind: "email" | "phone") =>
    makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 1, windowSeconds: 3600, destinationKind },
      ],
    });

  it("refuses a phone number where the cooldown counts email addresses, in parallel from three pools, charging nothing", async () => {
    const e = await cooldownPer("email");
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        reserve(pools.dbs[i % 3] ?? t.db, { endpoint: e.key, amount: 1, destination: i % 2 ? "+1 415 555 0100" : "Maria@Example.com" }),
      ),
    );
    const refusedInput = outcomes.filter((o) => o.status === "rejected");
    expect(refusedInput).toHaveLength(30);
    for (const o of refusedInput)
      expect(o.status === "rejected" && o.reason).toMatchObject({ code: "invalid_destination", message: expect.stringContaining("email address") });
    const decisions = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    expect(decisions.filter((d) => d.status === "granted")).toHaveLength(1);
    expect(decisions.filter((d) => d.status === "refused" && d.gate === "cooldown")).toHaveLength(29);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 1, settled: 0 });
  });

  it("refuses an address where it counts phone numbers, for SQL callers too", async () => {
    const e = await cooldownPer("phone");
    for (const destination of ["maria@example.com", "device-4f2a", "https://hooks.example.com/x"]) {
      await expect(reserve(t.db, { endpoint: e.key, amount: 1, destination })).rejects.toMatchObject({ code: "invalid_destination" });
    }
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, destination: "+14155550100" })).toMatchObject({ status: "granted" });
    const [row] = resultRows<{ answer: { status: string; code: string } }>(
      await t.db.execute(sql`select ceilings.reserve(${e.key}, 1, null, 'maria@example.com') as answer`),
    );
    expect(row?.answer).toMatchObject({ status: "error", code: "invalid_destination" });
    // Digits as a SQL caller types them are a phone number.
    const [typed] = resultRows<{ answer: { status: string } }>(await t.db.execute(sql`select ceilings.reserve(${e.key}, 1, null, '(415) 555-0199') as answer`));
    expect(typed?.answer).toMatchObject({ status: "granted" });
  });

  it("counts any destination when the cooldown names no kind", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 1, windowSeconds: 3600 },
      ],
    });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, destination: "maria@example.com" })).toMatchObject({ status: "granted" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, destination: "+14155550100" })).toMatchObject({ status: "granted" });
  });
});
