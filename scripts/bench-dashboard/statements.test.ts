import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StatementLog, statementLabel, statementLines, statementStats, statementSummary } from "./statements";

// The bench's reading of the server's statement file: each render gets the lines written during
// it, and a page's statements are judged by their median.

describe("bench:dashboard's statements of a page", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-statements-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("takes the lines written since the last take, a line still being written at the next", () => {
    const file = path.join(dir, "log.jsonl");
    writeFileSync(file, `${JSON.stringify({ ms: 1, sql: "before" })}\n`);
    const log = new StatementLog(file);
    expect(log.take()).toEqual([]);
    appendFileSync(file, `${JSON.stringify({ ms: 2, sql: "a" })}\n{"ms":3,`);
    expect(log.take()).toEqual([{ ms: 2, sql: "a" }]);
    appendFileSync(file, `"sql":"b"}\n`);
    expect(log.take()).toEqual([{ ms: 3, sql: "b" }]);
  });

  it("starts empty when the server has not written the file yet", () => {
    const file = path.join(dir, "later.jsonl");
    const log = new StatementLog(file);
    writeFileSync(file, `${JSON.stringify({ ms: 4, sql: "first" })}\n`);
    expect(log.take()).toEqual([{ ms: 4, sql: "first" }]);
  });

  it("groups a statement's runs across renders and flags a median over 50 ms, not one slow run", () => {
    const renders = [
      [
        { ms: 60, sql: "slow" },
        { ms: 1, sql: "twice" },
        { ms: 3, sql: "twice" },
        { ms: 200, sql: "unlucky" },
      ],
      [
        { ms: 70, sql: "slow" },
        { ms: 2, sql: "twice" },
        { ms: 4, sql: "twice" },
        { ms: 1, sql: "unlucky" },
      ],
      [
        { ms: 55, sql: "slow" },
        { ms: 2, sql: "twice" },
        { ms: 2, sql: "twice" },
        { ms: 1, sql: "unlucky" },
      ],
    ];
    const stats = statementStats(renders);
    expect(stats.find((s) => s.sql === "twice")).toMatchObject({ perRender: 2, median: 2, p95: 4 });
    expect(stats.find((s) => s.sql === "slow")).toMatchObject({ perRender: 1, median: 60, p95: 70 });
    const lines = statementLines(stats);
    expect(lines[1]).toContain("slow  [OVER 50 ms]");
    expect(lines.find((l) => l.includes("unlucky"))).not.toContain("OVER");
    expect(statementSummary(stats)).toBe("4 statements, slowest median 60.0 ms 1 OVER 50 ms");
  });

  it("shortens a long select list to what tells statements apart: the outer from and after", () => {
    const sql = `select "id", "key", "name", "unit", extract(epoch from now() - x.at) as age, "currency", "per_call_max" from "endpoints" where "id" = $1`;
    expect(statementLabel(sql)).toBe(`select … from "endpoints" where "id" = $1`);
    expect(statementLabel("select 1")).toBe("select 1");
    expect(statementLabel(`update t set a = 1 where ${"x".repeat(200)}`)).toHaveLength(120);
  });
});
