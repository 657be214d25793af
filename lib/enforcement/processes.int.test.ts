import path from "node:path";
import { describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { counterTotals, makeEndpoint, startFixtureProcess } from "./test-fixtures";

// The one-step property across independent OS processes, each with its own pool and batcher:
// nothing in a process can coordinate them, only the database.

function startStorm(url: string, endpoint: string, count: number, amount: number) {
  const storm = startFixtureProcess<{ granted: number; unavailable: number }>(path.join(__dirname, "reserve-storm.fixture.ts"), [
    url,
    endpoint,
    String(count),
    String(amount),
  ]);
  return { ready: storm.ready, go: () => storm.send("go\n"), done: storm.done };
}

describe.skipIf(skipWithoutDatabase())("one step across processes", () => {
  const t = useTestDatabase("processes", { max: 2 });

  it("three processes of 80 reservations of 2 units against 100 remaining admit exactly 50", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const storms = [0, 1, 2].map(() => startStorm(t.url, e.key, 80, 2));
    await Promise.all(storms.map((s) => s.ready));
    for (const s of storms) s.go();
    const results = await Promise.all(storms.map((s) => s.done));
    expect(results.reduce((sum, r) => sum + r.unavailable, 0)).toBe(0);
    expect(results.reduce((sum, r) => sum + r.granted, 0)).toBe(50);
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 100, settled: 0 });
  }, 60_000);
});
