import { and, eq, inArray, isNotNull, ne } from "drizzle-orm";
import type { Db } from "@/db/client";
import { endpoints, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { isProviderDay } from "./days";
import { ReconciliationError } from "./errors";
import { matchRule } from "./rule-match";
import type { ProviderDay, PullResult, ReportedRow, UsageSource } from "./types";

// Writing what a provider reported: each pulled day is replaced whole, in one transaction with the
// source row locked, so a day pulled twice (by two workers, or by the worker and an import) ends as
// one copy of the latest numbers, never a mix and never a duplicate. Every row is mapped to its
// endpoint or budget by the rules as they stand now; a row no rule maps is kept with no target and
// counted, so an unmapped model is shown to staff instead of silently ignored.

const INSERT_CHUNK = 1000;

export type WriteOptions = {
  days: ProviderDay[];
  /** 'api', or 'file' with who imported it: "file (admin@example.com)". */
  via: string;
  /** Runs inside the transaction after the rows are written: an import's audit row. */
  onWritten?: (tx: Db, result: PullResult, source: UsageSource) => Promise<void>;
};

type Target = { endpointId: number | null; budgetId: number | null; part: string | null };

/** Replaces the source's rows and pull records of `days` with `rows` (all of which must fall on those days). */
export async function writeUsageDays(db: Db, sourceId: number, rows: ReportedRow[], opts: WriteOptions): Promise<PullResult> {
  const days = [...new Set(opts.days)].sort();
  for (const day of days) if (!isProviderDay(day)) throw new ReconciliationError("day_mismatch", `'${day}' is not a day`);
  const asked = new Set(days);
  for (const row of rows) {
    if (!asked.has(row.day)) throw new ReconciliationError("day_mismatch", `a row of ${row.day} (${row.item}) is outside the days written (${days.join(", ")})`);
  }
  return db.transaction(async (tx) => {
    const [source] = await tx.select().from(usageSources).where(eq(usageSources.id, sourceId)).for("update");
    if (!source) throw new ReconciliationError("not_found", `no usage source #${sourceId}`);
    const targetOf = await mapper(tx, source, rows);
    if (days.length > 0) {
      await tx.delete(usageRows).where(and(eq(usageRows.sourceId, sourceId), inArray(usageRows.day, days)));
      await tx.delete(usagePulls).where(and(eq(usagePulls.sourceId, sourceId), inArray(usagePulls.day, days)));
    }
    const perDay = new Map<ProviderDay, { rows: number; unmapped: number }>(days.map((d) => [d, { rows: 0, unmapped: 0 }]));
    const values = rows.map((row) => {
      const target = targetOf(row.item);
      const count = perDay.get(row.day);
      if (count) {
        count.rows += 1;
        if (target.endpointId === null && target.budgetId === null) count.unmapped += 1;
      }
      return { sourceId, day: row.day, item: row.item, units: row.units, costMicros: row.costMicros, ...target, raw: row.raw };
    });
    for (let i = 0; i < values.length; i += INSERT_CHUNK) await tx.insert(usageRows).values(values.slice(i, i + INSERT_CHUNK));
    // One record per day, also for a day with no rows: the provider reported zero, which is news.
    if (days.length > 0) await tx.insert(usagePulls).values(days.map((day) => ({ sourceId, day, via: opts.via, rows: perDay.get(day)?.rows ?? 0, unmappedRows: perDay.get(day)?.unmapped ?? 0 })));
    const result: PullResult = { sourceId, days, rows: rows.length, unmapped: [...perDay.values()].reduce((n, d) => n + d.unmapped, 0) };
    await opts.onWritten?.(tx, result, source);
    return result;
  });
}

/**
 * How an item maps, by the source's rules; a file source's item that names an endpoint key maps to
 * that endpoint when no rule does and no other source's rule claims it (one source per target).
 * A count-only row is priced at the rule's part, or the endpoint's first part.
 */
async function mapper(tx: Db, source: UsageSource, rows: readonly ReportedRow[]): Promise<(item: string) => Target> {
  const rules = await tx.select().from(usageSourceRules).where(eq(usageSourceRules.sourceId, source.id));
  const unmatched = source.kind === "file" ? [...new Set(rows.map((r) => r.item))].filter((item) => matchRule(rules, item) === null) : [];
  const ruleEndpointIds = rules.flatMap((r) => (r.endpointId === null ? [] : [r.endpointId]));
  const byId = new Map<number, { id: number; key: string; firstPart: string | null }>();
  const byKey = new Map<string, { id: number; key: string; firstPart: string | null }>();
  const load = async (where: ReturnType<typeof inArray>) => {
    for (const e of await tx.select({ id: endpoints.id, key: endpoints.key, parts: endpoints.parts }).from(endpoints).where(where)) {
      const entry = { id: e.id, key: e.key, firstPart: e.parts[0]?.name ?? null };
      byId.set(e.id, entry);
      byKey.set(e.key, entry);
    }
  };
  if (ruleEndpointIds.length > 0) await load(inArray(endpoints.id, ruleEndpointIds));
  if (unmatched.length > 0) await load(inArray(endpoints.key, unmatched));
  const claimedElsewhere = new Set<number>();
  if (unmatched.length > 0) {
    const others = await tx
      .select({ endpointId: usageSourceRules.endpointId })
      .from(usageSourceRules)
      .where(and(ne(usageSourceRules.sourceId, source.id), isNotNull(usageSourceRules.endpointId)));
    for (const o of others) if (o.endpointId !== null) claimedElsewhere.add(o.endpointId);
  }
  const memo = new Map<string, Target>();
  return (item) => {
    const known = memo.get(item);
    if (known) return known;
    const rule = matchRule(rules, item);
    let target: Target = { endpointId: null, budgetId: null, part: null };
    if (rule?.endpointId != null) target = { endpointId: rule.endpointId, budgetId: null, part: rule.part ?? byId.get(rule.endpointId)?.firstPart ?? null };
    else if (rule?.budgetId != null) target = { endpointId: null, budgetId: rule.budgetId, part: null };
    else if (!rule && source.kind === "file") {
      const named = byKey.get(item);
      if (named && !claimedElsewhere.has(named.id)) target = { endpointId: named.id, budgetId: null, part: named.firstPart };
    }
    memo.set(item, target);
    return target;
  };
}
