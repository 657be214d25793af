import { sql, type SQL } from "drizzle-orm";
import type { UsageSourceKind } from "./types";

// When a compared day is final, and when a budget's day is compared in units only: the rules the
// comparison alerts by, shared with the readers (the grid, the endpoint's days, readiness) so a
// day that may not alert is never shown or counted as "over".

/** How long after its end a provider may still report a day (a bucket, or a day's costs). */
export const LATE_PROVIDER_MS = 24 * 3_600_000;

/**
 * Sources whose usage and costs come as separate reports, the costs possibly later. Not Twilio (a
 * record carries its price) nor the email providers (SendGrid, Postmark, SES report counts alone,
 * never a cost row: waiting for one would leave every day not final).
 */
export const COST_LAGGING_KINDS: readonly UsageSourceKind[] = ["openai", "anthropic"];

/**
 * A pulled day the provider may still report more of: it reported no row at all (no bucket yet,
 * or an empty one: the pull cannot tell), or (OpenAI, Anthropic) usage without any cost row (the
 * costs come separately, sometimes hours later). Such a day is final only when pulled at least
 * LATE_PROVIDER_MS after its end: the pull's time decides, never the clock at comparison, since
 * comparing again a day pulled too early compares the same early answer.
 */
export function providerMayBeLate(p: { kind: UsageSourceKind; rows: number; hasCost: boolean; pulledAt: Date; dayEnd: Date }): boolean {
  const incomplete = p.rows === 0 || (COST_LAGGING_KINDS.includes(p.kind) && !p.hasCost);
  return incomplete && p.pulledAt.getTime() < p.dayEnd.getTime() + LATE_PROVIDER_MS;
}

const late = sql.raw(`interval '${LATE_PROVIDER_MS / 1000} seconds'`);
const lagging = sql.raw(COST_LAGGING_KINDS.map((k) => `'${k}'`).join(", "));

/**
 * providerMayBeLate in SQL, for a reconciliation_days row aliased `d` of a usage_sources row
 * aliased `s`: true when the day's pull may be incomplete (see providerMayBeLate).
 */
export const lateSql: SQL = sql`exists (select 1 from usage_pulls lp where lp.source_id = d.source_id and lp.day = d.day
  and lp.pulled_at < d.day_end + ${late}
  and (lp.rows = 0 or (s.kind::text in (${lagging})
    and not exists (select 1 from usage_rows lu where lu.source_id = d.source_id and lu.day = d.day and lu.cost_micros is not null))))`;

/** Not final (`d`, `s` as in lateSql): reservations still held, or a pull that may be incomplete. */
export const notFinalSql: SQL = sql`(d.held_reservations > 0 or ${lateSql})`;

/**
 * A budget's day compared in units alone (`d` as in lateSql): the budget's own rows carry no money
 * (a file of counts), and a budget has no price to put on them, so money would read "billed $0".
 */
export const unitsOnlySql: SQL = sql`(d.budget_id is not null
  and exists (select 1 from usage_rows bu where bu.source_id = d.source_id and bu.day = d.day and bu.budget_id = d.budget_id)
  and not exists (select 1 from usage_rows bu where bu.source_id = d.source_id and bu.day = d.day and bu.budget_id = d.budget_id and bu.cost_micros is not null))`;
