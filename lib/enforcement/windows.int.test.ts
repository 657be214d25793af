import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { windowFor } from "@/lib/limits/windows";
import type { CeilingWindow } from "@/lib/vocabulary";

// Enforcement computes windows in SQL; the dashboard and charts in TypeScript. They must agree on
// every instant, whatever the session's time zone (a non-UTC zone with daylight saving is set here).

const instants = [
  "2026-01-01T00:00:00.000Z",
  "2026-01-31T23:59:59.999Z",
  "2026-02-14T23:59:59.999Z",
  "2026-02-15T00:00:00.000Z",
  "2026-02-28T12:00:00.000Z",
  "2026-03-08T07:30:00.000Z", // US daylight saving starts
  "2026-03-29T01:30:00.000Z", // EU daylight saving starts
  "2026-10-25T00:59:59.000Z",
  "2026-12-31T23:59:59.999Z",
  "2028-02-29T10:00:00.000Z",
];
const cases: { window: CeilingWindow; billingDay: number; windowSeconds: number | null }[] = [
  { window: "utc_day", billingDay: 1, windowSeconds: null },
  { window: "billing_month", billingDay: 1, windowSeconds: null },
  { window: "billing_month", billingDay: 15, windowSeconds: null },
  { window: "billing_month", billingDay: 28, windowSeconds: null },
  { window: "first_hit", billingDay: 1, windowSeconds: 86_400 },
];

describe.skipIf(skipWithoutDatabase())("windows agree in SQL and TypeScript", () => {
  const t = useTestDatabase("windows", { max: 1 });

  it.each(["UTC", "America/New_York", "Pacific/Chatham"])("in session time zone %s", async (zone) => {
    await t.db.execute(sql`set timezone = ${sql.raw(`'${zone}'`)}`);
    for (const at of instants) {
      for (const c of cases) {
        const [row] = resultRows<{ s: string; e: string }>(
          await t.db.execute(sql`
            select to_char(window_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as s,
                   to_char(window_end at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as e
            from ceilings.window_bounds(${c.window}::ceiling_window, ${c.billingDay}::int, ${c.windowSeconds}::int, ${at}::timestamptz)`),
        );
        const ts = windowFor(c.window, { billingDay: c.billingDay, windowSeconds: c.windowSeconds }, new Date(at));
        expect({ at, ...c, s: row?.s, e: row?.e }).toEqual({ at, ...c, s: ts.start.toISOString(), e: ts.end.toISOString() });
      }
    }
  });
});
