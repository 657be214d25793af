import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { env } from "../lib/env";
import { openPostgres, resultRows, type Database } from "./client";
import { timedStatement, type TimedStatement } from "./query-timing";
import { skipWithoutDatabase } from "./testing";

// bench:dashboard reads these lines as each statement's own time: they must come from the server,
// one a statement, with the time it took and without the values it was given.

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("CEILINGS_QUERY_TIMING: every statement's time, one line each", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "query-timing-"));
  const file = path.join(dir, "statements.jsonl");
  const notices: string[] = [];
  const opened: Database[] = [];
  const open = (queryTimingFile: string | null = file) => {
    // TEST_DATABASE_URL as it is: a superuser, as the benchmark's DATABASE_URL is.
    const database = openPostgres(env().TEST_DATABASE_URL ?? "", { max: 2, queryTimingFile, onNotice: (n) => notices.push(n.message ?? "") });
    opened.push(database);
    return database.db;
  };
  const lines = (): TimedStatement[] =>
    readFileSync(file, { encoding: "utf8", flag: "a+" })
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as TimedStatement);
  beforeEach(() => {
    rmSync(file, { force: true });
    notices.length = 0;
  });
  afterAll(async () => {
    await Promise.all(opened.map((d) => d.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the server's time of a statement, with placeholders for its values", async () => {
    const db = open();
    const rows = resultRows<{ who: string }>(await db.execute(sql`select ${"maria@example.com"}::text as who from pg_sleep(0.06)`));
    expect(rows).toEqual([{ who: "maria@example.com" }]);
    const mine = lines().filter((l) => l.sql.includes("pg_sleep"));
    expect(mine.map((l) => l.sql)).toEqual(["select $1::text as who from pg_sleep(0.06)"]);
    expect(mine[0]?.ms).toBeGreaterThanOrEqual(60);
    expect(mine[0]?.ms).toBeLessThan(1000);
    expect(readFileSync(file, "utf8")).not.toContain("maria@example.com");
  });

  it("leaves results and the pool's other notices as they were", async () => {
    const db = open();
    const rows = await db.select({ n: sql<number>`n`.mapWith(Number) }).from(sql`generate_series(1, 3) as n`);
    expect(rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await db.execute(sql`do $$ begin raise notice 'ours'; end $$`);
    expect(notices).toEqual(["ours"]);
    expect(lines().map((l) => l.sql)).toContain("select n from generate_series(1, 3) as n");
  });

  it("times a statement written on several lines, and those inside a transaction", async () => {
    const db = open();
    await db.transaction(async (tx) => {
      await tx.execute(sql`select 'outer',\n  1 as "plan:"`);
      await tx.transaction((inner) => inner.execute(sql`select 'inner'`));
    });
    const texts = lines().map((l) => l.sql);
    expect(texts).toContain(`select 'outer', 1 as "plan:"`);
    expect(texts).toContain("select 'inner'");
  });

  it("times nothing on a pool opened without it", async () => {
    const db = open(null);
    await db.execute(sql`select 'untimed'`);
    expect(lines()).toEqual([]);
  });

  it("reads only auto_explain's notices", () => {
    expect(timedStatement('duration: 1.250 ms  plan:\n{"Query Text": "select\\n 1", "Plan": {}}')).toEqual({ ms: 1.25, sql: "select 1" });
    expect(timedStatement("duration: 1.250 ms  plan:\nnot json")).toBeUndefined();
    expect(timedStatement("some other notice")).toBeUndefined();
  });
});
