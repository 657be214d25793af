import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { adjustCeiling } from "./adjust";
import { listAuditEvents } from "@/lib/audit/log";
import { getEndpointDetail } from "./detail";
import { killEndpoint } from "./kill";
import { listEndpointsOverview } from "./overview";
import { createEndpoint, first } from "./test-fixtures";
import { billingMonthWindow, utcDayWindow } from "@/lib/limits/windows";
import { insertCounters } from "@/lib/counters/insert";

const admin = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("overview, detail and audit log reads", () => {
  const t = useTestDatabase("ceilings_read");

  it("shows used, held and remaining in the open window, killed and fullest first", async () => {
    const now = new Date();
    const calm = await createEndpoint(t.db, { key: "a.calm" });
    const busy = await createEndpoint(t.db, { key: "b.busy" });
    const dead = await createEndpoint(t.db, { key: "c.dead" });
    const day = utcDayWindow(now);
    const month = billingMonthWindow(now, 1);
    const busyDaily = first(busy.ceilings);
    await insertCounters(t.db, [
      { ceilingId: busyDaily.id, scopeKey: "", windowStart: day.start, windowEnd: day.end, settled: 70, held: 15 },
      // Yesterday's row is history, not the open window.
      { ceilingId: busyDaily.id, scopeKey: "", windowStart: new Date(day.start.getTime() - 86_400_000), windowEnd: day.start, settled: 99 },
      { ceilingId: first(calm.ceilings).id, scopeKey: "", windowStart: day.start, windowEnd: day.end, settled: 10 },
    ]);
    await insertCounters(t.db, { ceilingId: busy.ceilings[1]?.id ?? 0, scopeKey: "", windowStart: month.start, windowEnd: month.end, settled: 900, held: 15 });
    await killEndpoint(t.db, { endpointKey: dead.key, actor: admin, reason: "test" });

    const overview = await listEndpointsOverview(t.db, now);
    expect(overview.map((e) => e.key)).toEqual(["c.dead", "b.busy", "a.calm"]);
    const b = overview[1];
    expect(b?.state).toBe("near_limit");
    expect(b?.ceilings[0]).toMatchObject({ used: 70, held: 15, remaining: 15, state: "near_limit", guarantee: "at most 100 emails per UTC day" });
    expect(b?.monthToDate).toMatchObject({ used: 915, allowance: 3000 });
    expect(overview[0]).toMatchObject({ state: "killed", killedBy: "admin@test.local" });
  });

  it("details an endpoint with its adjustments and the derived default", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await adjustCeiling(t.db, { ceilingId: c.id, input: "90", expectedVersion: c.version, actor: admin, reason: "trim" });
    const detail = await getEndpointDetail(t.db, key);
    expect(detail?.derivedDefault?.sentence).toBe("3,000 emails a month ≈ 100 a day");
    // The endpoint's creation through the catalog is its first audit event.
    expect(detail?.adjustments.map((a) => a.action)).toEqual(["ceiling.adjust", "endpoint.create"]);
    expect(await getEndpointDetail(t.db, "no.such")).toBeNull();
  });

  it("pages the audit log by keyset and filters it", async () => {
    const { key, ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    let version = c.version;
    // Lowerings: one person's edits (a raise would be a change request).
    for (const v of [95, 94, 93, 92, 91]) {
      version = (await adjustCeiling(t.db, { ceilingId: c.id, input: String(v), expectedVersion: version, actor: admin, reason: `to ${v}` })).version;
    }
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const result = await listAuditEvents(t.db, { endpoint: key, limit: 2, cursor });
      seen.push(...result.events.map((e) => e.appliedValue ?? -1));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    // Newest first, down to the endpoint's creation (no value of its own).
    expect(seen).toEqual([91, 92, 93, 94, 95, -1]);
    expect((await listAuditEvents(t.db, { endpoint: key, action: "ceiling" })).events).toHaveLength(5);
    expect((await listAuditEvents(t.db, { endpoint: key, action: "ceiling.kill" })).events).toHaveLength(0);
    expect((await listAuditEvents(t.db, { endpoint: key, actor: "someone@else" })).events).toHaveLength(0);
    expect((await listAuditEvents(t.db, { endpoint: key, from: new Date(Date.now() + 60_000).toISOString() })).events).toHaveLength(0);
  });
});
