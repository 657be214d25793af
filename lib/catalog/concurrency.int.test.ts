import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { setupControl } from "@/lib/control/context";
import { startFixtureProcess } from "@/lib/enforcement/test-fixtures";
import { addCeiling, createEndpoint, removeCeiling, setEndpointArchived } from "./index";

// A catalog change binds the next call under batched load from two other processes: it takes the
// endpoint lock, so it waits for the batches in flight and no grant commits after it that it
// should have stopped. Measured as the rows committed in the moments after each change.

function startLoad(url: string, endpoint: string) {
  const load = startFixtureProcess<Record<string, number>>(path.join(__dirname, "reserve-load.fixture.ts"), [url, endpoint]);
  return { ready: load.ready, stop: () => load.send(), done: load.done };
}

const admin = { type: "staff", email: "admin@example.com" } as const;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;

describe.skipIf(skipWithoutDatabase())("catalog changes under load from two processes", () => {
  const t = useTestDatabase("catalog_concurrency", { max: 4 });

  async function endpoint(extra: { metric: "units"; scope: "caller"; window: "utc_day"; value: number; min: number; max: number; default: number }[] = []) {
    n += 1;
    const key = `load.e${n}`;
    const row = await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "units",
        parts: [{ name: "units", price: "0.000001" }],
        perCallMax: 10,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10_000_000, min: 0, max: 10_000_000, default: 10_000_000 }, ...extra],
      },
      actor: admin,
      reason: "load test",
    });
    return { key, id: row.id };
  }

  const reservations = async (endpointId: number, limitId?: number) =>
    resultRows<{ n: number }>(
      await t.db.execute(
        limitId === undefined
          ? sql`select count(*)::int as n from reservations where endpoint_id = ${endpointId}`
          : sql`select count(*)::int as n from reservations r where r.endpoint_id = ${endpointId}
                and exists (select 1 from unnest(r.charges) c where c.limit_id = ${limitId})`,
      ),
    )[0]?.n ?? 0;

  async function underLoad<T>(key: string, work: () => Promise<T>): Promise<{ result: T; told: Record<string, number> }> {
    const loads = [startLoad(t.url, key), startLoad(t.url, key)];
    await Promise.all(loads.map((l) => l.ready));
    await pause(300);
    const result = await work();
    for (const l of loads) l.stop();
    const told = (await Promise.all(loads.map((l) => l.done))).reduce<Record<string, number>>((acc, r) => {
      for (const [k, v] of Object.entries(r)) acc[k] = (acc[k] ?? 0) + v;
      return acc;
    }, {});
    return { result, told };
  }

  it("an archive binds the next call: nothing is granted after it commits, every later call is endpoint_archived", async () => {
    const e = await endpoint();
    const { result: afterArchive, told } = await underLoad(e.key, async () => {
      let after = 0;
      for (let round = 0; round < 6; round += 1) {
        await pause(60);
        await setEndpointArchived(t.db, { key: e.key, archived: true, actor: admin, reason: `round ${round}` });
        const atArchive = await reservations(e.id);
        await pause(60);
        after += (await reservations(e.id)) - atArchive;
        // Unarchiving is a raise (change control); here it only sets up the next round.
        await setEndpointArchived(t.db, { key: e.key, archived: false, actor: admin, reason: `round ${round}`, changeControl: setupControl("test") });
      }
      return after;
    });
    expect(told.granted ?? 0).toBeGreaterThan(0);
    expect(told["error:endpoint_archived"] ?? 0).toBeGreaterThan(0);
    expect(afterArchive).toBe(0);
  }, 120_000);

  it("an added ceiling binds the next call: a ceiling of 0 added under load stops every grant", async () => {
    const e = await endpoint();
    const { result: afterAdd, told } = await underLoad(e.key, async () => {
      await pause(100);
      await addCeiling(t.db, {
        key: e.key,
        ceiling: { metric: "calls", scope: "global", window: "billing_month", value: 0, min: 0, max: 10, default: 0 },
        actor: admin,
        reason: "stop",
      });
      const atAdd = await reservations(e.id);
      await pause(300);
      return (await reservations(e.id)) - atAdd;
    });
    expect(told.granted ?? 0).toBeGreaterThan(0);
    expect(told["refused:kill_switch"] ?? 0).toBeGreaterThan(0);
    expect(afterAdd).toBe(0);
  }, 120_000);

  it("a removed ceiling stops charging: no reservation committed after the removal carries a charge for it", async () => {
    const e = await endpoint([{ metric: "units", scope: "caller", window: "utc_day", value: 10_000_000, min: 0, max: 10_000_000, default: 10_000_000 }]);
    // Its limit names its charges, and outlives the ceiling in the reservations that carry it.
    const [callerCeiling] = resultRows<{ id: number; limit_id: number }>(
      await t.db.execute(sql`select id, limit_id from ceilings where endpoint_id = ${e.id} and scope = 'caller'`),
    );
    if (!callerCeiling) throw new Error("no per-caller ceiling");
    const { result: charged } = await underLoad(e.key, async () => {
      await pause(100);
      await removeCeiling(t.db, { key: e.key, ceilingId: callerCeiling.id, actor: admin, reason: "not needed" });
      const atRemove = await reservations(e.id, callerCeiling.limit_id);
      await pause(300);
      return { before: atRemove, after: (await reservations(e.id, callerCeiling.limit_id)) - atRemove, total: await reservations(e.id) };
    });
    expect(charged.before).toBeGreaterThan(0);
    expect(charged.after).toBe(0);
    expect(charged.total).toBeGreaterThan(charged.before);
  }, 120_000);
});
