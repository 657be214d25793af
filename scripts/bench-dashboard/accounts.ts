import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { resultRows, type Db } from "@/db/client";
import { latestReservationsQuery, listTopTargets, prefixRange, readAccount, searchAccounts, topAccounts, type TopTarget } from "@/lib/accounts/read";
import { ceilingTopNowQuery, ceilingTopOverQuery } from "@/lib/accounts/read-top";
import { windowFor } from "@/lib/limits/windows";
import { listPlans } from "@/lib/plans";
import { formatCount } from "@/lib/format";
import { BUSY_ACCOUNT_SQL } from "../db-fill/accounts";

// The account pages' reads at scale (npm run db:fill registers a million accounts, a tenth on
// plans, and ranks 100,000 accounts today on the busiest per-caller ceiling): a busy account's
// page, a search by prefix, and the top accounts of an endpoint and of a budget. Target 50 ms each.

/** A timed read, and the one statement EXPLAIN shows for it (none for a read of several statements). */
export type BenchCase = { label: string; run: () => Promise<unknown>; text?: () => string; target: number };

const dialect = new PgDialect();

export async function accountCases(db: Db, now: Date, inline: (query: { sql: string; params: unknown[] }) => string): Promise<BenchCase[]> {
  const [known] = resultRows<{ n: number | string }>(await db.execute(sql`select count(*) as n from accounts`));
  const accounts = Number(known?.n ?? 0);
  if (accounts === 0) return [];
  // The fill's busy account; on another database, the caller refused most in 30 days.
  const [busy] = resultRows<{ account: string }>(
    await db.execute(sql`
      select coalesce((select account from accounts where account = ${BUSY_ACCOUNT_SQL}),
        (select caller from refusals where caller <> '' and at > now() - interval '30 days' group by 1 order by count(*) desc limit 1)) as account`),
  );
  const account = busy?.account;
  const text = (query: SQL) => () => inline(dialect.sqlToQuery(query));
  const n = formatCount(accounts);
  const cases: BenchCase[] = [];
  if (account) {
    cases.push({ label: `account: a busy account's page (${n} accounts)`, target: 50, run: () => readAccount(db, account, now) });
    cases.push({
      label: "account: its latest reservations",
      target: 50,
      run: () => db.execute(latestReservationsQuery(account, 20)),
      text: text(latestReservationsQuery(account, 20)),
    });
  }
  // A prefix of the busy account's id that many accounts share, and the exact id.
  const prefix = (account ?? "acct_").slice(0, 7);
  const range = prefixRange(prefix);
  cases.push({
    label: `account: search by prefix '${prefix}'`,
    target: 50,
    run: () => searchAccounts(db, prefix, 50),
    // The statement's range, as searchAccounts builds it (ids of the fill are plain ASCII: no quoting needed).
    text: () => `select account from accounts where account ~>=~ '${range.from}' and account ~<~ '${range.to ?? ""}' order by account using ~<~ limit 51`,
  });
  if (account) cases.push({ label: "account: search by exact id", target: 50, run: () => searchAccounts(db, account, 50) });
  cases.push({ label: `plans: the list, with the accounts on each (${n} accounts)`, target: 50, run: () => listPlans(db) });

  const targets = await listTopTargets(db);
  const ranked = await busiestTargets(db, targets, now);
  if (ranked.ceiling) {
    const t = ranked.ceiling;
    const start = windowFor(t.window, { billingDay: t.billingDay }, now).start;
    cases.push({
      label: `accounts: top per endpoint (${t.endpointKey}, ${formatCount(ranked.ceilingRows)} today)`,
      target: 50,
      run: () => topAccounts(db, { target: t, now }),
    });
    cases.push({
      label: "accounts: top per endpoint, open window query",
      target: 50,
      run: () => db.execute(ceilingTopNowQuery(t.id, start, 10)),
      text: text(ceilingTopNowQuery(t.id, start, 10)),
    });
    const from = new Date(start.getTime() - 29 * 86_400_000);
    cases.push({
      label: "accounts: top per endpoint, 30 days, every row (?exact=1)",
      target: 50,
      run: () => db.execute(ceilingTopOverQuery(t.id, from, start, 10)),
      text: text(ceilingTopOverQuery(t.id, from, start, 10)),
    });
  }
  if (ranked.budget) {
    const t = ranked.budget;
    cases.push({ label: `accounts: top per budget (${t.key})`, target: 50, run: () => topAccounts(db, { target: t, now }) });
  }
  return cases;
}

/** The per-caller ceiling with the most accounts counted today, and the first per-account budget. */
async function busiestTargets(
  db: Db,
  targets: TopTarget[],
  now: Date,
): Promise<{ ceiling?: Extract<TopTarget, { kind: "ceiling" }>; ceilingRows: number; budget?: Extract<TopTarget, { kind: "budget" }> }> {
  const ceilings = targets.filter((t): t is Extract<TopTarget, { kind: "ceiling" }> => t.kind === "ceiling");
  const today = windowFor("utc_day", {}, now).start.toISOString();
  const [top] = resultRows<{ ceiling_id: number; n: number | string }>(
    await db.execute(
      sql`select ceiling_id, count(*) as n from usage where window_start = ${today}::timestamptz and scope_key <> '' group by 1 order by 2 desc limit 1`,
    ),
  );
  return {
    ceiling: ceilings.find((c) => c.id === Number(top?.ceiling_id)) ?? ceilings[0],
    ceilingRows: Number(top?.n ?? 0),
    budget: targets.find((t): t is Extract<TopTarget, { kind: "budget" }> => t.kind === "budget"),
  };
}
