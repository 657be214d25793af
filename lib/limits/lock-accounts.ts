import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";

/**
 * The accounts named, registered if new (on the default plan, as a first reservation registers
 * them) and locked FOR UPDATE in account order, so the plan each is on cannot move between the
 * looseness check and the write, and two bodies over the same accounts cannot deadlock. The
 * override writers (lib/ceilings/overrides.ts, lib/budgets/change.ts, a catalog file) take the same
 * locks, after their endpoints and ceiling or budget: a move and an override edit of one account
 * are serialised, so each reads what the other wrote.
 */
export async function lockAccounts(tx: Db, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const list = JSON.stringify([...new Set(names)].sort());
  await tx.execute(sql`
    insert into accounts (account)
    select a from jsonb_array_elements_text(${list}::jsonb) as a order by a
    on conflict (account) do nothing`);
  await tx.execute(sql`
    select account from accounts where account in (select jsonb_array_elements_text(${list}::jsonb)) order by account for update`);
}
