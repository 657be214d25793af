import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { DAY_MS } from "@/lib/time";
import { listBudgets, readBudget, topAccountsNow, topAccountsOver, windowsBack } from "./index";
import { topAccountsNowQuery, topAccountsOverQuery } from "./read-accounts";
import { insertBudget, insertEndpoint } from "./read-fixtures";

// The top-accounts reads at 100,000 accounts. Timings are printed, not asserted (they belong to
// the machine); what is asserted is that the answers are right at that size.

const ACCOUNTS = 100_000;
const NOW = new Date("2026-03-10T12:00:00Z");
const TODAY = new Date("2026-03-10T00:00:00Z");

type Plan = { "Execution Time": number; Plan: { "Node Type": string; Plans?: Plan["Plan"][]; "Index Name"?: string } };

function indexesOf(node: Plan["Plan"]): string[] {
  return [...(node["Index Name"] ? [`${node["Node Type"]} on ${node["Index Name"]}`] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
}

async function median(times: number, work: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await work();
    ms.push(performance.now() - start);
  }
  return ms.sort((a, b) => a - b)[Math.floor(times / 2)] ?? 0;
}

describe.skipIf(skipWithoutDatabase())("top accounts of a per-account budget at 100,000 accounts", () => {
  const t = useTestDatabase("budget_top_accounts");

  it("reads the top accounts over 90 days and in the open window, and prints how long it takes", { timeout: 120_000 }, async () => {
    const e = await insertEndpoint(t.db);
    const spread = await insertBudget(t.db, { members: [e.id], scope: "account", value: 1_000_000_000 });
    const crowded = await insertBudget(t.db, { members: [e.id], scope: "account", value: 1_000_000_000 });
    // `spread`: one row per account over the last 90 days; `crowded`: every account in today's window.
    await t.db.execute(sql`
      insert into budget_usage (budget_id, scope_key, window_start, window_end, held, settled, reservations)
      select ${spread.id}, 'acct-' || i, d, d + interval '1 day', 0, i, 1
      from generate_series(1, ${ACCOUNTS}::int) i,
        lateral (select ${TODAY.toISOString()}::timestamptz - (i % 90) * interval '1 day' as d) day`);
    await t.db.execute(sql`
      insert into budget_usage (budget_id, scope_key, window_start, window_end, held, settled, reservations)
      select ${crowded.id}, 'acct-' || i, ${TODAY.toISOString()}::timestamptz, ${TODAY.toISOString()}::timestamptz + interval '1 day', i % 7, i, 1
      from generate_series(1, ${ACCOUNTS}::int) i`);
    await t.ownerDb.execute(sql`analyze budget_usage`);

    const from = windowsBack({ window: "utc_day", billingDay: 1 }, NOW, 90)[0]?.start ?? TODAY;
    expect(from).toEqual(new Date(TODAY.getTime() - 89 * DAY_MS));
    const top = await topAccountsOver(t.db, { budgetId: spread.id, from, through: TODAY, limit: 10 });
    // Account i spent i; the 90 days hold every account (i % 90 days ago, 0..89).
    expect(top.map((a) => a.account)).toEqual(Array.from({ length: 10 }, (_, k) => `acct-${ACCOUNTS - k}`));

    const explain = async (query: ReturnType<typeof sql>) =>
      resultRows<{ "QUERY PLAN": Plan[] }>(await t.db.execute(sql`explain (analyze, format json) ${query}`))[0]?.["QUERY PLAN"][0];
    const described = (plan: Plan | undefined) => (plan ? `${plan["Execution Time"].toFixed(1)} ms (${indexesOf(plan.Plan).join(", ") || "no index"})` : "?");
    const plan90 = await explain(topAccountsOverQuery({ budgetId: spread.id, from, through: TODAY, limit: 10 }));
    const planNow = await explain(topAccountsNowQuery(sql`b.id = ${crowded.id}`, NOW, 10));
    const detail = await readBudget(t.db, { key: crowded.key, now: NOW });
    expect(detail?.topAccounts[0]).toMatchObject({ account: `acct-${ACCOUNTS}`, spend: ACCOUNTS + (ACCOUNTS % 7) });
    expect(detail?.accounts).toBe(ACCOUNTS);

    const over90 = await median(5, () => topAccountsOver(t.db, { budgetId: spread.id, from, through: TODAY, limit: 10 }));
    const now = await median(5, () => topAccountsNow(t.db, sql`b.id = ${crowded.id}`, NOW, 10));
    const page = await median(5, () => readBudget(t.db, { key: crowded.key, now: NOW }));
    const list = await median(5, () => listBudgets(t.db, { now: NOW }));
    console.log(
      [
        `top accounts over 90 days, ${ACCOUNTS} accounts (one row each): EXPLAIN ANALYZE ${described(plan90)}; median of 5 calls ${over90.toFixed(1)} ms`,
        `top accounts in the open window, ${ACCOUNTS} accounts in it: EXPLAIN ANALYZE ${described(planNow)}; median of 5 calls ${now.toFixed(1)} ms`,
        `readBudget with ${ACCOUNTS} accounts in the open window (its sum, busiest, top now, 90 days): median ${page.toFixed(1)} ms`,
        `listBudgets over both budgets: median ${list.toFixed(1)} ms`,
      ].join("\n"),
    );
  });
});
