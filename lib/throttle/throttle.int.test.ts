import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase, type TestDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type Decision, reserve } from "@/lib/enforcement";
import { countRows, makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { listThrottleActivity } from "./activity";
import { pruneThrottleCounters } from "./prune";

const LIMIT = 5;

async function attempts(db: TestDatabase["db"], endpoint: string, caller: string, n: number): Promise<Decision[]> {
  // One at a time, so each attempt is its own batch and the order is the order of arrival.
  const out: Decision[] = [];
  for (let i = 0; i < n; i++) out.push(await reserve(db, { endpoint, amount: 1, caller }));
  return out;
}

describe.skipIf(skipWithoutDatabase())("throttle: a soft per-caller rate in front of the ceilings", () => {
  const t = useTestDatabase("throttle");

  it("refuses a caller over the rate with gate throttle while another caller is let through", async () => {
    const e = await makeEndpoint(t.db, { throttlePerMinute: LIMIT, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    // The estimate weighs the previous minute by overlap: a flood split by a minute boundary reads
    // lower, so the exact estimate asserted below needs the flood inside one minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const flood = await attempts(t.db, e.key, "acct_flood", LIMIT + 4);
    const quiet = await attempts(t.db, e.key, "acct_quiet", 1);

    const granted = flood.filter((d) => d.status === "granted").length;
    const throttled = flood.filter((d) => d.status === "refused" && d.gate === "throttle").length;
    // The estimate adds the previous minute weighted by overlap, so a run that crosses a minute
    // boundary may refuse one attempt earlier; it never admits more than the limit.
    expect(granted).toBeGreaterThanOrEqual(LIMIT - 1);
    expect(granted).toBeLessThanOrEqual(LIMIT);
    expect(granted + throttled).toBe(LIMIT + 4);
    expect(flood.slice(-4).every((d) => d.status === "refused" && d.gate === "throttle")).toBe(true);
    expect(quiet[0]?.status).toBe("granted");

    // Attempts the throttle refused are still counted: it protects the service from the flood.
    const counted = await countRows(
      t.db,
      sql`select coalesce(sum(attempts), 0) as n from throttle_counters where endpoint_id = ${e.endpointId} and caller = 'acct_flood'`,
    );
    expect(counted).toBe(LIMIT + 4);
    // A throttled attempt charges no ceiling.
    const held = await countRows(t.db, sql`select coalesce(sum(held), 0) as n from usage where ceiling_id = ${e.ceilingIds[0] ?? 0}`);
    expect(held).toBe(granted + 1);

    const activity = await listThrottleActivity(t.db, e.endpointId);
    expect(activity?.perMinute).toBe(LIMIT);
    expect(activity?.failOpen).toBe(false);
    expect(activity?.totals).toEqual({ attempts: LIMIT + 5, refused: throttled, callers: 2 });
    expect(activity?.callers.map((c) => [c.caller, c.attempts, c.refused])).toEqual([
      ["acct_flood", LIMIT + 4, throttled],
      ["acct_quiet", 1, 0],
    ]);
    expect(activity?.callers[0]?.estimatePerMinute).toBeGreaterThanOrEqual(LIMIT + 4);
  });

  it("fails closed when its counter cannot be read in time (lock_timeout), or open when the endpoint says so", async () => {
    const closed = await makeEndpoint(t.db, { throttlePerMinute: LIMIT, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const open = await makeEndpoint(t.db, { throttlePerMinute: LIMIT, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await t.ownerDb.execute(sql`update endpoints set throttle_fail_open = true where id = ${open.endpointId}`);
    // Both transactions must name the same minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const answers: Record<string, unknown>[] = [];
    for (const e of [closed, open]) {
      // Another transaction holds this caller's counter of the minute while the batch wants it.
      await t.ownerDb.transaction(async (holder) => {
        await holder.execute(sql`insert into throttle_counters (endpoint_id, caller, minute, attempts)
          values (${e.endpointId}, 'acct_locked', date_trunc('minute', now()), 0)
          on conflict (endpoint_id, caller, minute) do update set attempts = throttle_counters.attempts`);
        const answer = await t.db.transaction(async (tx) => {
          await tx.execute(sql`set local lock_timeout = '200ms'`);
          const requests = JSON.stringify([{ endpoint: e.key, amount: 1, caller: "acct_locked" }]);
          return resultRows<{ a: Record<string, unknown>[] }>(await tx.execute(sql`select ceilings.reserve_batch(${requests}::jsonb) as a`))[0]?.a[0];
        });
        answers.push(answer ?? {});
      });
    }
    expect(answers[0]).toMatchObject({ status: "refused", gate: "unavailable", reason: "lock_timeout", message: "throttle unavailable" });
    expect(answers[1]).toMatchObject({ status: "granted" });
  });

  it("lets every call through an endpoint without a throttle, and says so", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const flood = await attempts(t.db, e.key, "acct_flood", LIMIT + 4);
    expect(flood.every((d) => d.status === "granted")).toBe(true);
    const activity = await listThrottleActivity(t.db, e.endpointId);
    expect(activity).toMatchObject({ perMinute: null, totals: { attempts: 0, refused: 0, callers: 0 }, callers: [] });
  });

  it("prunes counters the gate and the dashboard no longer read, in bounded steps", async () => {
    const e = await makeEndpoint(t.db, { throttlePerMinute: LIMIT, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await t.db.execute(sql`
      insert into throttle_counters (endpoint_id, caller, minute, attempts)
      select ${e.endpointId}, 'acct_old', date_trunc('minute', now()) - make_interval(mins => m), 3 from generate_series(0, 299) m`);
    expect(await pruneThrottleCounters(t.db, { keepMinutes: 120, maxRows: 100 })).toBe(100);
    expect(await pruneThrottleCounters(t.db, { keepMinutes: 120, maxRows: 1000 })).toBe(79);
    expect(await pruneThrottleCounters(t.db, { keepMinutes: 120 })).toBe(0);
    const left = await countRows(t.db, sql`select count(*) as n from throttle_counters where endpoint_id = ${e.endpointId}`);
    expect(left).toBe(121);
  });

  it("answers null for an unknown endpoint", async () => {
    expect(await listThrottleActivity(t.db, 987_654)).toBeNull();
  });
});
