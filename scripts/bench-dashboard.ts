// npm run bench:dashboard -- [--runs 9] [--url http://127.0.0.1:3200 [--queries <file>] [--axe]] [--only what-if|reconciliation|pages]
// Times every refusal-page query on the Postgres in DATABASE_URL (fill it first with
// npm run db:fill -- --refusals 2000000), prints median and p95 and EXPLAIN (ANALYZE, BUFFERS) of
// each, then, given --url of a server running on the same database (next start with the same
// DATABASE_URL and NEXTAUTH_SECRET), times the server render of every dashboard page as a signed-in
// admin (the busiest endpoint, a killed one and the biggest budget among them). With the server
// started with CEILINGS_QUERY_TIMING=<file> and --queries <file> (or the same variable set here),
// each page's statements with their times; --axe then runs axe-core on every page.
// Then a per-account budget's top accounts over 90 days and in its open window (db:fill makes one
// of 100,000 accounts), and the account pages' reads (a busy account among a million, a search by
// prefix, the top accounts of an endpoint and of a budget). Targets: each page query <= 50 ms, the
// page <= 300 ms. Then the what-if read over 30 days of a million reservations (db:fill -- --what-if
// 1000000; --only what-if runs those rows alone), target 200 ms. Then reconciliation's reads: the
// readiness of every endpoint, the 7-day grid, an endpoint's series (--only reconciliation).
// Printed, never asserted.
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { openPostgres, resultRows, type Db } from "@/db/client";
import { refusals } from "@/db/schema";
import { env } from "@/lib/env";
import { KeysetCursor, keysetCursorText } from "@/lib/keyset";
import {
  countAllRefusals,
  countMatchingRefusals,
  countRefusalsByGate,
  gateChartQuery,
  listRefusals,
  matchingCountQuery,
  refusalPageQuery,
  RefusalFilters,
  type RefusalPosition,
} from "@/lib/refusals";
import { readBudgetDetail, topAccountsNow, topAccountsOver, windowsBack } from "@/lib/budgets";
import { accountCases } from "./bench-dashboard/accounts";
import { whatIfCases } from "./bench-dashboard/what-if";
import { reconciliationCases } from "./bench-dashboard/reconciliation";
import { renderPages } from "./bench-dashboard/render";
import { formatCount } from "@/lib/format";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dialect = new PgDialect();

// EXPLAIN cannot bind parameters, so they are inlined as literals (the plan Postgres makes for a
// statement's first executions; the timings below run the real parameterised statements).
function literal(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  const text = v instanceof Date ? v.toISOString() : String(v);
  return `'${text.replaceAll("'", "''")}'`;
}

function inline(query: { sql: string; params: unknown[] }): string {
  return query.sql.replace(/\$(\d+)/g, (_, n: string) => literal(query.params[Number(n) - 1]));
}

function stats(ms: number[]): { median: number; p95: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] ?? 0;
  return { median: at(0.5), p95: at(0.95) };
}

/** text: the statement EXPLAIN shows; none for a read made of several statements. */
type Case = { label: string; run: () => Promise<unknown>; text?: () => string; target: number };

async function main(): Promise<void> {
  const url = env().DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set: point it at a database filled by npm run db:fill");
  const runs = Number(arg("runs") ?? 9);
  // Never timed itself: with CEILINGS_QUERY_TIMING set for the server too, the bench's own reads
  // would land among a page's statements.
  const database = openPostgres(url, { max: 2, queryTimingFile: null });
  const db: Db = database.db;
  try {
    // --only what-if | reconciliation: those rows alone (a database filled with db:fill -- --what-if N
    // only, or with --reservations N --days 7).
    const only = arg("only");
    const renderUrl = arg("url");
    const render = { runs, queries: arg("queries") ?? env().CEILINGS_QUERY_TIMING, axe: process.argv.includes("--axe") };
    if (only === "pages") {
      if (!renderUrl) throw new Error("--only pages needs --url of a server on this DATABASE_URL");
      console.log(`\n=== summary\n${(await renderPages(db, renderUrl, render)).join("\n")}`);
      return;
    }
    if (only === "what-if" || only === "reconciliation") {
      const summary: string[] = [];
      await runCases(db, await (only === "what-if" ? whatIfCases : reconciliationCases)(db, new Date()), runs, summary);
      console.log("\n=== summary");
      for (const line of summary) console.log(line);
      return;
    }
    const [top] = resultRows<{ key: string; caller: string; at: Date }>(
      await db.execute(sql`select endpoint_key as key, caller, at from refusals order by at desc, id desc limit 1`),
    );
    if (!top) throw new Error("the refusals table is empty: run npm run db:fill first");
    const [hotCaller] = resultRows<{ caller: string }>(
      await db.execute(sql`select caller from refusals where caller <> '' and at > now() - interval '30 days' group by 1 order by count(*) desc limit 1`),
    );
    const now = new Date();
    const day = 86_400_000;
    // A cursor about 100,000 rows down: what "Older" gives after 2,000 pages.
    const [deep] = resultRows<{ c: string }>(
      await db.execute(sql`select ${keysetCursorText(refusals.at, refusals.id)} as c from ${refusals} order by at desc, id desc offset 100000 limit 1`),
    );
    const f = (input: Record<string, string>) => RefusalFilters.parse(input);
    const filterCases: [string, RefusalFilters, RefusalPosition?][] = [
      ["page: no filter", f({})],
      ["page: by endpoint", f({ endpoint: top.key })],
      ["page: by gate (unavailable)", f({ gate: "unavailable" })],
      ["page: by caller", f({ caller: hotCaller?.caller ?? top.caller })],
      ["page: by destination prefix", f({ destination: "maria.1" })],
      [
        "page: by time range (a day, 30 days ago)",
        f({ from: new Date(now.getTime() - 31 * day).toISOString(), to: new Date(now.getTime() - 30 * day).toISOString() }),
      ],
      ["page: endpoint + gate", f({ endpoint: top.key, gate: "per_call_max" })],
      ["page: deep keyset (100,000 rows down)", f({}), deep ? { before: KeysetCursor.parse(deep.c) } : undefined],
    ];
    const cases: Case[] = filterCases.map(([label, filters, position]) => ({
      label,
      target: 50,
      run: () => listRefusals(db, { filters, position }),
      text: () => inline(refusalPageQuery(db, { filters, position }).toSQL()),
    }));
    const chartOf = (label: string, filters: RefusalFilters): Case => ({
      label,
      target: 50,
      run: () => countRefusalsByGate(db, { filters, now }),
      text: () => inline(dialect.sqlToQuery(gateChartQuery({ filters, now }).query)),
    });
    cases.push(chartOf("chart: per gate, last 7 days", f({})));
    cases.push(chartOf("chart: per gate, one endpoint, last 7 days", f({ endpoint: top.key })));
    cases.push(chartOf("chart: per gate, last 90 days", f({ from: new Date(now.getTime() - 90 * day).toISOString() })));
    const countOf = (label: string, filters: RefusalFilters): Case => ({
      label,
      target: 50,
      run: () => countMatchingRefusals(db, filters),
      text: () => inline(dialect.sqlToQuery(matchingCountQuery(filters))),
    });
    cases.push({
      label: "count: whole log (estimate)",
      target: 50,
      run: () => countAllRefusals(db),
      text: () => "select reltuples::bigint as n from pg_class where oid = 'refusals'::regclass",
    });
    cases.push(countOf("count: matching, by gate (capped at 10,000)", f({ gate: "ceiling" })));
    cases.push(countOf("count: matching, by endpoint", f({ endpoint: top.key })));
    // A per-account budget's top accounts (npm run db:fill makes one of 100,000 accounts).
    const [budget] = resultRows<{ id: number; key: string; accounts: number }>(
      await db.execute(sql`select b.id, b.key, (select count(distinct scope_key)::int from budget_usage u where u.budget_id = b.id) as accounts
                           from budgets b where b.scope = 'account' order by b.id limit 1`),
    );
    if (budget) {
      const starts = windowsBack({ window: "utc_day", billingDay: 1 }, now, 90).map((w) => w.start);
      const accounts = formatCount(budget.accounts);
      cases.push({
        label: `budget: top accounts over 90 days (${accounts} accounts)`,
        target: 50,
        run: () => topAccountsOver(db, { budgetId: budget.id, starts, limit: 10 }),
      });
      cases.push({ label: `budget: top accounts in the open window`, target: 50, run: () => topAccountsNow(db, sql`b.id = ${budget.id}`, now, 10) });
      cases.push({ label: `budget: a budget's page, all of its reads`, target: 300, run: () => readBudgetDetail(db, { key: budget.key, now }) });
    }
    // The account pages: a busy account, a search by prefix, the top accounts of an endpoint and a budget.
    cases.push(...(await accountCases(db, now, inline)));
    cases.push(...(await whatIfCases(db, now)));
    cases.push(...(await reconciliationCases(db, now)));

    const summary: string[] = [];
    await runCases(db, cases, runs, summary);
    if (renderUrl) summary.push(...(await renderPages(db, renderUrl, render)));
    else summary.push("pages: skipped (pass --url of a server started on this DATABASE_URL with the same NEXTAUTH_SECRET)");
    console.log(`\n=== summary (${formatCount((await countAllRefusals(db)).n)} refusal rows)`);
    for (const line of summary) console.log(line);
  } finally {
    await database.close();
  }
}

/** Times each case (a warm-up, then `runs`), prints its plan when it has one, and adds its summary line. */
async function runCases(db: Db, cases: Case[], runs: number, summary: string[]): Promise<void> {
  {
    for (const c of cases) {
      await c.run(); // warm the cache and the connection
      const ms: number[] = [];
      for (let i = 0; i < runs; i += 1) {
        const start = performance.now();
        await c.run();
        ms.push(performance.now() - start);
      }
      const { median, p95 } = stats(ms);
      console.log(`\n=== ${c.label}: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${runs} runs)`);
      if (c.text) {
        const plan = resultRows<{ "QUERY PLAN": string }>(await db.execute(sql.raw(`explain (analyze, buffers) ${c.text()}`)));
        console.log(plan.map((p) => `  ${p["QUERY PLAN"]}`).join("\n"));
      }
      summary.push(
        `${c.label.padEnd(56)} median ${median.toFixed(1).padStart(7)} ms  p95 ${p95.toFixed(1).padStart(7)} ms  ${p95 <= c.target ? "ok" : `OVER ${c.target} ms`}`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(`bench:dashboard failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
