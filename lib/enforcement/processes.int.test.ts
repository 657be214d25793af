import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, skipWithoutDatabase, type TestDatabase } from "@/db/testing";
import { counterTotals, makeEndpoint } from "./test-fixtures";

// The one-step property across independent OS processes, each with its own pool and batcher:
// nothing in a process can coordinate them, only the database.

function startStorm(url: string, endpoint: string, count: number, amount: number) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(__dirname, "reserve-storm.fixture.ts"), url, endpoint, String(count), String(amount)],
    { cwd: path.resolve(__dirname, "..", ".."), stdio: ["pipe", "pipe", "inherit"] },
  );
  let out = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith("ready\n")) markReady();
  });
  const done = new Promise<{ granted: number; unavailable: number }>((resolve, reject) => {
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.slice("ready\n".length))) : reject(new Error(`storm exited ${code}`)),
    );
  });
  return { ready, go: () => child.stdin.end("go\n"), done };
}

describe.skipIf(skipWithoutDatabase())("one step across processes", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase("processes", { max: 2 });
  });
  afterAll(async () => {
    await t?.drop();
  });

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
