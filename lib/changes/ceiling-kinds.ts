import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { ceilings, endpoints, type Ceiling, type Endpoint } from "@/db/schema";
import { CatalogError } from "@/lib/limits/errors";
import { zodIssues } from "@/lib/limits/errors";
import { CeilingSpec, ceilingIdentity, perCallMoneyIssue } from "@/lib/catalog/spec";
import { fieldsOf, insertCeiling, lockedEndpoint, setArchived, updateEndpointFields } from "@/lib/catalog/write";
import { worstCases } from "@/lib/catalog/worst-case";

import { CeilingError } from "@/lib/ceilings/errors";

import { CONFIRM_RAISE_FACTOR } from "@/lib/limits/parse";
import { durationLabel } from "@/lib/limits/guarantee";
import { formatCount } from "@/lib/format";
import { issueLine, InputError } from "@/lib/errors";
import { ChangeControlError } from "@/lib/control/errors";
import { type ApplyContext, type KindHandler, movedSince, staleMessage, type Worst } from "./prepared";
import { isAddRaise } from "@/lib/catalog/re-add";

// The kinds on an endpoint and its ceilings: a new ceiling, the per-call max, an unarchive (a
// ceiling's value and bounds are asked as a budget's are: limit-kinds.ts). Applied under the
// endpoint lock the direct edit takes (lockedEndpoint), through its write code (insertCeiling,
// updateEndpointFields, setArchived).

const Units = (what: string, min: number) =>
  z
    .number({ error: `${what} must be a whole number` })
    .int(`${what} must be a whole number`)
    .min(min, `${what} must be ${min} or more`)
    .max(Number.MAX_SAFE_INTEGER, `${what} is too large`);
const Key = z.string({ error: "an endpoint key is required" }).min(1, "an endpoint key is required").max(64);

export function parseChange<T extends z.ZodType>(schema: T, change: unknown): z.infer<T> {
  const parsed = schema.safeParse(change);
  if (!parsed.success) throw InputError.of(zodIssues(parsed.error).map(issueLine).join("; "));
  return parsed.data;
}

/** A spec inside a request (`spec`, `ceiling`): each problem named at its path under it. */
export function parseAt<T extends z.ZodType>(schema: T, raw: unknown, at: string): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new InputError(zodIssues(parsed.error).map((i) => ({ ...i, path: i.path ? `${at}.${i.path}` : at })));
  return parsed.data;
}

/** "units/day", "calls/month per caller", "units/cooldown 24 hours per destination". */
export function ceilingLabel(c: Pick<Ceiling, "metric" | "scope" | "window" | "windowSeconds">): string {
  const window = c.window === "utc_day" ? "day" : c.window === "billing_month" ? "month" : `cooldown ${durationLabel(c.windowSeconds ?? 0)}`;
  return `${c.metric}/${window}${c.scope === "global" ? "" : ` per ${c.scope}`}`;
}

type Shape = { metric: Ceiling["metric"]; scope: Ceiling["scope"]; window: Ceiling["window"]; value: number };

/** The endpoint's worst case a day, in units and money (lib/catalog/worst-case.ts). */
export function worstDay(rows: readonly Shape[], e: Endpoint, perCallMax = e.perCallMax): Worst {
  const day = worstCases(rows, { perCallMax, parts: e.parts }).day;
  return day === null ? { units: null, micros: null } : { units: day.units, micros: day.micros };
}

export async function endpointRows(db: Db, endpointId: number): Promise<{ endpoint: Endpoint; rows: Ceiling[] }> {
  const [endpoint] = await db.select().from(endpoints).where(eq(endpoints.id, endpointId));
  if (!endpoint) throw new ChangeControlError("not_found", `no endpoint #${endpointId}`);
  return { endpoint, rows: await db.select().from(ceilings).where(eq(ceilings.endpointId, endpointId)).orderBy(asc(ceilings.id)) };
}

async function endpointByKey(db: Db, key: string): Promise<{ endpoint: Endpoint; rows: Ceiling[] }> {
  const [found] = await db.select({ id: endpoints.id }).from(endpoints).where(eq(endpoints.key, key));
  if (!found) throw new ChangeControlError("not_found", `no endpoint '${key}'`);
  return endpointRows(db, found.id);
}

const base = { ceilingId: null, budgetId: null, mayEnd: false, confirm: null } as const;

export function withValue(rows: readonly Ceiling[], id: number, value: number): Shape[] {
  return rows.map((r) => (r.id === id ? { ...r, value } : r));
}

/** The request's target is gone (a ceiling removed, an endpoint renamed): stale, not an error. */
async function orStale<T>(lock: () => Promise<T>): Promise<T | { gone: string }> {
  try {
    return await lock();
  } catch (error) {
    if ((error instanceof CeilingError || error instanceof CatalogError) && error.code === "not_found") return { gone: error.message };
    throw error;
  }
}

function isGone(v: unknown): v is { gone: string } {
  return typeof v === "object" && v !== null && "gone" in v;
}

/** The value the request showed (its `after`): approval applies exactly that, never a re-clamp of the typed one. */
const AfterValue = z.object({ value: Units("value", 0) });
export function shownValue(after: unknown): number {
  return parseChange(AfterValue, after).value;
}

// ---- ceiling.add ---------------------------------------------------------------------------------

const CeilingAdd = z.strictObject({ endpointKey: Key, ceiling: z.unknown() });

const identitiesOf = (rows: readonly Ceiling[]) => rows.map((r) => ceilingIdentity(r)).sort();

export const ceilingAdd: KindHandler = {
  async prepare(db, raw) {
    const { endpointKey } = parseChange(CeilingAdd, raw);
    const spec = parseAt(CeilingSpec, (raw as { ceiling?: unknown }).ceiling, "ceiling");
    const { endpoint, rows } = await endpointByKey(db, endpointKey);
    const identity = ceilingIdentity(spec);
    if (rows.some((r) => ceilingIdentity(r) === identity))
      throw InputError.of(`${endpoint.key} already has this ceiling (${identity}): change its value instead`);
    const live = spec.killed ? 0 : spec.value;
    const needsConfirm = spec.value > spec.default && (spec.default === 0 || spec.value >= spec.default * CONFIRM_RAISE_FACTOR);
    return {
      ...base,
      change: { endpointKey: endpoint.key, ceiling: spec },
      before: { identities: identitiesOf(rows) },
      after: { ceiling: identity, value: spec.value },
      summary: `${endpoint.key} new ceiling ${ceilingLabel({ ...spec, windowSeconds: spec.windowSeconds ?? null })} ${formatCount(spec.value)} (default ${formatCount(spec.default)})`,
      endpointId: endpoint.id,
      worstBefore: worstDay(rows, endpoint),
      worstAfter: worstDay([...rows, { ...spec, value: live }], endpoint),
      currency: endpoint.currency,
      raise: (await isAddRaise(db, endpoint.id, spec)).raise,
      confirm: needsConfirm ? { expected: formatCount(spec.value), matches: (t) => t.trim() === String(spec.value) } : null,
    };
  },
  async apply({ tx, request, actor, control }) {
    const { endpointKey } = parseChange(CeilingAdd, request.change);
    const spec = parseAt(CeilingSpec, (request.change as { ceiling?: unknown }).ceiling, "ceiling");
    const endpoint = await orStale(() => lockedEndpoint(tx, endpointKey));
    if (isGone(endpoint)) return { stale: endpoint.gone };
    const rows = await tx.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id)).for("update");
    const moved = movedSince(request.before, { identities: identitiesOf(rows) });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await insertCeiling({ tx, actor, reason: request.reason, changeControl: control }, endpoint, spec);
    return { stale: null, raised: null };
  },
};

// ---- endpoint.per_call_max -----------------------------------------------------------------------

const PerCallMax = z.strictObject({ endpointKey: Key, perCallMax: Units("per-call max", 1) });

export const perCallMax: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(PerCallMax, raw);
    const { endpoint, rows } = await endpointByKey(db, change.endpointKey);
    if (endpoint.perCallMax === change.perCallMax) throw new ChangeControlError("unchanged", `the per-call max is already ${formatCount(change.perCallMax)}`);
    const money = perCallMoneyIssue({ perCallMax: change.perCallMax, parts: endpoint.parts });
    if (money) throw InputError.of(issueLine(money));
    const needsConfirm = change.perCallMax >= endpoint.perCallMax * CONFIRM_RAISE_FACTOR;
    return {
      ...base,
      change,
      before: { perCallMax: endpoint.perCallMax },
      after: { perCallMax: change.perCallMax },
      summary: `${endpoint.key} per-call max ${formatCount(endpoint.perCallMax)} → ${formatCount(change.perCallMax)}`,
      endpointId: endpoint.id,
      worstBefore: worstDay(rows, endpoint),
      worstAfter: worstDay(rows, endpoint, change.perCallMax),
      currency: endpoint.currency,
      raise: change.perCallMax > endpoint.perCallMax,
      confirm: needsConfirm ? { expected: formatCount(change.perCallMax), matches: (t) => t.trim() === String(change.perCallMax) } : null,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(PerCallMax, request.change);
    const endpoint = await orStale(() => lockedEndpoint(tx, change.endpointKey));
    if (isGone(endpoint)) return { stale: endpoint.gone };
    const moved = movedSince(request.before, { perCallMax: endpoint.perCallMax });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await updateEndpointFields({ tx, actor, reason: request.reason, changeControl: control }, endpoint, {
      ...fieldsOf(endpoint),
      perCallMax: change.perCallMax,
    });
    return { stale: null, raised: null };
  },
};

// ---- endpoint.unarchive --------------------------------------------------------------------------

const Unarchive = z.strictObject({ endpointKey: Key });

export const endpointUnarchive: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Unarchive, raw);
    const { endpoint, rows } = await endpointByKey(db, change.endpointKey);
    if (endpoint.archivedAt === null) throw new ChangeControlError("unchanged", `${endpoint.key} is not archived`);
    return {
      ...base,
      change,
      before: { archived: true },
      after: { archived: false },
      summary: `${endpoint.key} unarchive (archived: refuses every call)`,
      endpointId: endpoint.id,
      // Archived, it refuses every call: nothing can be spent.
      worstBefore: { units: 0, micros: 0 },
      worstAfter: worstDay(rows, endpoint),
      currency: endpoint.currency,
      raise: true,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(Unarchive, request.change);
    const endpoint = await orStale(() => lockedEndpoint(tx, change.endpointKey));
    if (isGone(endpoint)) return { stale: endpoint.gone };
    const moved = movedSince(request.before, { archived: endpoint.archivedAt !== null });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await setArchived({ tx, actor, reason: request.reason, changeControl: control }, endpoint, false);
    return { stale: null, raised: null };
  },
};

export type { ApplyContext };
