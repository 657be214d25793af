import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "@/lib/enforcement";
import { makeEndpoint, openPools } from "@/lib/enforcement/test-fixtures";

// 100 reservations crossing thresholds together, from four independent pools ("processes"):
// each threshold of each global ceiling fires exactly once for the window, never per caller,
// and each alert queues exactly one delivery per enabled destination.

describe.skipIf(skipWithoutDatabase())("threshold alerts fire exactly once under concurrency", () => {
  const t = useTestDatabase("alert_thresholds", { max: 4 });

  beforeAll(async () => {
    await t.db.insert(alertDestinations).values([
      { name: "on-call slack", kind: "slack", target: "http://127.0.0.1:9/slack", createdBy: "test" },
      { name: "pager", kind: "webhook", target: "http://127.0.0.1:9/hook", signingSecret: "s".repeat(32), createdBy: "test" },
      { name: "old", kind: "webhook", target: "http://127.0.0.1:9/old", signingSecret: "s".repeat(32), enabled: false, createdBy: "test" },
    ]);
  });

  for (const mode of [
    { name: "batched", options: undefined },
    { name: "one request per transaction", options: { maxBatch: 1, maxInFlight: 6 } },
  ] as const) {
    it(`100 concurrent reservations: one alert per ceiling, window and threshold (${mode.name})`, async () => {
      const pools = openPools(t.url, 4, 6, mode.options);
      try {
        const e = await makeEndpoint(t.db, {
          ceilings: [
            // 100 units of 100: crosses 50, 80 and 100 %.
            { metric: "units", scope: "global", window: "utc_day", value: 100 },
            // 100 calls of 160: crosses 50 % only.
            { metric: "calls", scope: "global", window: "utc_day", value: 160 },
            // Per caller: every account reaches 100 %, and none of it alerts.
            { metric: "units", scope: "caller", window: "utc_day", value: 10 },
          ],
        });
        const decisions = await Promise.all(
          Array.from({ length: 100 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 1, caller: `acct_${i % 10}` })),
        );
        expect(decisions.filter((d) => d.status === "granted")).toHaveLength(100);

        const fired = await t.db.select().from(alerts).where(eq(alerts.endpointId, e.endpointId));
        const [units, calls, perCaller] = e.ceilingIds;
        const byCeiling = (id: number | undefined) =>
          fired
            .filter((a) => a.ceilingId === id)
            .map((a) => a.details?.percent)
            .sort((x, y) => Number(x) - Number(y));
        expect(byCeiling(units)).toEqual([50, 80, 100]);
        expect(byCeiling(calls)).toEqual([50]);
        expect(byCeiling(perCaller)).toEqual([]);
        expect(fired).toHaveLength(4);
        expect(fired.every((a) => a.kind === "threshold")).toBe(true);

        const enabled = await t.db.select({ id: alertDestinations.id }).from(alertDestinations).where(eq(alertDestinations.enabled, true));
        const queued = await t.db
          .select()
          .from(alertDeliveries)
          .where(
            inArray(
              alertDeliveries.alertId,
              fired.map((a) => a.id),
            ),
          );
        expect(queued).toHaveLength(fired.length * enabled.length);
        expect(queued.every((d) => d.state === "pending")).toBe(true);

        // More reservations in the same window cross nothing again.
        await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(pools.dbs[i % 4] ?? t.db, { endpoint: e.key, amount: 1, caller: "acct_x" })));
        const after = await t.db
          .select()
          .from(alerts)
          .where(and(eq(alerts.endpointId, e.endpointId), eq(alerts.kind, "threshold")));
        expect(after).toHaveLength(4);
      } finally {
        await pools.close();
      }
    });
  }
});
