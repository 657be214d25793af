import { and, asc, desc, eq, gt, gte, isNull, sql } from "drizzle-orm";
import { type Db } from "@/db/client";
import { budgets, endpoints } from "@/db/schema";
import { usagePulls, usageRows, usageSourceRules, usageSources, type UsageSource } from "@/db/schema/reconciliation";
import { addDays, dayIn } from "./days";
import type { ProviderDay } from "./types";

// What the sources' pages read: the list with each source's state, and one source in full (its
// rules, recent pulls, the items no rule maps, and its raw rows of one day, a page at a time).

export type UsageSourceListItem = Pick<
  UsageSource,
  "id" | "name" | "kind" | "enabled" | "timeZone" | "currency" | "pullRequestedAt" | "lastPullAt" | "lastPullOk" | "lastPullError"
> & {
  rules: number;
  /** Provider days held (pulled or imported). */
  days: number;
  lastDay: ProviderDay | null;
};

export async function listUsageSources(db: Db): Promise<UsageSourceListItem[]> {
  return db
    .select({
      id: usageSources.id,
      name: usageSources.name,
      kind: usageSources.kind,
      enabled: usageSources.enabled,
      timeZone: usageSources.timeZone,
      currency: usageSources.currency,
      pullRequestedAt: usageSources.pullRequestedAt,
      lastPullAt: usageSources.lastPullAt,
      lastPullOk: usageSources.lastPullOk,
      lastPullError: usageSources.lastPullError,
      rules: sql<number>`(select count(*)::int from usage_source_rules r where r.source_id = usage_sources.id)`,
      days: sql<number>`(select count(*)::int from usage_pulls p where p.source_id = usage_sources.id)`,
      lastDay: sql<string | null>`(select max(p.day)::text from usage_pulls p where p.source_id = usage_sources.id)`,
    })
    .from(usageSources)
    .orderBy(asc(usageSources.name));
}

export type UsageRuleView = {
  id: number;
  match: string;
  endpointKey: string | null;
  budgetKey: string | null;
  part: string | null;
  fieldParts: Record<string, string>;
  createdBy: string;
  createdAt: Date;
};
export type UsagePullView = { day: ProviderDay; pulledAt: Date; via: string; rows: number; unmappedRows: number };
export type UnmappedItem = { item: string; rows: number; units: number; unit: string | null; costMicros: number | null; lastDay: ProviderDay };
export type RawUsageRow = {
  id: number;
  item: string;
  field: string | null;
  units: number;
  unit: string | null;
  costMicros: number | null;
  rollup: boolean;
  endpointKey: string | null;
  budgetKey: string | null;
  part: string | null;
  raw: Record<string, unknown>;
};

export type UsageSourceDetail = {
  source: UsageSource;
  rules: UsageRuleView[];
  pulls: UsagePullView[];
  unmapped: UnmappedItem[];
  /** The raw rows of one day (the asked one, or the latest pulled), a page at a time by id. */
  raw: { day: ProviderDay | null; rows: RawUsageRow[]; next: number | null };
};

export const RAW_PAGE = 50;
const RECENT_PULLS = 45;
const UNMAPPED_DAYS = 30;

/**
 * One source in full, or null. `day` picks the raw rows' day (else the latest pulled); `after`
 * is the id the previous page of that day ended at.
 */
export async function getUsageSourceDetail(
  db: Db,
  id: number,
  opts: { now?: Date; day?: ProviderDay | null; after?: number | null } = {},
): Promise<UsageSourceDetail | null> {
  const [source] = await db.select().from(usageSources).where(eq(usageSources.id, id));
  if (!source) return null;
  const now = opts.now ?? new Date();
  const since = addDays(dayIn(now, source.timeZone), -UNMAPPED_DAYS);
  const [rules, pulls, unmapped] = await Promise.all([
    db
      .select({
        id: usageSourceRules.id,
        match: usageSourceRules.match,
        endpointKey: endpoints.key,
        budgetKey: budgets.key,
        part: usageSourceRules.part,
        fieldParts: usageSourceRules.fieldParts,
        createdBy: usageSourceRules.createdBy,
        createdAt: usageSourceRules.createdAt,
      })
      .from(usageSourceRules)
      .leftJoin(endpoints, eq(endpoints.id, usageSourceRules.endpointId))
      .leftJoin(budgets, eq(budgets.id, usageSourceRules.budgetId))
      .where(eq(usageSourceRules.sourceId, id))
      .orderBy(asc(usageSourceRules.match)),
    db
      .select({ day: usagePulls.day, pulledAt: usagePulls.pulledAt, via: usagePulls.via, rows: usagePulls.rows, unmappedRows: usagePulls.unmappedRows })
      .from(usagePulls)
      .where(eq(usagePulls.sourceId, id))
      .orderBy(desc(usagePulls.day))
      .limit(RECENT_PULLS),
    db
      .select({
        item: usageRows.item,
        rows: sql<number>`count(*)::int`,
        units: sql<number>`sum(${usageRows.units})::float8`,
        // The provider's unit when every row of the item says the same one (Twilio's segments).
        unit: sql<string | null>`case when count(distinct ${usageRows.unit}) = 1 and count(${usageRows.unit}) = count(*) then min(${usageRows.unit}) end`,
        // Null when no row of the item carried money: "no cost reported", not $0.
        costMicros: sql<number | null>`sum(${usageRows.costMicros})::float8`,
        lastDay: sql<string>`max(${usageRows.day})::text`,
      })
      .from(usageRows)
      .where(and(eq(usageRows.sourceId, id), gte(usageRows.day, since), isNull(usageRows.endpointId), isNull(usageRows.budgetId), eq(usageRows.rollup, false)))
      .groupBy(usageRows.item)
      .orderBy(desc(sql`count(*)`), asc(usageRows.item))
      .limit(200),
  ]);
  const day = opts.day ?? pulls[0]?.day ?? null;
  return { source, rules, pulls, unmapped, raw: day === null ? { day, rows: [], next: null } : { day, ...(await rawRowsOf(db, id, day, opts.after ?? null)) } };
}

async function rawRowsOf(db: Db, sourceId: number, day: ProviderDay, after: number | null): Promise<{ rows: RawUsageRow[]; next: number | null }> {
  const rows = await db
    .select({
      id: usageRows.id,
      item: usageRows.item,
      field: usageRows.field,
      units: usageRows.units,
      unit: usageRows.unit,
      costMicros: usageRows.costMicros,
      rollup: usageRows.rollup,
      endpointKey: endpoints.key,
      budgetKey: budgets.key,
      part: usageRows.part,
      raw: usageRows.raw,
    })
    .from(usageRows)
    .leftJoin(endpoints, eq(endpoints.id, usageRows.endpointId))
    .leftJoin(budgets, eq(budgets.id, usageRows.budgetId))
    .where(and(eq(usageRows.sourceId, sourceId), eq(usageRows.day, day), after === null ? undefined : gt(usageRows.id, after)))
    .orderBy(asc(usageRows.id))
    .limit(RAW_PAGE + 1);
  const page = rows.slice(0, RAW_PAGE);
  return { rows: page, next: rows.length > RAW_PAGE ? (page[page.length - 1]?.id ?? null) : null };
}

export type RuleTargetOptions = {
  endpoints: { key: string; name: string; currency: string; parts: string[] }[];
  budgets: { key: string; name: string; currency: string }[];
};

/** The live endpoints (with their parts) and budgets a rule may name, for the add-rule form. */
export async function listRuleTargets(db: Db): Promise<RuleTargetOptions> {
  const [e, b] = await Promise.all([
    db
      .select({ key: endpoints.key, name: endpoints.name, currency: endpoints.currency, parts: endpoints.parts })
      .from(endpoints)
      .where(isNull(endpoints.archivedAt))
      .orderBy(asc(endpoints.key)),
    db.select({ key: budgets.key, name: budgets.name, currency: budgets.currency }).from(budgets).where(isNull(budgets.archivedAt)).orderBy(asc(budgets.key)),
  ]);
  return { endpoints: e.map((x) => ({ ...x, parts: x.parts.map((p) => p.name) })), budgets: b };
}
