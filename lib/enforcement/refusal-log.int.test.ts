import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { priceEndpoint } from "./budget-fixtures";
import { logUnavailable, refusalLogFailures } from "./refusal-log";
import { reserve } from "./reserve";
import { makeEndpoint, startFixtureProcess } from "./test-fixtures";

// Every refusal reaches the log, whatever its request's shape: a parts request refused
// `unavailable` (a lock timeout) is stored with the total of its parts as its amount, from several
// processes at once; one row that cannot be written is lost alone and counted.

describe.skipIf(skipWithoutDatabase())("the refusal log of requests the database did not decide", () => {
  const t = useTestDatabase("refusallog", { max: 4 });

  it("logs every unavailable refusal of parts requests from two processes, with the parts' total as the amount", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    await priceEndpoint(t.db, e.endpointId, { input: 1_000_000, output: 2_000_000 });
    expect((await reserve(t.db, { endpoint: e.key, parts: { input: 1, output: 1 } })).status).toBe("granted");
    const holder = openPostgres(t.url, { max: 1 });
    let release: () => void = () => undefined;
    const held = holder.db.transaction(async (tx) => {
      await tx.execute(sql`select * from counters where limit_id = (select limit_id from ceilings where id = ${e.ceilingIds[0]}) for update`);
      await new Promise<void>((r) => (release = r));
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const children = ["a", "b"].map((tag) =>
        startFixtureProcess<{ unavailable: number }>(path.join(import.meta.dirname, "refusal-log.fixture.ts"), [t.url, e.key, tag]),
      );
      await Promise.all(children.map((c) => c.ready));
      for (const c of children) c.send("go\n");
      expect(await Promise.all(children.map((c) => c.done))).toEqual([{ unavailable: 12 }, { unavailable: 12 }]);
    } finally {
      release();
      await held;
      await holder.close();
    }
    await expect
      .poll(
        async () =>
          resultRows<{ count: number; amount: number }>(
            await t.db.execute(
              sql`select sum(count)::int as count, max(amount)::int as amount from refusals where endpoint_key = ${e.key} and gate = 'unavailable'`,
            ),
          )[0],
      )
      .toEqual({ count: 24, amount: 700 });
  }, 60_000);

  it("loses only the row that cannot be written, counts it, and stores its neighbours", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const before = refusalLogFailures();
    await logUnavailable(
      t.db,
      [
        { endpoint: e.key, amount: 3, caller: "acct_one" },
        // Beyond bigint: this row alone cannot be stored.
        { endpoint: e.key, amount: 1e20, caller: "acct_two" },
        { endpoint: e.key, parts: { input: 2, output: 5 }, caller: "acct_three" },
      ],
      "lock_timeout",
    );
    expect(refusalLogFailures()).toBe(before + 1);
    const rows = resultRows<{ caller: string; amount: number }>(
      await t.db.execute(sql`select caller, amount::int as amount from refusals where endpoint_key = ${e.key} order by caller`),
    );
    expect(rows).toEqual([
      { caller: "acct_one", amount: 3 },
      { caller: "acct_three", amount: 7 },
    ]);
  });
});
