import { and, eq, inArray, ne, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { sqlState } from "@/db/sql-state";
import { budgetMembers, budgets, endpoints } from "@/db/schema";
import { usageSourceRules, usageSources, type UsageSourceRule } from "@/db/schema/reconciliation";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { CatalogError, invalidInput, type Issue } from "@/lib/limits/errors";
import { hasControlCharacter } from "@/lib/http/strict-input";
import { isTwilioRollup } from "./providers/twilio";
import { RuleMatch } from "./source-input";
import { usageFields } from "./types";
import { lockUsageSource } from "./source-write";

// A source's rules: which endpoint or budget a provider item counts for. A target is mapped by one
// source only: two sources reporting the same endpoint would count its usage twice, and the
// comparison would call the difference drift. A rule applies from the next pull (rows already
// pulled keep what they were mapped to until their day is pulled again).

export type AddUsageRuleParams = {
  sourceId: number;
  match: string;
  endpointKey?: string | null;
  budgetKey?: string | null;
  part?: string | null;
  /** Which of the endpoint's parts a usage field is priced at, where its own name is not a part. */
  fieldParts?: Record<string, string>;
  actor: AuditActor;
};

const actorName = (actor: AuditActor) => (actor.type === "staff" ? actor.email : actor.name);
const blank = (s: string | null | undefined) => (s ?? "").trim();

type Target = { kind: "endpoint"; id: number; key: string; currency: string } | { kind: "budget"; id: number; key: string; currency: string };

/** The target named by key, checked: it exists, is live, counts the source's currency, and the part is its own. */
async function readTarget(
  tx: Db,
  p: { endpointKey: string; budgetKey: string; part: string; fieldParts: Record<string, string> },
  currency: string,
): Promise<Target> {
  const problems: Issue[] = [];
  if ((p.endpointKey === "") === (p.budgetKey === ""))
    throw invalidInput([{ path: "target", message: "name one target: an endpoint or a budget, not both and not neither" }]);
  for (const [path, value] of [
    ["endpointKey", p.endpointKey],
    ["budgetKey", p.budgetKey],
    ["part", p.part],
  ] as const) {
    if (hasControlCharacter(value)) problems.push({ path, message: `${path === "part" ? "part" : "the key"} must not contain control characters` });
  }
  if (problems.length > 0) throw invalidInput(problems);
  if (p.endpointKey !== "") {
    const [e] = await tx
      .select({ id: endpoints.id, key: endpoints.key, currency: endpoints.currency, parts: endpoints.parts, archivedAt: endpoints.archivedAt })
      .from(endpoints)
      .where(eq(endpoints.key, p.endpointKey));
    if (!e) throw invalidInput([{ path: "endpointKey", message: `no endpoint '${p.endpointKey.slice(0, 80)}'` }]);
    if (e.archivedAt !== null)
      problems.push({ path: "endpointKey", message: `endpoint '${e.key}' is archived: it is charged nothing, so there is nothing to compare` });
    if (e.currency !== currency)
      problems.push({
        path: "endpointKey",
        message: `endpoint '${e.key}' is priced in ${e.currency}, the source reports ${currency}: one currency per comparison`,
      });
    if (p.part !== "" && !e.parts.some((part) => part.name === p.part)) {
      problems.push({
        path: "part",
        message: `endpoint '${e.key}' has no part '${p.part.slice(0, 40)}' (its parts: ${e.parts.map((part) => part.name).join(", ")})`,
      });
    }
    for (const [field, part] of Object.entries(p.fieldParts)) {
      if (!(usageFields as readonly string[]).includes(field))
        problems.push({ path: `part_${field.slice(0, 40)}`, message: `'${field.slice(0, 40)}' is not a usage field (${usageFields.join(", ")})` });
      else if (hasControlCharacter(part) || !e.parts.some((x) => x.name === part)) {
        problems.push({
          path: `part_${field}`,
          message: `endpoint '${e.key}' has no part '${part.slice(0, 40)}' to price ${field} at (its parts: ${e.parts.map((x) => x.name).join(", ")})`,
        });
      }
    }
    if (problems.length > 0) throw invalidInput(problems);
    return { kind: "endpoint", id: e.id, key: e.key, currency: e.currency };
  }
  const [b] = await tx
    .select({ id: budgets.id, key: budgets.key, currency: budgets.currency, archivedAt: budgets.archivedAt })
    .from(budgets)
    .where(eq(budgets.key, p.budgetKey));
  if (!b) throw invalidInput([{ path: "budgetKey", message: `no budget '${p.budgetKey.slice(0, 80)}'` }]);
  if (p.part !== "" || Object.keys(p.fieldParts).length > 0)
    problems.push({ path: "part", message: "a budget has no parts: its rows must carry the provider's cost, so leave part blank" });
  if (b.archivedAt !== null)
    problems.push({ path: "budgetKey", message: `budget '${b.key}' is archived: it is charged nothing, so there is nothing to compare` });
  if (b.currency !== currency)
    problems.push({ path: "budgetKey", message: `budget '${b.key}' counts ${b.currency}, the source reports ${currency}: one currency per comparison` });
  if (problems.length > 0) throw invalidInput(problems);
  return { kind: "budget", id: b.id, key: b.key, currency: b.currency };
}

/** A budget the endpoint is a member of that a source other than `sourceId` maps, with that rule; or undefined. */
export async function budgetMappedElsewhere(
  tx: Db,
  sourceId: number,
  endpointId: number,
): Promise<{ name: string; match: string; budget: string } | undefined> {
  const [other] = await tx
    .select({ name: usageSources.name, match: usageSourceRules.match, budget: budgets.key })
    .from(budgetMembers)
    .innerJoin(usageSourceRules, eq(usageSourceRules.budgetId, budgetMembers.budgetId))
    .innerJoin(usageSources, eq(usageSources.id, usageSourceRules.sourceId))
    .innerJoin(budgets, eq(budgets.id, budgetMembers.budgetId))
    .where(and(eq(budgetMembers.endpointId, endpointId), ne(usageSourceRules.sourceId, sourceId)))
    .orderBy(budgets.key)
    .limit(1);
  return other;
}

/**
 * A budget's billed side is what its source billed it and its members: a member another source
 * maps would be charged to the budget but billed elsewhere, a false drift every day. So a budget is
 * refused when another source maps one of its members, and an endpoint when another source maps a
 * budget it is a member of; the sentence names that source. The member endpoints' locks are taken
 * too (in id order, after the target's), so a budget rule and an endpoint rule racing meet on them.
 */
export async function refuseSplitBudget(tx: Db, sourceId: number, target: { kind: "endpoint" | "budget"; id: number; key: string }): Promise<void> {
  if (target.kind === "budget") {
    const memberIds = (await tx.select({ id: budgetMembers.endpointId }).from(budgetMembers).where(eq(budgetMembers.budgetId, target.id)))
      .map((m) => m.id)
      .sort((a, b) => a - b);
    for (const id of memberIds) await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`usage_rule_target:endpoint:${id}`}))`);
    if (memberIds.length === 0) return;
    const [other] = await tx
      .select({ name: usageSources.name, match: usageSourceRules.match, member: endpoints.key })
      .from(usageSourceRules)
      .innerJoin(usageSources, eq(usageSources.id, usageSourceRules.sourceId))
      .innerJoin(endpoints, eq(endpoints.id, usageSourceRules.endpointId))
      .where(and(inArray(usageSourceRules.endpointId, memberIds), ne(usageSourceRules.sourceId, sourceId)))
      .orderBy(endpoints.key)
      .limit(1);
    if (other) {
      throw invalidInput([
        {
          path: "budgetKey",
          message: `budget '${target.key}' has the member '${other.member}', which the source '${other.name}' maps (rule '${other.match}'): the budget would be billed without that member's usage; map the budget on '${other.name}', or remove that rule first`,
        },
      ]);
    }
    return;
  }
  const other = await budgetMappedElsewhere(tx, sourceId, target.id);
  if (other) {
    throw invalidInput([
      {
        path: "endpointKey",
        message: `endpoint '${target.key}' is a member of the budget '${other.budget}', which the source '${other.name}' maps (rule '${other.match}'): that budget would be billed without this endpoint's usage; map it on '${other.name}', or remove that rule first`,
      },
    ]);
  }
}

/**
 * Adds a rule. The target's lock (a transaction advisory lock on the target) is taken before the
 * check for another source, so two admins mapping one endpoint to two sources at once cannot both
 * pass it.
 */
export async function addUsageRule(db: Db, p: AddUsageRuleParams): Promise<UsageSourceRule & { targetKey: string; targetKind: "endpoint" | "budget" }> {
  const match = RuleMatch.safeParse(p.match ?? "");
  if (!match.success) throw invalidInput(match.error.issues.map((i) => ({ path: "match", message: i.message })));
  const fieldParts = Object.fromEntries(
    Object.entries(p.fieldParts ?? {})
      .map(([field, part]) => [field, blank(part)])
      .filter(([, part]) => part !== ""),
  );
  const typed = { endpointKey: blank(p.endpointKey), budgetKey: blank(p.budgetKey), part: blank(p.part), fieldParts };
  return db.transaction(async (tx) => {
    const source = await lockUsageSource(tx, p.sourceId);
    // A roll-up's rows are never mapped (its leaves are): a rule naming one would map nothing.
    if (source.kind === "twilio" && isTwilioRollup(match.data)) {
      throw invalidInput([
        {
          path: "match",
          message: `'${match.data}' is a Twilio roll-up of other categories, never mapped so nothing is billed twice: map its leaves (such as ${match.data === "totalprice" ? "sms-outbound-longcode" : `${match.data}-outbound*`}) instead`,
        },
      ]);
    }
    const target = await readTarget(tx, typed, source.currency);
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`usage_rule_target:${target.kind}:${target.id}`}))`);
    const column = target.kind === "endpoint" ? usageSourceRules.endpointId : usageSourceRules.budgetId;
    const [other] = await tx
      .select({ name: usageSources.name, match: usageSourceRules.match })
      .from(usageSourceRules)
      .innerJoin(usageSources, eq(usageSources.id, usageSourceRules.sourceId))
      .where(and(eq(column, target.id), ne(usageSourceRules.sourceId, source.id)))
      .limit(1);
    if (other) {
      throw invalidInput([
        {
          path: target.kind === "endpoint" ? "endpointKey" : "budgetKey",
          message: `${target.kind} '${target.key}' is already mapped by the source '${other.name}' (rule '${other.match}'): one source per ${target.kind}, or its usage would be counted twice`,
        },
      ]);
    }
    await refuseSplitBudget(tx, source.id, target);
    let row: UsageSourceRule | undefined;
    try {
      [row] = await tx
        .insert(usageSourceRules)
        .values({
          sourceId: source.id,
          match: match.data,
          endpointId: target.kind === "endpoint" ? target.id : null,
          budgetId: target.kind === "budget" ? target.id : null,
          part: typed.part === "" ? null : typed.part,
          fieldParts,
          createdBy: actorName(p.actor),
        })
        .returning();
    } catch (error) {
      if (sqlState(error) === "23505")
        throw invalidInput([{ path: "match", message: `${source.name} already has a rule for '${match.data}': remove it first to map that item elsewhere` }]);
      throw error;
    }
    if (!row) throw new Error("insert returned no rule");
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: "usage_rule.add",
      target: `usage_source:${source.id}`,
      ...(target.kind === "endpoint" ? { endpointId: target.id, endpointKey: target.key } : {}),
      details: {
        source: source.name,
        ruleId: row.id,
        match: row.match,
        [target.kind]: target.key,
        part: row.part,
        ...(Object.keys(fieldParts).length > 0 ? { fieldParts } : {}),
      },
    });
    return { ...row, targetKey: target.key, targetKind: target.kind };
  });
}

export async function removeUsageRule(db: Db, p: { sourceId: number; ruleId: number; actor: AuditActor }): Promise<{ match: string; source: string }> {
  return db.transaction(async (tx) => {
    const source = await lockUsageSource(tx, p.sourceId);
    const [row] = await tx
      .delete(usageSourceRules)
      .where(and(eq(usageSourceRules.id, p.ruleId), eq(usageSourceRules.sourceId, source.id)))
      .returning();
    if (!row) throw new CatalogError("not_found", `${source.name} has no rule ${p.ruleId}`);
    const [target] =
      row.endpointId !== null
        ? await tx.select({ key: endpoints.key }).from(endpoints).where(eq(endpoints.id, row.endpointId))
        : await tx
            .select({ key: budgets.key })
            .from(budgets)
            .where(eq(budgets.id, row.budgetId ?? 0));
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: "usage_rule.remove",
      target: `usage_source:${source.id}`,
      ...(row.endpointId !== null ? { endpointId: row.endpointId, endpointKey: target?.key ?? null } : {}),
      details: {
        source: source.name,
        ruleId: row.id,
        match: row.match,
        [row.endpointId !== null ? "endpoint" : "budget"]: target?.key ?? null,
        part: row.part,
      },
    });
    return { match: row.match, source: source.name };
  });
}
