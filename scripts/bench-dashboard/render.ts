import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { encode } from "next-auth/jwt";
import { resultRows, type Db } from "@/db/client";
import { staff } from "@/db/schema";
import { hashPassword } from "@/lib/auth/password";
import { startSession } from "@/lib/auth/sessions";
import { env } from "@/lib/env";

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

function percentile(ms: number[], p: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? 0;
}

/** The pages to time, with the busiest, a killed and the biggest of each kind of thing the database has. */
async function pagesOf(db: Db): Promise<string[]> {
  const one = async (query: ReturnType<typeof sql>): Promise<string | undefined> => {
    const [row] = resultRows<{ v: string | number | null }>(await db.execute(query));
    return row?.v === null || row?.v === undefined ? undefined : String(row.v);
  };
  const busiest = await one(sql`select e.key as v from endpoints e where e.archived_at is null
    order by (select count(*) from reservations r where r.endpoint_id = e.id and r.created_at > now() - interval '1 day') desc, e.key limit 1`);
  const killed = await one(sql`select e.key as v from endpoints e join ceilings c on c.endpoint_id = e.id where c.killed_at is not null order by e.key limit 1`);
  const budget = await one(sql`select b.key as v from budgets b where b.archived_at is null
    order by (select count(*) from budget_members m where m.budget_id = b.id) desc, b.scope = 'account' desc, b.key limit 1`);
  const account = await one(sql`select caller as v from refusals where caller <> '' and at > now() - interval '30 days' group by 1 order by count(*) desc limit 1`);
  const refusal = await one(sql`select id as v from refusals order by at desc nulls last, id desc nulls last limit 1`);
  const plan = await one(sql`select key as v from plans order by key limit 1`);
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

/** Fetches every dashboard page as a signed-in admin; returns summary lines (target 300 ms each). */
export async function renderPages(db: Db, baseUrl: string, runs: number): Promise<string[]> {
  const secret = env().NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET must be set to the server's secret to sign the session cookie");
  const admin = await benchAdmin(db);
  const sid = await startSession(db, { staffId: admin.id });
  const token = await encode({ secret, token: { sub: String(admin.id), email: admin.email, staffId: admin.id, sv: admin.sessionVersion, sid } });
  const lines: string[] = [];
  for (const path of await pagesOf(db)) {
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i <= runs; i += 1) {
      const start = performance.now();
      const response = await fetch(new URL(path, baseUrl), { headers: { cookie: `${COOKIE}=${token}` }, redirect: "manual" });
      const body = await response.text();
      const elapsed = performance.now() - start;
      if (response.status !== 200) {
        throw new Error(`GET ${path} answered ${response.status} ${response.headers.get("location") ?? ""}: is the server on this DATABASE_URL and NEXTAUTH_SECRET?`);
      }
      bytes = Buffer.byteLength(body);
      if (i > 0) ms.push(elapsed); // the first request warms the route
    }
    const p95 = percentile(ms, 0.95);
    const label = `page: ${path}`;
    lines.push(
      `${label.padEnd(56)} median ${percentile(ms, 0.5).toFixed(1).padStart(7)} ms  p95 ${p95.toFixed(1).padStart(7)} ms  ${p95 <= 300 ? "ok" : "OVER 300 ms"} (${Math.round(bytes / 1024)} KiB)`,
    );
  }
  return lines;
}
