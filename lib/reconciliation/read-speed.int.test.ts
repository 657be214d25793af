import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { endpointReconciliation, reconciliationGrid, reconciliationSources } from "./read";
import type { Drift } from "./types";

// How fast the dashboard's reconciliation reads are at a realistic size: 50 reconciled endpoints
// with 90 compared days each, and a ledger of a million reservations over those 90 days. It prints
// milliseconds and asserts none (timings are not tests); it fills for a minute, so it runs only
// when asked: RECONCILIATION_SPEED=1 TEST_DATABASE_URL=... npx vitest run <this file>.

vi.mock("./drift", async (importOriginal) => {
  try {
    return await importOriginal();
  } catch {
    return {
      driftOf: (b: { units: number; micros: number }, c: { units: number; micros: number }): Drift => ({
        diffUnits: b.units - c.units,
        diffMicros: b.micros - c.micros,
        percent: 0,
        over: false,
        direction: "even",
      }),
    };
  }
});

declare global {
  interface ImportMetaEnv {
    /** "1" runs this measurement (Vitest passes the environment through import.meta.env). */
    readonly RECONCILIATION_SPEED?: string;
  }
}

const ENDPOINTS = 50;
const DAYS = 90;
const RESERVATIONS = 1_000_000;
const NOW = new Date("2026-03-10T12:00:00Z");

async function timed<T>(runs: number, work: () => Promise<T>): Promise<{ median: number; result: T }> {
  const times: number[] = [];
  let result: T | undefined;
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    result = await work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  if (result === undefined) throw new Error("no run");
  return { median: Math.round((times[Math.floor(runs / 2)] ?? 0) * 10) / 10, result };
}

describe.skipIf(skipWithoutDatabase() || import.meta.env.RECONCILIATION_SPEED !== "1")("reconciliation reads at size", () => {
  const t = useTestDatabase("recon_speed", { max: 4 });

  it(`${ENDPOINTS} endpoints × ${DAYS} days, ${RESERVATIONS.toLocaleString("en-US")} reservations`, { timeout: 600_000 }, async () => {
    const ids: number[] = [];
    for (let i = 0; i < ENDPOINTS; i += 1) ids.push((await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] })).endpointId);
    const fill = performance.now();
    const owner = t.ownerDb;
    await owner.execute(sql`insert into usage_sources (name, kind, created_by) values ('speed', 'openai', 'test')`);
    await owner.execute(sql`insert into usage_source_rules (source_id, match, endpoint_id, created_by)
      select (select id from usage_sources where name = 'speed'), 'model-' || e, e, 'test' from unnest(${`{${ids.join(",")}}`}::int[]) e`);
    await owner.execute(sql`insert into reconciliation_days (endpoint_id, source_id, day, day_start, day_end, billed_units, billed_micros, billed_money, charged_units, charged_micros)
      select e, (select id from usage_sources where name = 'speed'), d::date, d, d + interval '1 day', 1000 + (e % 7), 10000000, 'reported', 990, 9900000
      from unnest(${`{${ids.join(",")}}`}::int[]) e, generate_series(${NOW.toISOString()}::timestamptz - interval '${sql.raw(String(DAYS))} days', ${NOW.toISOString()}::timestamptz - interval '1 day', interval '1 day') d`);
    await owner.execute(sql`insert into reservations (endpoint_id, amount, money, state, settled_amount, settled_money, charges, created_at, expires_at)
      select (${`{${ids.join(",")}}`}::int[])[1 + g % ${ENDPOINTS}], 10, 100,
        (array['settled','settled','settled','released','expired','held'])[1 + g % 6]::reservation_state,
        case when g % 6 < 3 then 9 end, case when g % 6 < 3 then 90 end, '[]'::jsonb,
        ${NOW.toISOString()}::timestamptz - (g % ${DAYS * 86_400}) * interval '1 second', ${NOW.toISOString()}::timestamptz
      from generate_series(1, ${RESERVATIONS}) g`);
    await owner.execute(sql`analyze reservations`);
    await owner.execute(sql`analyze reconciliation_days`);
    const fillMs = Math.round(performance.now() - fill);

    const one = await timed(5, () => endpointReconciliation(t.db, { endpointId: ids[0] ?? 0, now: NOW }));
    const grid = await timed(5, () => reconciliationGrid(t.db, { now: NOW }));
    const sources = await timed(5, () => reconciliationSources(t.db));
    expect(one.result.ranges[90].days).toHaveLength(DAYS);
    expect(grid.result.filter((r) => r.source !== null)).toHaveLength(ENDPOINTS);
    expect(sources.result).toHaveLength(1);
    console.log(`reconciliation reads (fill ${fillMs} ms): endpointReconciliation ${one.median} ms, reconciliationGrid ${grid.median} ms, reconciliationSources ${sources.median} ms (medians of 5)`);
  });
});
