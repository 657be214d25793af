import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { AlertKind } from "./kinds";

// The alert rules the worker runs each loop. Each is one statement that fires through
// ceilings.fire_alert, so each alert is recorded (and its deliveries queued) exactly once per
// dedupe key, however many workers run the rule at the same moment.

export type RuleSettings = {
  /** Fail-closed burst: this many `unavailable` refusals of one endpoint within the window. */
  unavailableBurst: number;
  unavailableWindowMinutes: number;
  /** Bot attack: this many throttle and cooldown refusals of one endpoint within the window. */
  refusalSpike: number;
  refusalSpikeWindowMinutes: number;
  /** An adjustment multiplying or dividing a ceiling's or a budget's value by at least this factor. */
  adjustFactor: number;
};

// Audit events older than this are history: a worker started after a long stop does not page
// anyone about last month's kill.
const AUDIT_LOOKBACK = "7 days";

async function firedCount(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = resultRows<{ fired: string | number | null }>(await db.execute(query));
  return Number(row?.fired ?? 0);
}

/**
 * Kill switch pulled or restored: one alert per endpoint per change. The ceilings of one kill are
 * audited in one transaction, so they share its timestamp; the group's first event id is the key.
 */
export function fireKillRestoreAlerts(db: Db): Promise<number> {
  return firedCount(
    db,
    sql`with changes as (
      select min(a.id) as first_id, a.action, a.endpoint_id, a.endpoint_key, a.at, min(a.actor) as actor,
             count(*) as ceilings, min(a.reason) as reason, bool_or(a.details->>'via' = 'all') as kill_all
      from audit_events a
      where a.action in ('ceiling.kill', 'ceiling.restore') and a.at > now() - ${AUDIT_LOOKBACK}::interval
      group by a.action, a.endpoint_id, a.endpoint_key, a.at
    )
    select count(*) filter (where ceilings.fire_alert(
      case c.action when 'ceiling.kill' then 'kill' else 'restore' end,
      format('%s:%s:%s', case c.action when 'ceiling.kill' then 'kill' else 'restore' end, c.endpoint_id, c.first_id),
      c.endpoint_id, null, null,
      case c.action
        when 'ceiling.kill' then format('%s was killed%s by %s: %s ceiling(s) set to 0, every call is refused%s',
          c.endpoint_key, case when c.kill_all then ' (kill all)' else '' end, c.actor, c.ceilings,
          coalesce(' (' || c.reason || ')', ''))
        else format('%s was restored by %s: %s ceiling(s) back in force%s', c.endpoint_key, c.actor, c.ceilings,
          coalesce(' (' || c.reason || ')', ''))
      end,
      jsonb_build_object('auditId', c.first_id, 'actor', c.actor, 'ceilings', c.ceilings, 'reason', c.reason,
                         'killAll', c.kill_all, 'at', c.at))) as fired
    from changes c
    where not exists (
      select 1 from alerts x
      where x.dedupe_key = format('%s:%s:%s', case c.action when 'ceiling.kill' then 'kill' else 'restore' end, c.endpoint_id, c.first_id)
    )`,
  );
}

/** An adjustment that raises or lowers a ceiling by the factor or more (a typo of one zero is 10×). */
export function fireAdjustmentAlerts(db: Db, factor: number): Promise<number> {
  return firedCount(
    db,
    sql`select count(*) filter (where ceilings.fire_alert('adjustment', 'adjustment:' || a.id, a.endpoint_id, a.ceiling_id, null,
      format('%s: ceiling %s %s from %s to %s by %s%s', a.endpoint_key, a.ceiling_id,
             case when a.applied_value > a.previous_value then 'raised' else 'lowered' end,
             a.previous_value, a.applied_value, a.actor, coalesce(' (' || a.reason || ')', '')),
      jsonb_build_object('auditId', a.id, 'previous', a.previous_value, 'applied', a.applied_value,
                         'actor', a.actor, 'reason', a.reason))) as fired
    from audit_events a
    where a.action = 'ceiling.adjust' and a.at > now() - ${AUDIT_LOOKBACK}::interval
      and a.previous_value > 0 and a.applied_value > 0
      and (a.applied_value >= ${factor}::bigint * a.previous_value or a.previous_value >= ${factor}::bigint * a.applied_value)
      and not exists (select 1 from alerts x where x.dedupe_key = 'adjustment:' || a.id)`,
  );
}

/**
 * A budget killed or restored: one alert per event, like an endpoint's. A kill stops every call on
 * every member, so the alert names them. The audit row is the budget's (target its key,
 * details.budgetId); the alert carries the budget so it links to the budget's page.
 */
export function fireBudgetKillRestoreAlerts(db: Db): Promise<number> {
  const budgetKill: AlertKind = "budget_kill";
  const budgetRestore: AlertKind = "budget_restore";
  return firedCount(
    db,
    sql`with events as (
      select a.id, a.action, a.actor, a.reason, a.at, a.previous_value, a.applied_value,
             (a.details->>'budgetId')::int as budget_id, a.target as budget_key,
             case a.action when 'budget.kill' then ${budgetKill}::text else ${budgetRestore}::text end as kind
      from audit_events a
      where a.action in ('budget.kill', 'budget.restore') and a.at > now() - ${AUDIT_LOOKBACK}::interval
    ), keyed as (
      select e.*, format('%s:%s:%s', e.kind, e.budget_id, e.id) as dedupe, b.currency,
             coalesce((select array_agg(ep.key order by ep.key) from budget_members m join endpoints ep on ep.id = m.endpoint_id
                       where m.budget_id = e.budget_id), '{}') as members
      from events e
      left join budgets b on b.id = e.budget_id
    )
    select count(*) filter (where ceilings.fire_alert(k.kind, k.dedupe, null, null, null,
      case k.action
        when 'budget.kill' then format('budget %s was killed by %s: every call on its %s member(s) is refused%s%s',
          k.budget_key, k.actor, cardinality(k.members),
          case when cardinality(k.members) > 0 then ' (' || array_to_string(k.members, ', ') || ')' else '' end,
          coalesce(' (' || k.reason || ')', ''))
        else format('budget %s was restored by %s to %s: its %s member(s) spend again%s', k.budget_key, k.actor,
          ceilings.format_money(k.applied_value, coalesce(k.currency, 'USD')), cardinality(k.members), coalesce(' (' || k.reason || ')', ''))
      end,
      jsonb_build_object('auditId', k.id, 'budgetId', k.budget_id, 'budget', k.budget_key, 'actor', k.actor, 'reason', k.reason,
                         'previous', k.previous_value, 'applied', k.applied_value, 'currency', k.currency,
                         'members', to_jsonb(k.members), 'at', k.at),
      k.budget_id)) as fired
    from keyed k
    where not exists (select 1 from alerts x where x.dedupe_key = k.dedupe)`,
  );
}

/**
 * A budget's value raised or lowered by the factor or more: an adjustment, or an edit of its bounds
 * that moved the value with them. Kills and restores (to or from 0) alert as such instead.
 */
export function fireBudgetAdjustmentAlerts(db: Db, factor: number): Promise<number> {
  const budgetAdjustment: AlertKind = "budget_adjustment";
  return firedCount(
    db,
    sql`with events as (
      select a.id, a.actor, a.reason, a.target as budget_key, (a.details->>'budgetId')::int as budget_id,
             a.previous_value, a.applied_value, ${budgetAdjustment}::text || ':' || a.id as dedupe
      from audit_events a
      where a.action in ('budget.adjust', 'budget.update') and a.at > now() - ${AUDIT_LOOKBACK}::interval
        and a.previous_value > 0 and a.applied_value > 0
        and (a.applied_value >= ${factor}::bigint * a.previous_value or a.previous_value >= ${factor}::bigint * a.applied_value)
    )
    select count(*) filter (where ceilings.fire_alert(${budgetAdjustment}::text, e.dedupe, null, null, null,
      format('budget %s %s from %s to %s by %s%s', e.budget_key,
             case when e.applied_value > e.previous_value then 'raised' else 'lowered' end,
             ceilings.format_money(e.previous_value, coalesce(b.currency, 'USD')),
             ceilings.format_money(e.applied_value, coalesce(b.currency, 'USD')), e.actor, coalesce(' (' || e.reason || ')', '')),
      jsonb_build_object('auditId', e.id, 'budgetId', e.budget_id, 'budget', e.budget_key, 'previous', e.previous_value,
                         'applied', e.applied_value, 'currency', b.currency, 'actor', e.actor, 'reason', e.reason),
      e.budget_id)) as fired
    from events e
    left join budgets b on b.id = e.budget_id
    where not exists (select 1 from alerts x where x.dedupe_key = e.dedupe)`,
  );
}

/**
 * Refusal floods of one endpoint: `unavailable` (failing closed: the database is slow or down) and
 * throttle or cooldown (what a bot attack looks like). At most one alert per endpoint and UTC hour
 * for each, so a long incident pages once an hour rather than every loop.
 */
function fireRefusalFlood(
  db: Db,
  p: { kind: Extract<AlertKind, "fail_closed" | "refusal_spike">; gates: string[]; threshold: number; windowMinutes: number; what: string },
): Promise<number> {
  const gates = sql.join(
    p.gates.map((g) => sql`${g}::refusal_gate`),
    sql`, `,
  );
  return firedCount(
    db,
    sql`with flood as (
      select r.endpoint_key, min(r.endpoint_id) as endpoint_id, sum(r.count) as n,
             count(distinct r.caller) as callers, count(distinct r.destination) as destinations
      from refusals r
      where r.gate in (${gates}) and r.at >= now() - make_interval(mins => ${p.windowMinutes}::int)
      group by r.endpoint_key
      having sum(r.count) >= ${p.threshold}::bigint
    ), keyed as (
      select f.*, format('%s:%s:%s', ${p.kind}::text, f.endpoint_key,
                         to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24')) as dedupe
      from flood f
    )
    select count(*) filter (where ceilings.fire_alert(${p.kind}::text, k.dedupe, k.endpoint_id, null, null,
      format('%s: %s %s in the last %s minutes from %s caller(s)', k.endpoint_key, k.n, ${p.what}::text,
             ${p.windowMinutes}::int, k.callers),
      jsonb_build_object('refusals', k.n, 'callers', k.callers, 'destinations', k.destinations,
        'byGate', (select jsonb_object_agg(g.gate, g.n) from (
            select r.gate, sum(r.count) as n from refusals r
            where r.endpoint_key = k.endpoint_key and r.gate in (${gates})
              and r.at >= now() - make_interval(mins => ${p.windowMinutes}::int)
            group by r.gate) g),
        'from', now() - make_interval(mins => ${p.windowMinutes}::int), 'to', now()))) as fired
    from keyed k
    where not exists (select 1 from alerts x where x.dedupe_key = k.dedupe)`,
  );
}

export function fireUnavailableBursts(db: Db, s: Pick<RuleSettings, "unavailableBurst" | "unavailableWindowMinutes">): Promise<number> {
  return fireRefusalFlood(db, {
    kind: "fail_closed",
    gates: ["unavailable"],
    threshold: s.unavailableBurst,
    windowMinutes: s.unavailableWindowMinutes,
    what: "calls refused as unavailable (failing closed)",
  });
}

export function fireRefusalSpikes(db: Db, s: Pick<RuleSettings, "refusalSpike" | "refusalSpikeWindowMinutes">): Promise<number> {
  return fireRefusalFlood(db, {
    kind: "refusal_spike",
    gates: ["throttle", "cooldown"],
    threshold: s.refusalSpike,
    windowMinutes: s.refusalSpikeWindowMinutes,
    what: "throttle and cooldown refusals",
  });
}

/** Every rule above, in one call; the counts say what fired. */
export async function runAlertRules(db: Db, s: RuleSettings): Promise<Record<string, number>> {
  return {
    killRestore: await fireKillRestoreAlerts(db),
    adjustment: await fireAdjustmentAlerts(db, s.adjustFactor),
    budgetKillRestore: await fireBudgetKillRestoreAlerts(db),
    budgetAdjustment: await fireBudgetAdjustmentAlerts(db, s.adjustFactor),
    failClosed: await fireUnavailableBursts(db, s),
    refusalSpike: await fireRefusalSpikes(db, s),
  };
}
