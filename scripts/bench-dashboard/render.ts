import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { encode } from "next-auth/jwt";
import { resultRows, type Db } from "@/db/client";
import { staff } from "@/db/schema";
import { hashPassword } from "@/lib/auth/password";
import { startSession } from "@/lib/auth/sessions";
import { env } from "@/lib/env";
import type { TimedStatement } from "@/db/query-timing";
import { axePages } from "./axe";
import { percentile, StatementLog, statementLines, statementStats, statementSummary } from "./statements";

// Every page is timed as staff see it: a full server render by a running server, signed in as an
// admin (the role that sees every page). The session is a real one (a staff_sessions row, its id in
// the cookie, as the jwt callback checks); the cookie is minted with the server's NEXTAUTH_SECRET
// for an account whose password is random and never shown, so it cannot be used to sign in by hand.

const BENCH_EMAIL = "bench-admin@ceilings.local";
const COOKIE = "next-auth.session-token";

async function benchAdmin(db: Db): Promise<{ id: number; email: string; sessionVersion: number }> {
  const [existing] = await db.select().from(staff).where(eq(staff.email, BENCH_EMAIL)).limit(1);
  if (existing) return { id: existing.id, email: existing.email, sessionVersion: existing.sessionVersion };
  const passwordHash = await hashPassword(randomBytes(24).toString("base64url"), 10);
  const [row] = await db.insert(staff).values({ email: BENCH_EMAIL, name: "Benchmark admin", passwordHash, role: "admin" }).returning();
  if (!row) throw new Error("could not create the benchmark admin");
  return { id: row.id, email: row.email, sessionVersion: row.sessionVersion };
}

/** The pages to time, with the busiest, a killed and the biggest of each kind of thing the database has. */
async function pagesOf(db: Db): Promise<string[]> {
  const one = async (query: ReturnType<typeof sql>): Promise<string | undefined> => {
    const [row] = resultRows<{ v: string | number | null }>(await db.execute(query));
    return row?.v === null || row?.v === undefined ? undefined : String(row.v);
  };
  const busiest = await one(sql`select e.key as v from endpoints e where e.archived_at is null
    order by (select count(*) from reservations r where r.endpoint_id = e.id and r.created_at > now() - interval '1 day') desc, e.key limit 1`);
  const killed = await one(
    sql`select e.key as v from endpoints e join ceilings c on c.endpoint_id = e.id where c.killed_at is not null order by e.key limit 1`,
  );
  const budget = await one(sql`select b.key as v from budgets b where b.archived_at is null
    order by (select count(*) from budget_members m where m.budget_id = b.id) desc, b.scope = 'account' desc, b.key limit 1`);
  const account = await one(
    sql`select caller as v from refusals where caller <> '' and at > now() - interval '30 days' group by 1 order by count(*) desc limit 1`,
  );
  const refusal = await one(sql`select id as v from refusals order by at desc nulls last, id desc nulls last limit 1`);
  const plan = await one(sql`select key as v from plans order by key limit 1`);
  // The top accounts view of the per-caller ceiling with the most accounts today, and of a per-account budget.
  const topCeiling = await one(sql`select ceiling_id as v from usage where window_start > now() - interval '1 day' and window_start <= now() and scope_key <> ''
    group by 1 order by count(*) desc limit 1`);
  const topBudget = await one(sql`select key as v from budgets where scope = 'account' and archived_at is null order by id limit 1`);
  const change = await one(sql`select id as v from change_requests order by id desc limit 1`);
  const source = await one(sql`select id as v from usage_sources order by id limit 1`);
  const at = (prefix: string, id: string | undefined) => (id === undefined ? [] : [`${prefix}/${encodeURIComponent(id)}`]);
  return [
    "/",
    "/endpoints/new",
    ...at("/endpoints", busiest),
    ...(busiest ? [`/endpoints/${encodeURIComponent(busiest)}/edit`] : []),
    ...at("/endpoints", killed),
    "/budgets",
    "/budgets/new",
    ...at("/budgets", budget),
    ...(budget ? [`/budgets/${encodeURIComponent(budget)}/edit`] : []),
    "/accounts",
    ...(account ? [`/accounts?q=${encodeURIComponent(account.slice(0, 7))}`] : []),
    ...(topCeiling ? [`/accounts?top=ceiling-${topCeiling}`, `/accounts?top=ceiling-${topCeiling}&exact=1`] : []),
    ...(topBudget ? [`/accounts?top=budget-${encodeURIComponent(topBudget)}`] : []),
    ...at("/accounts", account),
    "/refusals",
    "/refusals?gate=unavailable",
    "/refusals?destination=maria.1",
    ...at("/refusals", refusal),
    "/plans",
    "/plans/new",
    ...at("/plans", plan),
    "/changes",
    ...at("/changes", change),
    "/reconciliation",
    "/reconciliation/sources/new",
    ...at("/reconciliation/sources", source),
    "/alerts",
    "/alerts/destinations",
    "/audit",
    "/api-keys",
    "/tokens",
    "/staff",
  ];
}

export type Session = { name: string; value: string };

/** A signed-in admin's session cookie for the server with NEXTAUTH_SECRET. */
export async function benchSession(db: Db): Promise<Session> {
  const secret = env().NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET must be set to the server's secret to sign the session cookie");
  const admin = await benchAdmin(db);
  const sid = await startSession(db, { staffId: admin.id });
  const value = await encode({ secret, token: { sub: String(admin.id), email: admin.email, staffId: admin.id, sv: admin.sessionVersion, sid } });
  return { name: COOKIE, value };
}

export type RenderOptions = {
  runs: number;
  /** The server's CEILINGS_QUERY_TIMING file: each page's statements and their times are shown. */
  queries?: string;
  /** Run axe-core on every page afterwards (a browser's requests would add statements to the timings). */
  axe?: boolean;
};

/**
 * Fetches every dashboard page as a signed-in admin, `runs` times after one that warms the route;
 * prints each page's statements when the server times them, and returns the summary lines
 * (targets: 300 ms a page, 50 ms a statement, judged by the median: on a machine others share,
 * the p95 of nine runs is the unluckiest one).
 */
export async function renderPages(db: Db, baseUrl: string, options: RenderOptions): Promise<string[]> {
  const session = await benchSession(db);
  const log = options.queries ? new StatementLog(options.queries) : undefined;
  const paths = await pagesOf(db);
  const lines: string[] = [];
  for (const path of paths) {
    const timed = await timePage(baseUrl, path, session, options.runs, log);
    const median = percentile(timed.ms, 0.5);
    const p95 = percentile(timed.ms, 0.95);
    const label = `page: ${path}`;
    const stats = timed.renders && statementStats(timed.renders);
    console.log(`\n=== ${label}: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${options.runs} runs)`);
    if (stats) console.log(statementLines(stats).join("\n"));
    lines.push(
      `${label.padEnd(56)} median ${median.toFixed(1).padStart(7)} ms  p95 ${p95.toFixed(1).padStart(7)} ms  ${median <= PAGE_TARGET_MS ? "ok" : `OVER ${PAGE_TARGET_MS} ms`} (${Math.round(timed.bytes / 1024)} KiB)${stats ? `; ${statementSummary(stats)}` : ""}`,
    );
  }
  if (!log) lines.push("statements: not shown (start the server with CEILINGS_QUERY_TIMING=<file> and pass --queries <file>)");
  if (options.axe) lines.push(...(await axePages(baseUrl, paths, session)));
  return lines;
}

const PAGE_TARGET_MS = 300;

type TimedPage = { ms: number[]; bytes: number; renders?: TimedStatement[][] };

/** One page fetched `runs` times after a warm-up, with the statements each render ran when `log` is given. */
async function timePage(baseUrl: string, path: string, session: Session, runs: number, log?: StatementLog): Promise<TimedPage> {
  const timed: TimedPage = { ms: [], bytes: 0, renders: log && [] };
  for (let i = 0; i <= runs; i += 1) {
    log?.take(); // anything written between pages belongs to none
    const start = performance.now();
    const response = await fetch(new URL(path, baseUrl), { headers: { cookie: `${session.name}=${session.value}` }, redirect: "manual" });
    const body = await response.text();
    const elapsed = performance.now() - start;
    if (response.status !== 200) {
      throw new Error(
        `GET ${path} answered ${response.status} ${response.headers.get("location") ?? ""}: is the server on this DATABASE_URL and NEXTAUTH_SECRET?`,
      );
    }
    timed.bytes = Buffer.byteLength(body);
    if (i === 0) continue; // the first request warms the route
    timed.ms.push(elapsed);
    if (log) timed.renders?.push(log.take());
  }
  return timed;
}
