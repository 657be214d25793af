import { desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { apiKeys, refusals } from "@/db/schema";
import { apiKeySummaryColumns, type ApiKeySummary } from "@/lib/api-keys/list";
import { Int, NullableInt, parseRows } from "@/lib/spend/source";
import { readBudgetBindings, readCeilingBindings, type BudgetBinding, type CeilingBinding } from "./read-bindings";
import { thirtyDaysFrom } from "./read-binding";
import { parseAccountQuery } from "./read-search";

// One account as staff look at it when a customer writes in: its plan, whether it is blocked,
// what binds it on every per-caller ceiling and per-account budget (and why), what it spent in
// the open windows and over 30 days, where it was refused, what it reserved lately, its keys.
// Every read is keyed by the account, so the page costs the same among a million accounts.

export { estimateAccounts, parseAccountQuery, prefixRange, searchAccounts, type AccountMatch, type AccountSearch } from "./read-search";
export { bindingSourceLabel, thirtyDaysFrom, type Binding } from "./read-binding";
export type { BudgetBinding, CeilingBinding } from "./read-bindings";
export {
  listPlanOptions,
  listTopTargets,
  topAccounts,
  topTargetParam,
  type OverRead,
  type PlanOption,
  type TopAccountNow,
  type TopAccountOver,
  type TopAccounts,
  type TopTarget,
} from "./read-top";

/** Refusals and reservations listed on the account page, newest first. */
export const ACCOUNT_LATEST = 20;

export type AccountPlan = { id: number; key: string; name: string; isDefault: boolean; onDefault: boolean; setAt: Date | null; setBy: string | null };

export type AccountRefusal = {
  id: number;
  at: Date;
  lastAt: Date;
  endpointKey: string;
  gate: string;
  caller: string;
  destination: string;
  amount: number;
  count: number;
  detail: string | null;
};

export type AccountReservation = {
  id: string;
  endpointKey: string;
  amount: number;
  money: number;
  state: "held" | "settled" | "released" | "expired";
  settledAmount: number | null;
  settledMoney: number | null;
  overrun: boolean;
  createdAt: Date;
  resolvedAt: Date | null;
  currency: string;
};

export type AccountView = {
  account: string;
  /** Ceilings has a row for it: a reservation batch named it, or it was assigned a plan or blocked. */
  registered: boolean;
  firstSeenAt: Date | null;
  /** null only if no plan is the default (the schema and the write path keep exactly one). */
  plan: AccountPlan | null;
  blocked: { at: Date; by: string | null; reason: string | null } | null;
  /** The first day of the 30 days (UTC midnight 29 days before today's). */
  since: Date;
  ceilings: CeilingBinding[];
  budgets: BudgetBinding[];
  refusals: AccountRefusal[];
  reservations: AccountReservation[];
  apiKeys: ApiKeySummary[];
};

const Time = z.coerce.date();
const AccountRow = z.object({
  registered: z.boolean(),
  first_seen_at: Time.nullable(),
  plan_set_at: Time.nullable(),
  plan_set_by: z.string().nullable(),
  blocked_at: Time.nullable(),
  blocked_by: z.string().nullable(),
  block_reason: z.string().nullable(),
  plan_id: NullableInt,
  plan_key: z.string().nullable(),
  plan_name: z.string().nullable(),
  is_default: z.boolean().nullable(),
  on_default: z.boolean(),
});

async function readAccountRow(db: Db, account: string): Promise<z.infer<typeof AccountRow>> {
  const result = await db.execute(sql`
    select a.account is not null as registered, a.first_seen_at, a.plan_set_at, a.plan_set_by,
      a.blocked_at, a.blocked_by, a.block_reason, a.plan_id is null as on_default,
      p.id as plan_id, p.key as plan_key, p.name as plan_name, p.is_default
    from (select ${account}::text as k) q
    left join accounts a on a.account = q.k
    left join plans p on p.id = coalesce(a.plan_id, (select d.id from plans d where d.is_default))`);
  const [row] = parseRows("account", AccountRow, result);
  // The query selects from a one-row subquery with left joins only: a row always comes back.
  if (!row) throw new Error("account: no row from a one-row query");
  return row;
}

async function readRefusals(db: Db, account: string): Promise<AccountRefusal[]> {
  // refusals_caller_at_idx (caller, at desc nulls last, id desc nulls last): the newest rows of one
  // caller, read in order. The order must say nulls last as the index does: a plain desc (nulls
  // first) does not match it, and Postgres sorts every refusal of the caller instead.
  return db
    .select({
      id: refusals.id,
      at: refusals.at,
      lastAt: refusals.lastAt,
      endpointKey: refusals.endpointKey,
      gate: refusals.gate,
      caller: refusals.caller,
      destination: refusals.destination,
      amount: refusals.amount,
      count: refusals.count,
      detail: refusals.detail,
    })
    .from(refusals)
    .where(eq(refusals.caller, account))
    .orderBy(sql`${refusals.at} desc nulls last`, sql`${refusals.id} desc nulls last`)
    .limit(ACCOUNT_LATEST);
}

const ReservationRow = z.object({
  id: z.string(),
  endpoint_key: z.string(),
  amount: Int,
  money: Int,
  state: z.enum(["held", "settled", "released", "expired"]),
  settled_amount: NullableInt,
  settled_money: NullableInt,
  overrun: z.boolean(),
  created_at: Time,
  resolved_at: Time.nullable(),
  currency: z.string(),
});

/**
 * The account's newest reservations: one short range of reservations_caller_created_idx (caller,
 * created_at desc nulls last, id desc nulls last) where caller <> '', which this ordering and
 * condition match word for word (a plain desc is nulls first and would sort the account's rows).
 */
export function latestReservationsQuery(account: string, limit: number) {
  return sql`
    select r.id::text as id, e.key as endpoint_key, r.amount, r.money, r.state::text as state, r.settled_amount, r.settled_money,
      r.overrun, r.created_at, r.resolved_at, e.currency
    from reservations r
    join endpoints e on e.id = r.endpoint_id
    where r.caller = ${account} and r.caller <> ''
    order by r.created_at desc nulls last, r.id desc nulls last
    limit ${limit}`;
}

async function readReservations(db: Db, account: string): Promise<AccountReservation[]> {
  const rows = parseRows("account reservations", ReservationRow, await db.execute(latestReservationsQuery(account, ACCOUNT_LATEST)));
  return rows.map((r) => ({
    id: r.id,
    endpointKey: r.endpoint_key,
    amount: r.amount,
    money: r.money,
    state: r.state,
    settledAmount: r.settled_amount,
    settledMoney: r.settled_money,
    overrun: r.overrun,
    createdAt: r.created_at,
    resolvedAt: r.resolved_at,
    currency: r.currency,
  }));
}

async function readApiKeys(db: Db, account: string): Promise<ApiKeySummary[]> {
  // api_keys is a few rows per service, not per call: no index on account is needed.
  return db
    .select(apiKeySummaryColumns)
    .from(apiKeys)
    .where(eq(apiKeys.account, account))
    .orderBy(sql`${apiKeys.revokedAt} is not null`, desc(apiKeys.createdAt), desc(apiKeys.id));
}

/**
 * Everything the account page shows for `account` (any valid id: one Ceilings has never seen
 * reads as an account on the default plan with nothing yet). Throws InputError for an id
 * enforcement could never have keyed (control characters, over 200 characters).
 */
export async function readAccount(db: Db, account: string, now: Date): Promise<AccountView> {
  const id = parseAccountQuery(account);
  const since = thirtyDaysFrom(now);
  const [row, ceilings, budgets, refused, reserved, keys] = await Promise.all([
    readAccountRow(db, id),
    readCeilingBindings(db, { account: id, now, since }),
    readBudgetBindings(db, { account: id, now, since }),
    readRefusals(db, id),
    readReservations(db, id),
    readApiKeys(db, id),
  ]);
  const plan =
    row.plan_id !== null && row.plan_key !== null && row.plan_name !== null
      ? {
          id: row.plan_id,
          key: row.plan_key,
          name: row.plan_name,
          isDefault: row.is_default ?? false,
          onDefault: row.on_default,
          setAt: row.plan_set_at,
          setBy: row.plan_set_by,
        }
      : null;
  return {
    account: id,
    registered: row.registered,
    firstSeenAt: row.first_seen_at,
    plan,
    blocked: row.blocked_at ? { at: row.blocked_at, by: row.blocked_by, reason: row.block_reason } : null,
    since,
    ceilings,
    budgets,
    refusals: refused,
    reservations: reserved,
    apiKeys: keys,
  };
}
