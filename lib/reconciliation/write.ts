import { and, eq, inArray, isNotNull, ne, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { endpoints, usagePulls, usageRows, usageSourceRules, usageSources } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { isProviderDay } from "./days";
import { ReconciliationError } from "./errors";
import { matchRule } from "./rule-match";
import { budgetMappedElsewhere } from "./source-rules";
import type { ProviderDay, PullResult, ReportedRow, UsageSource, UsageSourceRule } from "./types";

// Writing what a provider reported: each pulled day is replaced whole, in one transaction with the
// source row locked, so a day pulled twice (by two workers, or by the worker and an import) ends as
// one copy of the latest numbers, never a mix and never a duplicate. Every row is mapped to its
// endpoint or budget by the rules as they stand now; a row no rule maps is kept with no target and
// counted, so an unmapped model is shown to staff instead of silently ignored. A row whose item
// holds a control character (or whose raw answer holds a NUL) is refused with a sentence naming
// the provider, the day and the code point, before anything is written.

const INSERT_CHUNK = 1000;

export type WriteOptions = {
  days: ProviderDay[];
  /** 'api', or 'file' with who imported it: "file (admin@example.com)". */
  via: string;
  /** Runs inside the transaction after the rows are written: an import's audit row. */
  onWritten?: (tx: Db, result: PullResult, source: UsageSource) => Promise<void>;
  /** Who a rule created for a file's implicit endpoint-key mapping is recorded as (default: the worker). */
  actor?: AuditActor;
};

const providerNames: Record<UsageSource["kind"], string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  twilio: "Twilio",
  sendgrid: "SendGrid",
  postmark: "Postmark",
  ses: "Amazon SES",
  file: "The file",
};
// eslint-disable-next-line no-control-regex -- finding control characters is the point.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const codePoint = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/** The first NUL in a raw answer's strings or keys (Postgres' jsonb cannot hold one), or null. */
function nulIn(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(nulIn);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([k, v]) => k.includes("\u0000") || nulIn(v));
  return false;
}

/** Refuses rows a database would refuse, as a sentence staff can act on instead of a failed query. */
function refuseControlCharacters(source: UsageSource, rows: readonly ReportedRow[]): void {
  const who = providerNames[source.kind];
  for (const row of rows) {
    const c = CONTROL.exec(row.item)?.[0];
    if (c !== undefined) {
      const shown = row.item.replace(new RegExp(CONTROL.source, "g"), (x) => `<${codePoint(x)}>`).slice(0, 80);
      throw new ReconciliationError(
        "provider_shape",
        `${who} reported an item on ${row.day} holding a control character (${codePoint(c)}): '${shown}'; nothing was written for '${source.name}'`,
      );
    }
    if (nulIn(row.raw))
      throw new ReconciliationError(
        "provider_shape",
        `${who} reported a row on ${row.day} (${row.item.slice(0, 80)}) holding a NUL character (U+0000); nothing was written for '${source.name}'`,
      );
  }
}

type Target = { endpointId: number | null; budgetId: number | null; part: string | null };
const UNMAPPED: Target = { endpointId: null, budgetId: null, part: null };

/** Replaces the source's rows and pull records of `days` with `rows` (all of which must fall on those days). */
export async function writeUsageDays(db: Db, sourceId: number, rows: ReportedRow[], opts: WriteOptions): Promise<PullResult> {
  const days = [...new Set(opts.days)].sort();
  for (const day of days) if (!isProviderDay(day)) throw new ReconciliationError("day_mismatch", `'${day}' is not a day`);
  const asked = new Set(days);
  for (const row of rows) {
    if (!asked.has(row.day))
      throw new ReconciliationError("day_mismatch", `a row of ${row.day} (${row.item}) is outside the days written (${days.join(", ")})`);
  }
  return db.transaction(async (tx) => {
    const [source] = await tx.select().from(usageSources).where(eq(usageSources.id, sourceId)).for("update");
    if (!source) throw new ReconciliationError("not_found", `no usage source #${sourceId}`);
    refuseControlCharacters(source, rows);
    const notes: string[] = [];
    const targetOf = await mapper(tx, source, rows, opts.actor ?? { type: "system", name: "worker" }, notes);
    if (days.length > 0) {
      await tx.delete(usageRows).where(and(eq(usageRows.sourceId, sourceId), inArray(usageRows.day, days)));
      await tx.delete(usagePulls).where(and(eq(usagePulls.sourceId, sourceId), inArray(usagePulls.day, days)));
    }
    const perDay = new Map<ProviderDay, { rows: number; unmapped: number }>(days.map((d) => [d, { rows: 0, unmapped: 0 }]));
    const values = rows.map((row) => {
      // A roll-up sums rows it sits beside: never mapped, so it is billed once, through its leaves.
      const target = row.rollup ? UNMAPPED : targetOf(row.item, row.field ?? null);
      const count = perDay.get(row.day);
      if (count) {
        count.rows += 1;
        if (!row.rollup && target.endpointId === null && target.budgetId === null) count.unmapped += 1;
      }
      return {
        sourceId,
        day: row.day,
        item: row.item,
        units: row.units,
        costMicros: row.costMicros,
        field: row.field ?? null,
        unit: row.unit ?? null,
        rollup: row.rollup ?? false,
        ...target,
        raw: row.raw,
      };
    });
    for (let i = 0; i < values.length; i += INSERT_CHUNK) await tx.insert(usageRows).values(values.slice(i, i + INSERT_CHUNK));
    // One record per day, also for a day with no rows: the provider reported zero, which is news.
    if (days.length > 0)
      await tx
        .insert(usagePulls)
        .values(days.map((day) => ({ sourceId, day, via: opts.via, rows: perDay.get(day)?.rows ?? 0, unmappedRows: perDay.get(day)?.unmapped ?? 0 })));
    const result: PullResult = {
      sourceId,
      days,
      rows: rows.length,
      unmapped: [...perDay.values()].reduce((n, d) => n + d.unmapped, 0),
      ...(notes.length > 0 ? { notes } : {}),
    };
    await opts.onWritten?.(tx, result, source);
    return result;
  });
}

/**
 * How an item maps, by the source's rules. A file source's item that names an endpoint key, when
 * no rule maps it, gets a rule of its own (as addUsageRule adds one: under the target's advisory
 * lock, checked against every other source's rules, audited as the importer or the worker), so
 * "one source per endpoint" holds for it too; when another source maps that endpoint already, or
 * another source maps a budget the endpoint is a member of, or the endpoint is archived or counts
 * another currency, the rows stay unmapped and a note says why.
 * A count-only row is priced at partOf: the part the rule maps its field to, the endpoint's part
 * named like its field, the rule's part, or the endpoint's first part.
 */
async function mapper(
  tx: Db,
  source: UsageSource,
  rows: readonly ReportedRow[],
  actor: AuditActor,
  notes: string[],
): Promise<(item: string, field: string | null) => Target> {
  const rules = await tx.select().from(usageSourceRules).where(eq(usageSourceRules.sourceId, source.id));
  const unmatched =
    source.kind === "file" ? [...new Set(rows.filter((r) => !r.rollup).map((r) => r.item))].filter((item) => matchRule(rules, item) === null) : [];
  const byId = new Map<number, { id: number; key: string; parts: string[] }>();
  const ruleEndpointIds = rules.flatMap((r) => (r.endpointId === null ? [] : [r.endpointId]));
  if (ruleEndpointIds.length > 0) {
    for (const e of await tx
      .select({ id: endpoints.id, key: endpoints.key, parts: endpoints.parts })
      .from(endpoints)
      .where(inArray(endpoints.id, ruleEndpointIds))) {
      byId.set(e.id, { id: e.id, key: e.key, parts: e.parts.map((p) => p.name) });
    }
  }
  const implicit = new Map<string, Target & { parts: string[] }>();
  if (unmatched.length > 0) {
    const named = await tx
      .select({ id: endpoints.id, key: endpoints.key, parts: endpoints.parts, currency: endpoints.currency, archivedAt: endpoints.archivedAt })
      .from(endpoints)
      .where(inArray(endpoints.key, unmatched))
      .orderBy(endpoints.id);
    for (const e of named) {
      if (e.archivedAt !== null) {
        notes.push(`'${e.key}' names an archived endpoint: its rows are left unmapped`);
        continue;
      }
      if (e.currency !== source.currency) {
        notes.push(`'${e.key}' names an endpoint priced in ${e.currency}, the source reports ${source.currency}: its rows are left unmapped`);
        continue;
      }
      // The lock addUsageRule takes: two sources mapping one endpoint at once cannot both pass the check.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`usage_rule_target:endpoint:${e.id}`}))`);
      const [other] = await tx
        .select({ name: usageSources.name, match: usageSourceRules.match })
        .from(usageSourceRules)
        .innerJoin(usageSources, eq(usageSources.id, usageSourceRules.sourceId))
        .where(and(eq(usageSourceRules.endpointId, e.id), ne(usageSourceRules.sourceId, source.id), isNotNull(usageSourceRules.endpointId)))
        .limit(1);
      if (other) {
        notes.push(
          `'${e.key}' names an endpoint the source '${other.name}' maps (rule '${other.match}'): its rows are left unmapped (one source per endpoint)`,
        );
        continue;
      }
      // Nor one in a budget another source maps: that budget would be billed without these rows.
      const budgetRule = await budgetMappedElsewhere(tx, source.id, e.id);
      if (budgetRule) {
        notes.push(
          `'${e.key}' names an endpoint in the budget '${budgetRule.budget}', which the source '${budgetRule.name}' maps (rule '${budgetRule.match}'): its rows are left unmapped (a budget's members are billed by its source)`,
        );
        continue;
      }
      const actorFields = auditActorFields(actor);
      const [rule] = await tx
        .insert(usageSourceRules)
        .values({ sourceId: source.id, match: e.key, endpointId: e.id, budgetId: null, part: null, createdBy: actorFields.actor })
        .returning();
      if (!rule) throw new Error("insert returned no rule");
      await recordAudit(tx, {
        ...actorFields,
        action: "usage_rule.add",
        target: `usage_source:${source.id}`,
        endpointId: e.id,
        endpointKey: e.key,
        details: { source: source.name, ruleId: rule.id, match: rule.match, endpoint: e.key, part: null, implicit: true },
      });
      implicit.set(e.key, { endpointId: e.id, budgetId: null, part: null, parts: e.parts.map((p) => p.name) });
    }
  }
  const memo = new Map<string, Target>();
  return (item, field) => {
    const key = `${field ?? ""}\u0000${item}`;
    const known = memo.get(key);
    if (known) return known;
    const rule = matchRule(rules, item);
    let target: Target = UNMAPPED;
    if (rule?.endpointId != null) target = { endpointId: rule.endpointId, budgetId: null, part: partOf(byId.get(rule.endpointId)?.parts ?? [], field, rule) };
    else if (rule?.budgetId != null) target = { endpointId: null, budgetId: rule.budgetId, part: null };
    else if (!rule) {
      const named = implicit.get(item);
      if (named?.endpointId != null) target = { endpointId: named.endpointId, budgetId: null, part: partOf(named.parts, field, null) };
    }
    memo.set(key, target);
    return target;
  };
}

/**
 * The endpoint's part a row's units are priced at: the part the rule maps the row's usage field
 * to, else the part named like the field (an endpoint with parts input, output and cache-read
 * prices Anthropic's fields without a word), else the rule's part, else the first part. A part
 * since renamed falls through to the next choice, as billedOf falls back to the first part.
 */
export function partOf(parts: readonly string[], field: string | null, rule: Pick<UsageSourceRule, "part" | "fieldParts"> | null): string | null {
  const mapped = field !== null && rule && Object.hasOwn(rule.fieldParts, field) ? rule.fieldParts[field] : undefined;
  for (const choice of [mapped, field, rule?.part]) if (choice != null && parts.includes(choice)) return choice;
  return parts[0] ?? null;
}
