import { InputError } from "@/lib/errors";
import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { ceilings, type Ceiling, type Endpoint } from "@/db/schema";
import { ceilingTarget } from "@/lib/ceilings/target";
import { deleteLimitOverride, writeLimitOverride } from "@/lib/limits/overrides";
import { lockAccounts } from "@/lib/limits/lock-accounts";
import type { AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { CONFIRM_RAISE_FACTOR } from "@/lib/limits/parse";
import { type ChangeControl, requireApproval } from "@/lib/control/context";
import { isValueRaise } from "@/lib/control/raise";
import { CatalogError, requireCatalogReason } from "@/lib/limits/errors";
import { type FileLooseness, type FileRaise, markApprovals, standingValue, withholdRaises } from "./file-raises";
import { looserNewBudgets, looserRecentBudget } from "@/lib/budgets/re-add";
import { ceilingSpecOf, readCatalog, type CatalogEndpoint } from "./read";
import { recentlyRemovedParts } from "./re-add";
import type { EndpointPart } from "@/lib/vocabulary";
import {
  CATALOG_FORMAT_VERSION,
  CatalogFile,
  type CatalogFileInput,
  type CeilingSpec,
  ceilingIdentity,
  describeIssues,
  type EndpointFields,
  type EndpointSpec,
} from "./spec";
import { ceilingSentence, describeWorstCase, worstCases } from "./worst-case";
import {
  type Change,
  deleteCeiling,
  fieldDiffers,
  fieldsOf,
  insertCeiling,
  insertEndpoint,
  recordCeilingChange,
  recordChange,
  setArchived,
  updateEndpointFields,
} from "./write";
import { formatCount } from "@/lib/format";
import { applyBudgetSteps, diffBudgets } from "@/lib/catalog/file-budgets";
import { readBudgets, type CatalogBudget } from "@/lib/budgets/read";
import { formatPriceDecimal } from "@/lib/money/price";
import { findDuplicateKey } from "@/lib/http/strict-json";
import { clampPlanValues } from "@/lib/limits/plan-values";
import { applyPlanSteps, diffPlans, exportPlans, readPlanSpecs, type PlanTargets } from "@/lib/catalog/file-plans";
import { hasEnded, sameEnd, untilText } from "@/lib/control/ends";

// Ceilings as code: the whole catalog as one reviewed file. `plan` compares a file with the
// database change by change; `apply` makes exactly those changes in one transaction under the same
// rules as the dashboard, or none. A file lists every endpoint: one missing from it is an error,
// never a delete (archive it with `archived: true`), and a kill is lifted only by `killed: false`.

/**
 * The catalog file's JSON Schema sits beside the file under this name: `npm run ceilings -- export
 * --out ceilings.json` writes both, `npm run ceilings -- schema` prints it, and the project ships a
 * copy as lib/catalog/ceilings.schema.json. A relative path, so no editor ever fetches it from a
 * domain: the file's `$schema` is `./ceilings.schema.json`.
 */
export const CATALOG_SCHEMA_FILE = "ceilings.schema.json";
export const CATALOG_SCHEMA_REF = `./${CATALOG_SCHEMA_FILE}`;

/** The catalog file's JSON Schema, from the zod schema that validates it (`npm run ceilings -- schema`). */
export function catalogJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(CatalogFile, { io: "input", unrepresentable: "any" }),
    title: "Ceilings catalog",
    description: `A Ceilings catalog file, format version ${CATALOG_FORMAT_VERSION} (npm run ceilings -- plan | apply). Generated from lib/catalog/spec.ts by npm run ceilings -- schema.`,
  };
}

type FileEndpoint = CatalogFileInput["endpoints"][number];

/** An endpoint as a file writes it: each part's price as the exact decimal people read ("0.0000025"). */
export function fileEndpointOf(spec: EndpointSpec): FileEndpoint {
  return { ...spec, parts: spec.parts.map((p) => ({ name: p.name, price: formatPriceDecimal(p.pricePico) })) };
}

export async function exportCatalog(db: Db): Promise<CatalogFileInput & { endpoints: FileEndpoint[] }> {
  const [catalog, budgets, plans] = await Promise.all([readCatalog(db), readBudgets(db), exportPlans(db)]);
  return {
    $schema: CATALOG_SCHEMA_REF,
    version: CATALOG_FORMAT_VERSION,
    endpoints: catalog.map((c) => fileEndpointOf(c.spec)),
    budgets: budgets.map((b) => b.spec),
    plans,
  };
}

/** The file's budgets against those in the database (lib/catalog/file-budgets.ts), with the endpoints the file creates. */
function diffFileBudgets(file: CatalogFile, current: CatalogEndpoint[], budgets: CatalogBudget[]) {
  const existing = new Set(current.map((c) => c.endpoint.key));
  const created = new Set(file.endpoints.filter((e) => !existing.has(e.key)).map((e) => e.key));
  return { created, ...diffBudgets(file.budgets, budgets, file.endpoints, created) };
}

/**
 * The file's plans against those in the database (lib/catalog/file-plans.ts), checked against the catalog
 * as it will be after apply: the file's endpoints, and its budgets (or, without a budgets list,
 * those in the database).
 */
async function diffFilePlans(db: Db, file: CatalogFile, budgets: CatalogBudget[]) {
  const targets: PlanTargets = {
    ceilings: file.endpoints.flatMap((e) =>
      e.ceilings.map((c) => ({ endpoint: e.key, metric: c.metric, scope: c.scope, window: c.window, value: c.killed ? 0 : c.value, min: c.min, max: c.max })),
    ),
    budgets: (file.budgets ?? budgets.map((b) => b.spec)).map((b) => ({
      key: b.key,
      scope: b.scope,
      currency: b.currency,
      value: b.killed ? 0 : b.value,
      min: b.min,
      max: b.max,
    })),
  };
  return diffPlans(file.plans, file.plans === undefined ? [] : await readPlanSpecs(db), targets);
}

export type PlannedChange = {
  action: string;
  endpointKey: string;
  /** One line a reviewer reads: what changes, with the guarantee sentence before and after. */
  lines: string[];
  needsConfirmation: boolean;
  /** The ceiling's identity when the change is to one ceiling: change control matches its raises by it. */
  ceiling?: string;
  /** Change control: what of this change waits for a second admin (lib/catalog/file-raises.ts). */
  needsApproval?: string[];
};

export type EndpointPlan = { key: string; changes: PlannedChange[]; worstCase: string[] };

export type Plan = { ok: true; endpoints: EndpointPlan[]; changeCount: number; raises: FileRaise[] } | { ok: false; errors: string[] };

/** Parses a file's text: every problem with its path, or the validated catalog. */
export function parseCatalogText(text: string): { ok: true; file: CatalogFile } | { ok: false; errors: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [`the file is not valid JSON: ${error instanceof Error ? error.message : String(error)}`] };
  }
  // A reviewer reads the first of two equal keys; JSON.parse applies the last. Refused, as the HTTP API refuses it.
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null)
    return {
      ok: false,
      errors: [`the file has the field ${JSON.stringify(duplicate).slice(0, 60)} twice in one object: a reviewer would read one value and apply another`],
    };
  const parsed = CatalogFile.safeParse(json);
  return parsed.success ? { ok: true, file: parsed.data } : { ok: false, errors: describeIssues(parsed.error) };
}

const FIELD_LABEL: Record<keyof EndpointFields, string> = {
  name: "name",
  unit: "unit",
  parts: "parts",
  currency: "currency",
  planAllowance: "plan allowance",
  billingDay: "billing day",
  perCallMax: "per-call max",
  throttlePerMinute: "throttle per minute",
  throttleFailOpen: "throttle fails open",
};

const show = (v: unknown) => (typeof v === "number" ? formatCount(v) : v === null ? "none" : JSON.stringify(v));

/** "input 0.0000025, output 0.00001": the parts as a reviewer compares them. */
const showParts = (parts: EndpointFields["parts"]) => parts.map((p) => `${p.name} ${formatPriceDecimal(p.pricePico)}`).join(", ");
const showField = (f: keyof EndpointFields, e: EndpointFields) => (f === "parts" ? showParts(e.parts) : show(e[f]));

function raise(before: number, after: number): boolean {
  return after > before && (before === 0 || after >= before * CONFIRM_RAISE_FACTOR);
}

type CeilingStep =
  { kind: "add"; spec: CeilingSpec } | { kind: "remove"; row: Ceiling } | { kind: "update"; row: Ceiling; spec: CeilingSpec; next: NextCeiling };

/** What a ceiling row becomes under a file's spec; a kill is changed only by an explicit field. */
type NextCeiling = { value: number; valueBeforeKill: number | null; min: number; max: number; default: number; alertThresholds: number[] };

function nextCeiling(row: Ceiling, spec: CeilingSpec): NextCeiling {
  const killedNow = row.value === 0 && row.valueBeforeKill !== null;
  const wantKilled = spec.killed ?? killedNow;
  const bounds = { min: spec.min, max: spec.max, default: spec.default, alertThresholds: spec.alertThresholds };
  if (wantKilled && spec.value > 0) return { value: 0, valueBeforeKill: spec.value, ...bounds };
  // Typing 0 is a kill (DESIGN): remember the value in force for restore.
  if (spec.value === 0 && row.value > 0) return { value: 0, valueBeforeKill: row.value, ...bounds };
  return { value: spec.value, valueBeforeKill: spec.value === 0 ? row.valueBeforeKill : null, ...bounds };
}

function ceilingDiff(row: Ceiling, next: NextCeiling): string[] {
  const out: string[] = [];
  if (row.value > 0 && next.value === 0) out.push(`killed (value ${show(row.value)}; restores to ${show(next.valueBeforeKill)})`);
  else if (row.value === 0 && next.value > 0 && row.valueBeforeKill !== null) out.push(`kill lifted: restored to ${show(next.value)}`);
  else if (row.value !== next.value) out.push(`value ${show(row.value)} → ${show(next.value)}`);
  if (row.valueBeforeKill !== next.valueBeforeKill && next.value === 0 && row.value === 0)
    out.push(`value to restore ${show(row.valueBeforeKill)} → ${show(next.valueBeforeKill)}`);
  if (row.minValue !== next.min || row.maxValue !== next.max)
    out.push(`bounds [${show(row.minValue)}, ${show(row.maxValue)}] → [${show(next.min)}, ${show(next.max)}]`);
  if (row.defaultValue !== next.default) out.push(`default ${show(row.defaultValue)} → ${show(next.default)}`);
  const before = [...row.alertThresholds].sort((a, b) => a - b);
  if (before.join(",") !== next.alertThresholds.join(",")) out.push(`alert thresholds ${before.join("/")}% → ${next.alertThresholds.join("/")}%`);
  return out;
}

function ceilingSteps(current: Ceiling[], wanted: CeilingSpec[]): CeilingStep[] {
  const byIdentity = new Map(current.map((c) => [ceilingIdentity(c), c]));
  const steps: CeilingStep[] = [];
  const kept = new Set<number>();
  for (const spec of wanted) {
    const row = byIdentity.get(ceilingIdentity(spec));
    if (!row) {
      steps.push({ kind: "add", spec });
      continue;
    }
    kept.add(row.id);
    const next = nextCeiling(row, spec);
    if (ceilingDiff(row, next).length > 0) steps.push({ kind: "update", row, spec, next });
  }
  for (const row of current) if (!kept.has(row.id)) steps.push({ kind: "remove", row });
  return steps;
}

type OverrideKey = { metric: string; window: string; caller: string };
type Override = EndpointSpec["overrides"][number];
const overrideId = (o: OverrideKey) => `${o.metric}/${o.window}/${o.caller}`;

/**
 * What a file changes in an endpoint's overrides: those set anew, to another value or another end,
 * those removed. One the file says ended (until past) is no override: it binds nothing.
 */
function overrideSteps(current: Override[], wanted: Override[]): { set: { o: Override; had: Override | undefined }[]; remove: Override[] } {
  const inDb = new Map(current.map((o) => [overrideId(o), o]));
  const inFile = new Map(wanted.filter((o) => !hasEnded(o.until)).map((o) => [overrideId(o), o]));
  return {
    set: [...inFile].flatMap(([id, o]) => {
      const had = inDb.get(id);
      return had && had.value === o.value && sameEnd(had.until, o.until) ? [] : [{ o, had }];
    }),
    remove: [...inDb].filter(([id]) => !inFile.has(id)).map(([, o]) => o),
  };
}

/** The steps `plan` printed for an endpoint, kept so `apply` makes exactly those. */
type EndpointSteps = { ceilings: CeilingStep[]; overrides: ReturnType<typeof overrideSteps> };

/** Compares a validated file with the catalog in the database: the changes, or the rules it breaks. */
function diffCatalog(file: CatalogFile, current: CatalogEndpoint[]): { plans: EndpointPlan[]; steps: Map<string, EndpointSteps>; errors: string[] } {
  const errors: string[] = [];
  const byKey = new Map(current.map((c) => [c.endpoint.key, c]));
  const listed = new Set(file.endpoints.map((e) => e.key));
  for (const c of current) {
    if (!listed.has(c.endpoint.key)) {
      errors.push(
        `endpoints: '${c.endpoint.key}' is in the database but not in the file; list it (with "archived": true to archive it): nothing is ever deleted by a file`,
      );
    }
  }
  const plans: EndpointPlan[] = [];
  const steps = new Map<string, EndpointSteps>();
  for (const spec of file.endpoints) {
    const existing = byKey.get(spec.key);
    const changes: PlannedChange[] = [];
    const add = (action: string, lines: string[], needsConfirmation = false, ceiling?: string) =>
      changes.push({ action, endpointKey: spec.key, lines, needsConfirmation, ...(ceiling ? { ceiling } : {}) });
    const fields = fieldsFromSpec(spec);
    if (!existing) {
      add(
        "endpoint.create",
        [
          `+ new endpoint ${spec.key} (${spec.name})${spec.archived ? ", archived" : ""}; parts: ${showParts(spec.parts)}`,
          ...spec.ceilings.map((c) => `  + ${sentenceLine(c, spec)}`),
        ],
        spec.ceilings.some((c) => raise(c.default, c.value)),
      );
    } else {
      const before = fieldsOf(existing.endpoint);
      const changed = (Object.keys(FIELD_LABEL) as (keyof EndpointFields)[]).filter((f) => fieldDiffers(f, before, fields));
      if (changed.length > 0) {
        add(
          "endpoint.update",
          changed.map((f) => `~ ${FIELD_LABEL[f]}: ${showField(f, before)} → ${showField(f, fields)}`),
          raise(before.perCallMax, fields.perCallMax),
        );
      }
      const endpointSteps = { ceilings: ceilingSteps(existing.ceilings, spec.ceilings), overrides: overrideSteps(existing.spec.overrides, spec.overrides) };
      steps.set(spec.key, endpointSteps);
      for (const step of endpointSteps.ceilings) {
        if (step.kind === "add")
          add("ceiling.add", [`+ ${sentenceLine(step.spec, spec)}`], raise(step.spec.default, step.spec.value), ceilingIdentity(step.spec));
        else if (step.kind === "remove") {
          add("ceiling.remove", [`- #${step.row.id} ${sentenceLine(ceilingSpecOf(step.row), { ...fieldsOf(existing.endpoint), key: spec.key })}`]);
        } else {
          const was = ceilingSpecOf(step.row);
          const wasLive = step.row.value > 0;
          const action = wasLive && step.next.value === 0 ? "ceiling.kill" : !wasLive && step.next.value > 0 ? "ceiling.restore" : "ceiling.update";
          const base = wasLive ? step.row.value : (step.row.valueBeforeKill ?? 0);
          const after = step.next.value > 0 ? step.next.value : (step.next.valueBeforeKill ?? 0);
          add(
            action,
            [
              `~ #${step.row.id} ${ceilingIdentity(step.spec)}: ${ceilingDiff(step.row, step.next).join(", ")}`,
              `    "${ceilingSentence(was, { ...fieldsOf(existing.endpoint), key: spec.key }).guarantee}" → "${ceilingSentence({ ...step.spec, value: step.next.value }, { ...fields, key: spec.key }).guarantee}"`,
            ],
            raise(base, after),
            ceilingIdentity(step.spec),
          );
        }
      }
      for (const { o, had } of endpointSteps.overrides.set)
        add("override.set", [`~ override ${overrideId(o)}: ${had ? show(had.value) + untilText(had.until) : "none"} → ${show(o.value)}${untilText(o.until)}`]);
      for (const o of endpointSteps.overrides.remove) add("override.remove", [`- override ${overrideId(o)} (${show(o.value)}${untilText(o.until)})`]);
      if (spec.archived !== (existing.endpoint.archivedAt !== null))
        add(spec.archived ? "endpoint.archive" : "endpoint.unarchive", [
          spec.archived ? "archive: every reserve will answer endpoint_archived" : "unarchive: reserves are decided again",
        ]);
    }
    if (changes.length === 0) continue;
    const before = existing ? { fields: fieldsOf(existing.endpoint), cases: worstCases(existing.spec.ceilings.map(live), fieldsOf(existing.endpoint)) } : null;
    const afterCase = worstCases(spec.ceilings.map(live), fields);
    const worstCase = (["day", "month"] as const).map(
      (per) =>
        `worst case per ${per}: ${before ? describeWorstCase(before.cases[per], per, before.fields) : "(new)"} → ${describeWorstCase(afterCase[per], per, fields)}`,
    );
    plans.push({ key: spec.key, changes, worstCase });
  }
  return { plans, steps, errors };
}

/** A killed ceiling counts as 0 for the worst case: that is what is in force. */
function live(c: CeilingSpec): CeilingSpec {
  return c.killed ? { ...c, value: 0 } : c;
}

function fieldsFromSpec(spec: EndpointSpec): EndpointFields {
  const { name, unit, parts, currency, planAllowance, billingDay, perCallMax, throttlePerMinute, throttleFailOpen } = spec;
  return { name, unit, parts, currency, planAllowance, billingDay, perCallMax, throttlePerMinute, throttleFailOpen };
}

function sentenceLine(c: CeilingSpec, e: EndpointFields & { key: string }): string {
  const s = ceilingSentence(live(c), e);
  return `${ceilingIdentity(c)}: ${s.guarantee}${s.worstCase ? ` (${s.worstCase})` : ""}${c.killed ? ` [killed; restores to ${formatCount(c.value)}]` : ""}`;
}

/** A change that leans on a raise still waiting: said before the rule it would break. */
const WAITING = "until its raises are approved: ";

/** Everything a file changes against the catalog read (endpoints, budgets, plans), or the rules it breaks. */
async function diffAll(db: Db, file: CatalogFile, current: CatalogEndpoint[], dbBudgets: CatalogBudget[]) {
  const endpoints = diffCatalog(file, current);
  const budgets = diffFileBudgets(file, current, dbBudgets);
  const filePlans = await diffFilePlans(db, file, dbBudgets);
  const errors = [...endpoints.errors, ...budgets.errors, ...filePlans.errors];
  const plans = [...endpoints.plans, ...budgets.plans, ...filePlans.plans];
  return { endpoints, budgets, filePlans, errors, plans, changeCount: plans.reduce((n, p) => n + p.changes.length, 0) };
}

/** What the database says is looser in the file (lib/budgets/re-add.ts): new budgets against archived ones. */
async function fileLooseness(db: Db, file: CatalogFile, current: readonly CatalogEndpoint[], dbBudgets: readonly CatalogBudget[]): Promise<FileLooseness> {
  const archivesLoosening = new Map<string, string>();
  for (const b of dbBudgets) {
    if (b.budget.archivedAt !== null || !file.budgets?.some((f) => f.key === b.budget.key && f.archived)) continue;
    const looser = await looserRecentBudget(db, b.budget);
    if (looser !== null) archivesLoosening.set(b.budget.key, looser);
  }
  // The parts removed lately, for the endpoints whose prices the file lowers (a part added back cheaper).
  const removedParts = new Map<string, EndpointPart[]>();
  for (const c of current) {
    const spec = file.endpoints.find((e) => e.key === c.endpoint.key);
    if (spec && fieldDiffers("parts", fieldsOf(c.endpoint), fieldsFromSpec(spec)))
      removedParts.set(c.endpoint.key, await recentlyRemovedParts(db, c.endpoint.id));
  }
  return {
    looserNewBudgets: await looserNewBudgets(
      db,
      file.budgets,
      dbBudgets.map((b) => ({ key: b.budget.key, archived: b.budget.archivedAt !== null })),
    ),
    archivesLoosening,
    removedParts,
  };
}

/**
 * What applying the file would change, each change that needs a second admin marked (change
 * control: `raises` are what `apply` asks for; the rest it applies at once).
 */
export async function planCatalog(db: Db, text: string): Promise<Plan> {
  const parsed = parseCatalogText(text);
  if (!parsed.ok) return parsed;
  const current = await readCatalog(db);
  const dbBudgets = await readBudgets(db);
  const all = await diffAll(db, parsed.file, current, dbBudgets);
  if (all.errors.length > 0) return { ok: false, errors: all.errors };
  const withheld = withholdRaises(parsed.file, current, dbBudgets, await fileLooseness(db, parsed.file, current, dbBudgets));
  if (withheld.errors.length > 0) return { ok: false, errors: withheld.errors };
  // What apply would refuse while the raises wait, plan says now.
  if (withheld.raises.length > 0) {
    const waiting = (await diffAll(db, withheld.file, current, dbBudgets)).errors;
    if (waiting.length > 0) return { ok: false, errors: waiting.map((e) => `${WAITING}${e}`) };
  }
  markApprovals(all.plans, withheld.raises);
  return { ok: true, endpoints: all.plans, changeCount: all.changeCount, raises: withheld.raises };
}

/**
 * Change control for `apply`: called inside the file's transaction, after every change that needs
 * no approval is made, with the raises (in file order). It asks for them (or breaks glass) and says
 * what it did; throwing undoes the whole file.
 */
export type RaiseHandler = (tx: Db, raises: FileRaise[]) => Promise<AskedRaise[]>;
/** A raise asked for (a change request, its id) or applied by break glass, or already pending. */
export type AskedRaise = { raise: FileRaise; requestId: number; outcome: "asked" | "already_pending" | "break_glass"; summary: string };

export type ApplyParams = {
  text: string;
  actor: AuditActor;
  reason: string;
  confirmRaise: boolean;
  /**
   * Change control. Given (the CLI always gives it): the raises are withheld, the rest applied, and
   * the raises handed to it in the same transaction. Absent: the file applies whole, and a raise in
   * it is refused by the writes (approval_required) unless `changeControl` permits it.
   */
  onRaises?: RaiseHandler;
  /** Only setup code that builds data on purpose (the demo seed, test fixtures): setupControl(). */
  changeControl?: ChangeControl;
};
export type ApplyResult = { changeCount: number; sha256: string; endpoints: EndpointPlan[]; raises: AskedRaise[] };

/**
 * Applies a catalog file in one transaction, or nothing. Every endpoint it touches is locked first
 * (one call, ids in order), so the changes wait for batches in flight and bind the next batch.
 * Under change control the raises become change requests in that same transaction: the file's
 * other changes and its requests commit together or not at all.
 */
export async function applyCatalog(db: Db, p: ApplyParams): Promise<ApplyResult> {
  const reason = requireCatalogReason(p.reason);
  const sha256 = createHash("sha256").update(p.text).digest("hex");
  const parsed = parseCatalogText(p.text);
  if (!parsed.ok)
    throw new InputError(
      parsed.errors.map((message) => ({ path: "", message })),
      `the file is invalid:\n${parsed.errors.join("\n")}`,
    );
  const invalid = (errors: string[], prefix = "") =>
    new InputError(
      errors.map((message) => ({ path: "", message: prefix + message })),
      errors.map((e) => prefix + e).join("\n"),
    );
  return db.transaction(async (tx) => {
    const ids = (await readCatalog(tx)).map((c) => c.endpoint.id);
    await tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${ids.join(",")}}`}::int[])`);
    // Read again under the locks: the plan applied is the one against the catalog in force.
    const current = await readCatalog(tx);
    const dbBudgets = await readBudgets(tx);
    const whole = await diffAll(tx, parsed.file, current, dbBudgets);
    if (whole.errors.length > 0) throw invalid(whole.errors);
    // The 5x retype stays on top of change control: a raise that large is confirmed before it is even asked for.
    const unconfirmed = whole.plans.flatMap((e) => e.changes).filter((c) => c.needsConfirmation);
    if (unconfirmed.length > 0 && !p.confirmRaise) {
      throw new CatalogError(
        "confirmation_required",
        `${unconfirmed.length} change(s) raise a value ${CONFIRM_RAISE_FACTOR}× or more (${unconfirmed.map((c) => `${c.endpointKey} ${c.action}`).join(", ")}): run again with --confirm-raise`,
      );
    }
    let file = parsed.file;
    let raises: FileRaise[] = [];
    if (p.onRaises) {
      const withheld = withholdRaises(parsed.file, current, dbBudgets, await fileLooseness(tx, parsed.file, current, dbBudgets));
      if (withheld.errors.length > 0) throw invalid(withheld.errors);
      ({ file, raises } = withheld);
    }
    const diff = file === parsed.file ? whole : await diffAll(tx, file, current, dbBudgets);
    // A change that leans on a raise still waiting (a plan value above a max not yet approved) waits too: the whole file is refused.
    if (diff.errors.length > 0) throw invalid(diff.errors, WAITING);
    const change: Change = {
      tx,
      actor: p.actor,
      reason,
      details: { via: "catalog file", sha256 },
      ...(p.changeControl ? { changeControl: p.changeControl } : {}),
    };
    // Every account whose override the file sets or removes, locked at once in account order (as
    // a plan move locks them) before any override is read: one by one, in file order, two writers
    // could take them in opposite orders. Every endpoint lock is held already, so no writer can hold
    // a ceiling or budget row this file still has to lock.
    await lockAccounts(tx, [
      ...[...diff.endpoints.steps.values()].flatMap((s) => [...s.overrides.set.map(({ o }) => o.caller), ...s.overrides.remove.map((o) => o.caller)]),
      ...diff.budgets.steps.flatMap((s) => [...s.overrides.set.map(({ o }) => o.caller), ...s.overrides.remove.map((o) => o.caller)]),
    ]);
    const byKey = new Map(current.map((c) => [c.endpoint.key, c]));
    for (const spec of file.endpoints) {
      if (!diff.plans.some((e) => e.key === spec.key)) continue;
      const existing = byKey.get(spec.key);
      if (!existing) {
        await insertEndpoint(change, spec);
        continue;
      }
      const planned = diff.endpoints.steps.get(spec.key);
      if (!planned) throw new Error(`no plan for ${spec.key}`);
      await applyEndpoint(change, existing, spec, planned);
    }
    // After the endpoints: a budget may count an endpoint this file creates.
    await applyBudgetSteps(change, diff.budgets.steps, diff.budgets.created);
    // Last: a plan may set a value on a ceiling or a budget this file creates.
    // Its raises (a value above what binds, a looser default) are left for the requests when the file's raises are asked.
    raises = [...raises, ...(await applyPlanSteps(change, diff.filePlans.steps, p.onRaises !== undefined))];
    // Asked after the changes made at once: each request's `before` is what this file leaves in force.
    const asked = raises.length > 0 && p.onRaises ? await p.onRaises(tx, raises) : [];
    return { changeCount: diff.changeCount, sha256, endpoints: diff.plans, raises: asked };
  });
}

async function applyEndpoint(change: Change, existing: CatalogEndpoint, spec: EndpointSpec, planned: EndpointSteps): Promise<void> {
  const { tx } = change;
  const endpoint = existing.endpoint;
  await updateEndpointFields(change, endpoint, fieldsFromSpec(spec));
  for (const step of planned.ceilings) {
    if (step.kind === "add") await insertCeiling(change, endpoint, step.spec);
    else if (step.kind === "remove") await deleteCeiling(change, endpoint, step.row);
    else await updateCeiling(change, endpoint, step.row, step.next);
  }
  const rows = await tx.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id));
  const ceilingFor = (o: OverrideKey) => rows.find((c) => c.scope === "caller" && c.metric === o.metric && c.window === o.window);
  // A raise for one account (above what binds it: its override, else its plan or the ceiling's own;
  // or an override removed below its plan) is refused in a file, and the whole file is undone: ask
  // for it from the dashboard. The writer of both kinds says so (lib/limits/overrides.ts).
  for (const { o } of planned.overrides.set) {
    const target = ceilingFor(o);
    if (!target) continue;
    const { previous: had } = await writeLimitOverride(tx, ceilingTarget(tx, target, endpoint), {
      caller: o.caller,
      value: o.value,
      reason: o.reason,
      changeControl: change.changeControl,
      expiresAt: o.until === undefined ? null : new Date(o.until),
    });
    await recordChange(change, endpoint, { action: "override.set", ceilingId: target.id, target: o.caller, previousValue: had, appliedValue: o.value });
  }
  for (const o of planned.overrides.remove) {
    const target = ceilingFor(o);
    if (!target) continue;
    const had = await deleteLimitOverride(tx, ceilingTarget(tx, target, endpoint), { caller: o.caller, changeControl: change.changeControl });
    await recordChange(change, endpoint, { action: "override.remove", ceilingId: target.id, target: o.caller, previousValue: had });
  }
  if (spec.archived !== (endpoint.archivedAt !== null)) await setArchived(change, endpoint, spec.archived);
}

async function updateCeiling(change: Change, endpoint: Endpoint, row: Ceiling, next: NextCeiling): Promise<void> {
  // A raise in a file needs a second admin as in the dashboard (change control): the value in
  // force, or the one a kill in the file would restore, above what a restore puts back now; or a max
  // above the one in force. `ceilings apply` turns these into change requests.
  const after = next.value > 0 ? next.value : (next.valueBeforeKill ?? 0);
  if (next.max > row.maxValue) {
    requireApproval(
      change.changeControl,
      `${endpoint.key} #${row.id} bounds ${formatCount(row.minValue)}..${formatCount(row.maxValue)} → ${formatCount(next.min)}..${formatCount(next.max)}`,
      {
        kind: "ceiling.bounds",
        change: { ceilingId: row.id, min: next.min, max: next.max },
      },
    );
  }
  if (isValueRaise(row, after)) {
    requireApproval(change.changeControl, `${endpoint.key} #${row.id} ${formatCount(row.value)} → ${formatCount(after)}`, {
      kind: "ceiling.value",
      change: { ceilingId: row.id, value: after },
    });
  }
  // At 0 with nothing remembered a restore puts the default back: a default raised there is a raise
  // (withholdRaises refuses it in a file; this holds it for any other caller).
  if (
    standingValue({ value: next.value, valueBeforeKill: next.valueBeforeKill, defaultValue: next.default }) > standingValue(row) &&
    !isValueRaise(row, after)
  ) {
    requireApproval(
      change.changeControl,
      `${endpoint.key} #${row.id} default ${formatCount(row.defaultValue)} → ${formatCount(next.default)} (a restore of it at 0 puts the default back)`,
    );
  }
  const wasLive = row.value > 0;
  const killing = wasLive && next.value === 0;
  const restoring = !wasLive && next.value > 0;
  const now = new Date();
  await change.tx
    .update(ceilings)
    .set({
      value: next.value,
      valueBeforeKill: next.valueBeforeKill,
      minValue: next.min,
      maxValue: next.max,
      defaultValue: next.default,
      alertThresholds: next.alertThresholds,
      ...(killing ? { killedAt: now, killedBy: actorName(change.actor) } : restoring ? { killedAt: null, killedBy: null } : {}),
      version: sql`${ceilings.version} + 1`,
      updatedAt: now,
    })
    .where(eq(ceilings.id, row.id));
  await recordCeilingChange(change, endpoint, {
    action: killing ? "ceiling.kill" : restoring ? "ceiling.restore" : "ceiling.update",
    ceilingId: row.id,
    previousValue: row.value,
    appliedValue: next.value,
    clamped: false,
    details: { before: ceilingSpecOf(row), changes: ceilingDiff(row, next) },
  });
  if (row.minValue !== next.min || row.maxValue !== next.max)
    await clampPlanValues(change, { kind: "ceiling", id: row.id, limitId: row.limitId, endpoint }, { min: next.min, max: next.max });
}
