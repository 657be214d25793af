import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { countRefusalsByGate, gateChartQuery } from "./chart";
import { RefusalFilters } from "./filters";
import { purgeOldRefusals } from "./purge";
import { insertRefusals, type RefusalSpec } from "./test-fixtures";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// Hand-made refusals over several days, hours, gates and endpoints (and one without an endpoint
// id); for every range and filter the chart read from refusal_hourly must equal the raw chart.
describe.skipIf(skipWithoutDatabase())("hourly refusal rollup on real Postgres", () => {
  const t = useTestDatabase("refusal_rollup");
  const now = new Date("2025-06-10T12:34:56.789Z");
  let emailKey = "";

  beforeAll(async () => {
    const email = await createEndpoint(t.db, { key: "email.subscribe" });
    const sms = await createEndpoint(t.db, { key: "sms.reset" });
    emailKey = email.key;
    const gates = ["ceiling", "cooldown", "throttle", "kill_switch", "unavailable"] as const;
    const specs: RefusalSpec[] = [];
    // Every 37 minutes over 40 days, so rows fall at all minutes of the hour and on both sides of
    // every range edge below.
    for (let i = 0, at = now.getTime() - 40 * DAY; at < now.getTime(); i += 1, at += 37 * 60_000) {
      const ep = i % 3 === 0 ? sms : email;
      specs.push({ endpointId: ep.endpointId, endpointKey: ep.key, at: new Date(at), gate: gates[i % gates.length], count: 1 + (i % 4) });
    }
    specs.push({ endpointId: null, endpointKey: email.key, at: new Date(now.getTime() - 2 * DAY), gate: "unavailable", count: 5 });
    await insertRefusals(t.db, specs);
  });

  const ranges: [string, Record<string, string>][] = [
    ["the default week, ending mid-hour", {}],
    ["90 days with day buckets", { from: new Date(now.getTime() - 90 * DAY).toISOString() }],
    ["edges inside hours", { from: "2025-06-01T03:17:09.5Z", to: "2025-06-08T21:48:00Z" }],
    ["edges on hours", { from: "2025-05-20T00:00", to: "2025-06-09T06:00" }],
    ["two days, hour buckets", { from: "2025-06-07T10:10", to: "2025-06-09T09:50" }],
    ["200 days with week buckets", { from: new Date(now.getTime() - 200 * DAY).toISOString() }],
    ["day buckets, edges on days", { from: "2025-05-01T00:00", to: "2025-06-10T00:00" }],
  ];
  const filters: [string, Record<string, string>][] = [
    ["no filter", {}],
    ["an endpoint", { endpoint: "email.subscribe" }],
    ["a gate", { gate: "unavailable" }],
    ["endpoint and gate", { endpoint: "sms.reset", gate: "ceiling" }],
  ];

  for (const [rangeName, range] of ranges) {
    for (const [filterName, filter] of filters) {
      it(`charts ${rangeName}, ${filterName}, from the rollup exactly as from the raw rows`, async () => {
        const f = RefusalFilters.parse({ ...range, ...filter });
        expect(gateChartQuery({ filters: f, now }).source).toBe("rollup");
        const fromRollup = await countRefusalsByGate(t.db, { filters: f, now });
        const fromRaw = await countRefusalsByGate(t.db, { filters: f, now, source: "raw" });
        expect(fromRollup).toEqual(fromRaw);
        expect(Object.values(fromRaw.totals).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      });
    }
  }

  it("keeps short buckets, callers and destinations on the raw rows", () => {
    const short = RefusalFilters.parse({ from: "2025-06-10T10:00", to: "2025-06-10T12:00" });
    expect(gateChartQuery({ filters: short, now }).source).toBe("raw");
    expect(gateChartQuery({ filters: RefusalFilters.parse({ caller: "acct_1" }), now }).source).toBe("raw");
    expect(gateChartQuery({ filters: RefusalFilters.parse({ destination: "maria" }), now }).source).toBe("raw");
    expect(gateChartQuery({ filters: RefusalFilters.parse({ endpoint: emailKey }), now }).source).toBe("rollup");
  });

  it("reads day bars' whole days from refusal_daily, the edges from the hours and the raw rows", async () => {
    const f = RefusalFilters.parse({ from: new Date(now.getTime() - 90 * DAY).toISOString(), endpoint: "email.subscribe" });
    const day = "2025-06-01T00:00:00.000Z";
    const bar = async () => (await countRefusalsByGate(t.db, { filters: f, now })).buckets.find((b) => b.start === day)?.ceiling;
    const before = await bar();
    // A count only the daily rollup holds shows in its bar: that day was read from refusal_daily.
    const marked = sql`day = ${day}::timestamptz and endpoint_key = 'email.subscribe' and endpoint_id is not null and gate = 'ceiling'`;
    await t.db.execute(sql`update refusal_daily set count = count + 1000 where ${marked}`);
    try {
      expect(await bar()).toBe((before ?? 0) + 1000);
    } finally {
      await t.db.execute(sql`update refusal_daily set count = count - 1000 where ${marked}`);
    }
  });

  it("recounts the rollups from the refusal rows (after a bulk load and on upgrade)", async () => {
    const rows = async () => ({
      hourly: resultRows(await t.db.execute(sql`select * from refusal_hourly order by 1, 2, 3, 4`)),
      daily: resultRows(await t.db.execute(sql`select * from refusal_daily order by 1, 2, 3, 4`)),
    });
    const before = await rows();
    expect(before.daily.length).toBeGreaterThan(0);
    await t.db.execute(sql`delete from refusal_hourly where hour < now() - interval '1 year'`);
    await t.db.execute(sql`update refusal_hourly set count = count + 1`);
    await t.db.execute(sql`delete from refusal_daily where day < '2025-06-01'`);
    await t.db.execute(sql`update refusal_daily set count = count + 1`);
    await t.db.execute(sql`select ceilings.rebuild_refusal_hourly()`);
    expect(await rows()).toEqual(before);
  });

  it("purges rollup hours and days wholly past the retention age, in batches, with the log", async () => {
    const ep = await createEndpoint(t.db, { key: "purge.me" });
    const e = { endpointId: ep.endpointId, endpointKey: ep.key };
    const at = (ms: number) => new Date(now.getTime() - ms);
    // Twelve old hours, the hour the cutoff falls in (10 days ago, 12:34:56), and a recent one.
    await insertRefusals(t.db, [
      ...Array.from({ length: 12 }, (_, i) => ({ ...e, at: at(10 * DAY + (i + 1) * HOUR) })),
      { ...e, at: at(10 * DAY + 60_000) },
      { ...e, at: at(10 * DAY - 60_000) },
      { ...e, at: at(HOUR) },
    ]);
    const hours = async () =>
      resultRows<{ hour: Date | string }>(await t.db.execute(sql`select hour from refusal_hourly where endpoint_id = ${ep.endpointId} order by hour`)).map(
        (r) => new Date(r.hour).toISOString(),
      );
    expect(await hours()).toHaveLength(14);
    // The other tests' rows are in the database too: count every hour before the cutoff's.
    const oldHours = async () =>
      Number(resultRows<{ n: string }>(await t.db.execute(sql`select count(*) as n from refusal_hourly where hour < '2025-05-31T12:00Z'`))[0]?.n);
    const old = await oldHours();
    expect(old).toBeGreaterThan(12);
    await purgeOldRefusals(t.db, { olderThanDays: 10, batchSize: 5, maxBatches: 1, now });
    expect(await oldHours()).toBe(old - 5);
    await purgeOldRefusals(t.db, { olderThanDays: 10, batchSize: 5, now });
    expect(await oldHours()).toBe(0);
    expect(await hours()).toEqual(["2025-05-31T12:00:00.000Z", "2025-06-10T11:00:00.000Z"]);
    // The day the cutoff falls in stays, as its hour does; every day before it is gone.
    const days = resultRows<{ day: Date | string }>(
      await t.db.execute(sql`select day from refusal_daily where endpoint_id = ${ep.endpointId} order by day`),
    ).map((r) => new Date(r.day).toISOString());
    expect(days).toEqual(["2025-05-31T00:00:00.000Z", "2025-06-10T00:00:00.000Z"]);
    expect(Number(resultRows<{ n: string }>(await t.db.execute(sql`select count(*) as n from refusal_daily where day < '2025-05-31'`))[0]?.n)).toBe(0);
  });
});
