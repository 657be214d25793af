import { count, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { findDrift } from "@/lib/alerts/reconcile";
import { listBudgets } from "@/lib/budgets";
import { DEMO_BLOCKED, demoAssignments } from "./accounts";
import { verifyPassword } from "@/lib/auth/password";
import { resultRows } from "@/db/client";
import { DEMO_ENDPOINTS, DEMO_PASSWORD } from "./catalog";
import { endpoints, staff } from "@/db/schema";
import { seedDemoIfEmpty } from "./seed";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";

const quiet = { log: () => {}, bcryptCost: 4 };

describe.skipIf(skipWithoutDatabase())("demo seed on Postgres", () => {
  const t = useTestDatabase("seed");
  let seededFirst: boolean;
  const printed: string[] = [];
  beforeAll(async () => {
    seededFirst = await seedDemoIfEmpty(t.db, { ...quiet, log: (line) => printed.push(line), dataDir: ".data" });
  });

  it("seeds an empty database once, and leaves a seeded one alone", async () => {
    expect(seededFirst).toBe(true);
    expect(await seedDemoIfEmpty(t.db, quiet)).toBe(false);
    const [row] = await t.db.select({ n: count() }).from(endpoints);
    expect(row?.n).toBe(DEMO_ENDPOINTS.length);
  });

  it("prints the demo credentials and the data folder on the first seed", () => {
    const text = printed.join("\n");
    expect(text).toContain("admin@ceilings.local");
    expect(text).toContain(`"${DEMO_PASSWORD}"`);
    expect(text).toContain("Embedded database in .data/");
  });

  it("creates the demo staff with the printed password", async () => {
    const rows = await t.db.select().from(staff).where(eq(staff.email, "admin@ceilings.local"));
    expect(rows[0]?.role).toBe("admin");
    expect(await verifyPassword(DEMO_PASSWORD, rows[0]?.passwordHash ?? "")).toBe(true);
  });

  it("never records calendar-window usage above the ceiling in force", async () => {
    const over = resultRows(
      await t.db.execute(sql`
        select c.id, u.scope_key, u.window_start, u.settled + u.held as used, c.value
        from usage u join ceilings c on c.id = u.ceiling_id
        where u.settled + u.held > c.value`),
    );
    expect(over).toEqual([]);
  });

  it("seeds the LLM endpoints priced by input and output tokens, and today's reservations with their parts and money", async () => {
    const [gpt] = await t.db.select().from(endpoints).where(eq(endpoints.key, "llm.gpt-4o"));
    expect(gpt?.parts).toEqual([
      { name: "input", pricePico: 2_500_000 },
      { name: "output", pricePico: 10_000_000 },
    ]);
    const rows = resultRows<{ parts: Record<string, number>; amount: number; money: number }>(
      await t.db.execute(sql`select r.parts, r.amount::int as amount, r.money::int as money from reservations r where r.endpoint_id = ${gpt?.id ?? 0}`),
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.money).toBe(Math.ceil((r.parts.input ?? 0) * 2.5 + (r.parts.output ?? 0) * 10));
  });

  it("seeds a company-wide LLM budget and a per-account one with five weeks of history, never above the value", async () => {
    const rows = resultRows<{ key: string; scope: string; days: number; accounts: number; over: number; members: number }>(
      await t.db.execute(sql`
        select b.key, b.scope::text as scope, count(distinct u.window_start)::int as days, count(distinct u.scope_key)::int as accounts,
               count(*) filter (where u.settled > coalesce(o.value, b.value))::int as over,
               (select count(*)::int from budget_members m where m.budget_id = b.id) as members
        from budgets b join budget_usage u on u.budget_id = b.id
        left join limit_overrides o on o.limit_id = b.limit_id and o.caller = u.scope_key
        group by b.id order by b.key`),
    );
    expect(rows.map((r) => [r.key, r.scope, r.members])).toEqual([
      ["llm-daily", "global", 4],
      ["llm-per-account", "account", 4],
    ]);
    for (const r of rows) {
      expect(r.days).toBeGreaterThanOrEqual(35);
      expect(r.over).toBe(0);
    }
    expect(rows[1]?.accounts).toBeGreaterThan(10);
    // Today's settled reservations name the budgets they charged, so the members' shares show.
    const views = await listBudgets(t.db);
    for (const v of views) expect(v.members.reduce((n, m) => n + m.money, 0)).toBeGreaterThan(0);
  });

  it("registers every caller its history names as an account, a third on pro, two on enterprise, the flooder blocked", async () => {
    const [row] = resultRows<{ callers: number; accounts: number; pro: number; enterprise: number; blocked: string[] }>(
      await t.db.execute(sql`
        select (select count(distinct caller)::int from (select caller from reservations union select caller from refusals
                  union select scope_key from usage u join ceilings c on c.id = u.ceiling_id where c.scope = 'caller') x where caller <> '') as callers,
               (select count(*)::int from accounts) as accounts,
               (select count(*)::int from accounts a join plans p on p.id = a.plan_id where p.key = 'pro') as pro,
               (select count(*)::int from accounts a join plans p on p.id = a.plan_id where p.key = 'enterprise') as enterprise,
               (select array_agg(account) from accounts where blocked_at is not null) as blocked`),
    );
    expect(row?.accounts).toBe(row?.callers);
    expect(row?.pro).toBe(demoAssignments().filter((a) => a.plan === "pro").length);
    expect(row?.enterprise).toBe(2);
    expect(row?.blocked).toEqual([DEMO_BLOCKED]);
    const plans = resultRows<{ key: string; is_default: boolean }>(await t.db.execute(sql`select key, is_default from plans order by key`));
    expect(plans).toEqual([
      { key: "default", is_default: true },
      { key: "enterprise", is_default: false },
      { key: "pro", is_default: false },
    ]);
  });

  it("leaves counters and reservations in agreement, so the reconcile job reports no drift", async () => {
    expect(await findDrift(t.db)).toEqual([]);
  });

  it("keeps usage windows identical to the enforcement functions' windows", async () => {
    // The SQL windows are the lead's; if they are not migrated yet there is nothing to compare.
    const fn = resultRows(await t.db.execute(sql`select 1 from pg_proc where proname = 'window_bounds'`));
    if (fn.length === 0) return;
    const [row] = resultRows<{ compared: number; mismatched: number }>(
      await t.db.execute(sql`
        select count(*)::int as compared,
               count(*) filter (where b.window_start <> u.window_start or b.window_end <> u.window_end)::int as mismatched
        from usage u join ceilings c on c.id = u.ceiling_id join endpoints e on e.id = c.endpoint_id,
        lateral ceilings.window_bounds(c.window, e.billing_day, c.window_seconds, u.window_start) b`),
    );
    expect(row?.compared).toBeGreaterThan(500);
    expect(row?.mismatched).toBe(0);
  });
});

describe.skipIf(skipWithoutDatabase())("demo seed racing itself", () => {
  const t = useTestDatabase("seed race");

  it("seeds exactly once when two processes start on an empty database together", async () => {
    const results = await Promise.all([seedDemoIfEmpty(t.db, quiet), seedDemoIfEmpty(t.db, quiet), seedDemoIfEmpty(t.db, quiet)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const [row] = await t.db.select({ n: count() }).from(endpoints);
    expect(row?.n).toBe(DEMO_ENDPOINTS.length);
  });
});
