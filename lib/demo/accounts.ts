import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { assignPlans, blockAccount } from "@/lib/accounts";
import { setupControl } from "@/lib/control/context";
import { DEMO_CALLERS } from "./catalog";

// The demo's customers as accounts: every caller its history names is registered with the time it
// was first seen (as reserve_batch registers a new caller), a third of them are on the pro plan
// and two on enterprise (acct_4amezdg4 among them, whose own budget override still binds before
// its plan's), through the same bulk assignment the billing service calls; and the account that
// flooded password resets five nights ago is blocked, so the demo has one of each state.

const SEED = { type: "system", name: "demo seed" } as const;

/** The demo plan of each assigned caller; the rest stay on the default plan. */
export function demoAssignments(): { account: string; plan: string }[] {
  return DEMO_CALLERS.flatMap((account, i) => {
    if (i === 0 || i === 5) return [{ account, plan: "enterprise" }];
    if (i % 3 === 1) return [{ account, plan: "pro" }];
    return [];
  });
}

/** The demo's flooding account (lib/demo/incidents.ts), blocked. */
export const DEMO_BLOCKED = DEMO_CALLERS[17] ?? "acct_flood";

export async function seedDemoAccounts(tx: Db): Promise<number> {
  const [registered] = resultRows<{ n: number }>(
    await tx.execute(sql`
      with seen as (
        select r.caller as account, r.created_at as at from reservations r where r.caller <> ''
        union all
        select u.scope_key, u.window_start from usage u join ceilings c on c.id = u.ceiling_id where c.scope = 'caller'
        union all
        select f.caller, f.at from refusals f where f.caller <> ''
      ), added as (
        insert into accounts (account, first_seen_at)
        select account, min(at) from seen group by account order by account
        on conflict do nothing
        returning 1
      )
      select count(*)::int as n from added`),
  );
  // Built on purpose: the demo's customers are put on their (looser) plans as setup, not by a person.
  await assignPlans(tx, { rows: demoAssignments(), actor: SEED, reason: "the demo's paying customers", changeControl: setupControl("demo seed") });
  await blockAccount(tx, { account: DEMO_BLOCKED, actor: SEED, reason: "flooded password resets five nights ago (see its throttle refusals)" });
  return registered?.n ?? 0;
}
