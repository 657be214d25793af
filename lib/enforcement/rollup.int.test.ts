import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "./reserve";
import { makeEndpoint } from "./test-fixtures";
import { useRacingPools } from "./test-suite";

// Refusals logged by reserve_batch (ceilings.log_refusals) are counted into refusal_hourly and
// refusal_daily in the same transaction; the chart over long ranges reads only that table, so it must match the log.
describe.skipIf(skipWithoutDatabase())("refusals land in the hourly rollup", () => {
  const t = useTestDatabase("refusal_rollup_enforcement", { max: 8 });
  const pools = useRacingPools(t, 4, 6);

  type Count = { hour: string; gate: string; n: number };
  async function byHourAndGate(endpointId: number): Promise<{ rollup: Count[]; raw: Count[] }> {
    const norm = (rows: { hour: Date | string; gate: string; n: string | number }[]) =>
      rows.map((r) => ({ hour: new Date(r.hour).toISOString(), gate: r.gate, n: Number(r.n) }));
    const rollup = resultRows<{ hour: Date | string; gate: string; n: string }>(
      await t.db.execute(sql`select hour, gate, sum(count) as n from refusal_hourly where endpoint_id = ${endpointId} group by 1, 2 order by 1, 2`),
    );
    const raw = resultRows<{ hour: Date | string; gate: string; n: string }>(
      await t.db.execute(sql`
        select date_trunc('hour', at, 'UTC') as hour, gate, sum(count) as n from refusals
        where endpoint_id = ${endpointId} group by 1, 2 order by 1, 2`),
    );
    // The daily rollup is the same counts summed by UTC day.
    const daily = resultRows<{ day: Date | string; gate: string; n: string }>(
      await t.db.execute(sql`select day, gate, sum(count) as n from refusal_daily where endpoint_id = ${endpointId} group by 1, 2 order by 1, 2`),
    );
    const byDay = new Map<string, Count>();
    for (const r of norm(raw)) {
      const day = `${r.hour.slice(0, 10)}T00:00:00.000Z`;
      const k = `${day} ${r.gate}`;
      const c = byDay.get(k) ?? { hour: day, gate: r.gate, n: 0 };
      c.n += r.n;
      byDay.set(k, c);
    }
    expect(norm(daily.map((d) => ({ hour: d.day, gate: d.gate, n: d.n })))).toEqual([...byDay.values()]);
    return { rollup: norm(rollup), raw: norm(raw) };
  }

  it("counts 200 concurrent refusals from independent pools once each, folded or not", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 10, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 0 }] });
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: i % 4 === 0 ? 20 : 1, caller: `acct_${i % 5}` })),
    );
    expect(decisions.filter((d) => d.status === "refused")).toHaveLength(200);
    const [rows] = resultRows<{ rows: string; total: string }>(
      await t.db.execute(sql`select count(*) as rows, sum(count) as total from refusals where endpoint_id = ${e.endpointId}`),
    );
    expect(Number(rows?.total)).toBe(200);
    // Five callers, two gates (per_call_max, kill_switch at 0): most refusals were folded.
    expect(Number(rows?.rows)).toBeLessThan(200);
    const { rollup, raw } = await byHourAndGate(e.endpointId);
    expect(rollup).toEqual(raw);
    expect(rollup.filter((r) => r.gate === "per_call_max").reduce((s, r) => s + r.n, 0)).toBe(50);
    expect(rollup.reduce((s, r) => s + r.n, 0)).toBe(200);
  });

  it("adds refusals folded into an existing row to that row's hour", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 1 }] });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_same" })).toMatchObject({ status: "granted" });
    // One after another, so each is its own batch and transaction, folded into the first's row.
    for (let i = 0; i < 3; i += 1) {
      expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_same" })).toMatchObject({ status: "refused", gate: "ceiling" });
    }
    const { rollup, raw } = await byHourAndGate(e.endpointId);
    expect(rollup).toEqual(raw);
    expect(rollup.reduce((s, r) => s + r.n, 0)).toBe(3);
    const counts = resultRows<{ count: number }>(await t.db.execute(sql`select count from refusals where endpoint_id = ${e.endpointId}`));
    // Within one 10-second bucket (a test this short almost always is) the three share one row.
    expect(counts.reduce((s, r) => s + Number(r.count), 0)).toBe(3);
  });
});
