import { availableParallelism, loadavg } from "node:os";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { DAY_MS } from "@/lib/time";
import { listBudgets, readBudgetDetail, topAccountsNow, topAccountsOver, windowsBack, WINDOW_TOP } from "./index";
import { candidateTotalsQuery, topAccountsNowQuery, topAccountsOverQuery, windowTopsQuery } from "./read-accounts";
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

  it("reads the top accounts over 90 days and in the open window, right at that size, and prints how long it takes", { timeout: 180_000 }, async () => {
    const e = await insertEndpoint(t.db);
    const perAccount = { members: [e.id], scope: "account" as const, value: 1_000_000_000 };
    const spread = await insertBudget(t.db, perAccount);
    const heavy = await insertBudget(t.db, perAccount);
    const crowded = await insertBudget(t.db, perAccount);
    const today = sql`${TODAY.toISOString()}::timestamptz`;
    // spread: account i settled i, once, i % 90 days ago: money spread thin, no account stands out.
    // heavy: the same, plus 20 big accounts that spend every day (most bills look like this).
    // crowded: every account in today's window.
    for (const b of [spread, heavy]) {
      await t.db.execute(sql`
        insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
        select (select limit_id from budgets where id = ${b.id}), 'acct-' || i, ${today} - (i % 90) * interval '1 day', ${today} - (i % 90 - 1) * interval '1 day', 0, i, 1
        from generate_series(1, ${ACCOUNTS}::int) i`);
    }
    await t.db.execute(sql`
      insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
      select (select limit_id from budgets where id = ${heavy.id}), 'big-' || k, ${today} - d * interval '1 day', ${today} - (d - 1) * interval '1 day', 0, 1000000 + k, 1
      from generate_series(1, 20) k, generate_series(0, 89) d`);
    await t.db.execute(sql`
      insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
      select (select limit_id from budgets where id = ${crowded.id}), 'acct-' || i, ${today}, ${today} + interval '1 day', i % 7, i, 1
      from generate_series(1, ${ACCOUNTS}::int) i`);
    await t.ownerDb.execute(sql`analyze counters`);

    const starts = windowsBack({ window: "utc_day", billingDay: 1 }, NOW, 90).map((w) => w.start);
    expect(starts[0]).toEqual(new Date(TODAY.getTime() - 89 * DAY_MS));
    const everyRow = async (budgetId: number) =>
      resultRows<{ scope_key: string }>(await t.db.execute(topAccountsOverQuery({ budgetId, starts, limit: 10 }))).map((r) => r.scope_key);

    // Spread thin, the window tops prove nothing and every row is summed: still the right answer.
    const thin = await topAccountsOver(t.db, { budgetId: spread.id, starts, limit: 10 });
    expect(thin.read).toBe("every row");
    expect(thin.accounts.map((a) => a.account)).toEqual(Array.from({ length: 10 }, (_, k) => `acct-${ACCOUNTS - k}`));
    // With big accounts, the window tops prove the answer, and it is the one summing every row gives.
    const tail = await topAccountsOver(t.db, { budgetId: heavy.id, starts, limit: 10 });
    expect(tail.read).toBe("window tops");
    expect(tail.accounts.map((a) => a.account)).toEqual(await everyRow(heavy.id));
    expect(tail.accounts[0]).toEqual({ account: "big-20", settled: 90 * 1_000_020, windows: 90 });

    const explain = async (query: ReturnType<typeof sql>) =>
      resultRows<{ "QUERY PLAN": Plan[] }>(await t.db.execute(sql`explain (analyze, format json) ${query}`))[0]?.["QUERY PLAN"][0];
    const described = (plan: Plan | undefined) => (plan ? `${plan["Execution Time"].toFixed(1)} ms (${indexesOf(plan.Plan).join(", ") || "no index"})` : "?");
    const planEveryRow = await explain(topAccountsOverQuery({ budgetId: spread.id, starts, limit: 10 }));
    const planTops = await explain(windowTopsQuery({ budgetId: heavy.id, starts, limit: 10 }));
    const bigOnes = Array.from({ length: 20 }, (_, k) => `big-${k + 1}`);
    const planCandidates = await explain(candidateTotalsQuery({ budgetId: heavy.id, starts, limit: 10 }, bigOnes));
    const planNow = await explain(topAccountsNowQuery(sql`b.id = ${crowded.id}`, NOW, 10));
    const detail = await readBudgetDetail(t.db, { key: crowded.key, now: NOW });
    expect(detail?.topAccounts[0]).toMatchObject({ account: `acct-${ACCOUNTS}`, settled: ACCOUNTS, held: ACCOUNTS % 7 });
    expect(detail?.accounts).toBe(ACCOUNTS);

    const tailMs = await median(5, () => topAccountsOver(t.db, { budgetId: heavy.id, starts, limit: 10 }));
    const thinMs = await median(5, () => topAccountsOver(t.db, { budgetId: spread.id, starts, limit: 10 }));
    const nowMs = await median(5, () => topAccountsNow(t.db, sql`b.id = ${crowded.id}`, NOW, 10));
    const page = await median(5, () => readBudgetDetail(t.db, { key: crowded.key, now: NOW }));
    const list = await median(5, () => listBudgets(t.db, { now: NOW }));
    // The members' shares read the members' reservations of the window: 100,000 of them today,
    // each charging the three budgets (per account), as reserve_batch writes their charges.
    await t.db.execute(sql`
      insert into reservations (endpoint_id, caller, amount, money, settled_money, state, charges, created_at, expires_at)
      select ${e.id}, 'acct-' || i, 1, 10, case when i % 2 = 0 then 7 end, case when i % 2 = 0 then 'settled' else 'held' end::reservation_state,
        (select array_agg(row(b, 'acct-' || i, ${today}, 'm', 10)::reservation_charge) from unnest(array[${spread.limitId}, ${heavy.limitId}, ${crowded.limitId}]::int[]) b),
        ${today} + (i % 43000) * interval '1 second', ${today} + interval '1 day'
      from generate_series(1, ${ACCOUNTS}::int) i`);
    await t.ownerDb.execute(sql`analyze reservations`);
    const [shared] = (await listBudgets(t.db, { now: NOW })).filter((v) => v.id === crowded.id);
    expect(shared?.members[0]).toMatchObject({ money: (ACCOUNTS / 2) * 17, reservations: ACCOUNTS });
    const listShares = await median(5, () => listBudgets(t.db, { now: NOW }));
    console.log(
      [
        `top accounts over 90 days, ${ACCOUNTS} accounts + 20 big ones daily (proved from each window's top ${WINDOW_TOP}): median of 5 calls ${tailMs.toFixed(1)} ms; EXPLAIN ANALYZE window tops ${described(planTops)} + candidates' totals ${described(planCandidates)}`,
        `top accounts over 90 days, ${ACCOUNTS} accounts spread thin (every row summed): median of 5 calls ${thinMs.toFixed(1)} ms; EXPLAIN ANALYZE of the sum ${described(planEveryRow)}`,
        `top accounts in the open window, ${ACCOUNTS} accounts in it: median of 5 calls ${nowMs.toFixed(1)} ms; EXPLAIN ANALYZE ${described(planNow)}`,
        `readBudgetDetail with ${ACCOUNTS} accounts in the open window (its sum, busiest, top now, 90 days): median ${page.toFixed(1)} ms`,
        `listBudgets over the three budgets: median ${list.toFixed(1)} ms; with ${ACCOUNTS} reservations of their member in the window: ${listShares.toFixed(1)} ms`,
        `(load average at the end: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(", ")} on ${availableParallelism()} cores)`,
      ].join("\n"),
    );
  });
});
