import { InputError } from "@/lib/errors";
import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "@/db/client";
import { ceilings, type Ceiling, type Endpoint } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import type { ChangeControl } from "@/lib/control/context";
import { CONFIRM_RAISE_FACTOR } from "@/lib/limits/parse";
import { CatalogConflictError, CatalogError, invalidInput, requireCatalogReason } from "@/lib/limits/errors";
import { zodIssues } from "@/lib/limits/errors";
import { AlertThresholds, CeilingSpec, ceilingIdentity, EndpointFields, EndpointSpec, perCallMoneyIssue, UNBOUNDED_SENTENCE } from "./spec";
import {
  deleteCeiling,
  type FieldChange,
  insertCeiling,
  insertEndpoint,
  lockedEndpoint,
  recordCeilingChange,
  setArchived,
  updateEndpointFields,
} from "./write";
import { formatCount } from "@/lib/format";

// The catalog verbs the dashboard calls. Each parses its input with the catalog's schemas, takes
// the endpoint lock, checks the version the person saw, and writes with one audit event.

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error));
  return parsed.data;
}

function checkVersion(endpoint: Endpoint, expected: number | undefined): void {
  if (expected !== undefined && endpoint.version !== expected) {
    throw new CatalogConflictError(endpoint.version, `someone else changed ${endpoint.key} first. Nothing was saved; the form now shows the values in force`);
  }
}

/** A raise of this many times or more is retyped to confirm, as a ceiling value raise is. */
function needsConfirmation(before: number, after: number): boolean {
  return after > before && (before === 0 || after >= before * CONFIRM_RAISE_FACTOR);
}

function checkConfirmation(what: string, before: number, after: number, confirm: string | undefined): void {
  if (!needsConfirmation(before, after)) return;
  if ((confirm ?? "").trim() !== String(after)) {
    throw new CatalogError(
      "confirmation_required",
      `${what} ${formatCount(before)} → ${formatCount(after)} is ${CONFIRM_RAISE_FACTOR}× or more: type ${formatCount(after)} again (as ${after}) to confirm`,
    );
  }
}

/** changeControl: only setup code (the demo seed, test fixtures) creates ceilings above their defaults at once. */
export type CreateEndpointParams = { spec: unknown; actor: AuditActor; reason: string; changeControl?: ChangeControl };

export async function createEndpoint(db: Db, p: CreateEndpointParams): Promise<Endpoint> {
  const spec = parse(EndpointSpec, p.spec);
  const reason = requireCatalogReason(p.reason);
  return db.transaction((tx) => insertEndpoint({ tx, actor: p.actor, reason, ...(p.changeControl ? { changeControl: p.changeControl } : {}) }, spec));
}

export type UpdateEndpointParams = {
  key: string;
  expectedVersion: number;
  fields: unknown;
  actor: AuditActor;
  reason: string;
  confirm?: string;
  changeControl?: ChangeControl;
};

export async function updateEndpoint(db: Db, p: UpdateEndpointParams): Promise<FieldChange[]> {
  const fields = parse(EndpointFields, p.fields);
  const money = perCallMoneyIssue(fields);
  if (money) throw invalidInput([money]);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.key);
    checkVersion(endpoint, p.expectedVersion);
    checkConfirmation("raising the per-call max", endpoint.perCallMax, fields.perCallMax, p.confirm);
    const changes = await updateEndpointFields({ tx, actor: p.actor, reason, changeControl: p.changeControl }, endpoint, fields);
    if (changes.length === 0) throw new CatalogError("unchanged", "nothing changed: every field already has that value");
    return changes;
  });
}

export type AddCeilingParams = {
  key: string;
  expectedVersion?: number;
  ceiling: unknown;
  actor: AuditActor;
  reason: string;
  confirm?: string;
  changeControl?: ChangeControl;
};

export async function addCeiling(db: Db, p: AddCeilingParams): Promise<Ceiling> {
  const spec = parse(CeilingSpec, p.ceiling);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.key);
    checkVersion(endpoint, p.expectedVersion);
    const existing = await tx.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id));
    const identity = ceilingIdentity(spec);
    if (existing.some((c) => ceilingIdentity(c) === identity)) {
      throw InputError.of(`${endpoint.key} already has this ceiling (${identity}): change its value instead`);
    }
    checkConfirmation("a value against its default,", spec.default, spec.value, p.confirm);
    return insertCeiling({ tx, actor: p.actor, reason, changeControl: p.changeControl }, endpoint, spec);
  });
}

export type RemoveCeilingParams = { key: string; ceilingId: number; expectedVersion?: number; actor: AuditActor; reason: string };

export async function removeCeiling(db: Db, p: RemoveCeilingParams): Promise<void> {
  const reason = requireCatalogReason(p.reason);
  await db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.key);
    checkVersion(endpoint, p.expectedVersion);
    const own = await tx.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id)).for("update");
    const target = own.find((c) => c.id === p.ceilingId);
    if (!target) throw new CatalogError("not_found", `${endpoint.key} has no ceiling #${p.ceilingId}`);
    if (target.scope === "global" && own.filter((c) => c.scope === "global").length === 1) {
      throw new CatalogError(
        "last_global_ceiling",
        `#${target.id} is the last global ceiling of ${endpoint.key}, and ${UNBOUNDED_SENTENCE}. Add another global ceiling first, or archive the endpoint`,
      );
    }
    await deleteCeiling({ tx, actor: p.actor, reason }, endpoint, target);
  });
}

export type ArchiveParams = { key: string; archived: boolean; actor: AuditActor; reason: string; changeControl?: ChangeControl };

/** Archive: every reserve answers endpoint_archived from the next batch on; history stays readable. */
export async function setEndpointArchived(db: Db, p: ArchiveParams): Promise<void> {
  const reason = requireCatalogReason(p.reason);
  await db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.key);
    if ((endpoint.archivedAt !== null) === p.archived) {
      throw new CatalogError("unchanged", `${endpoint.key} is already ${p.archived ? "archived" : "live (not archived)"}`);
    }
    await setArchived({ tx, actor: p.actor, reason, changeControl: p.changeControl }, endpoint, p.archived);
  });
}

export type SetAlertThresholdsParams = { key: string; ceilingId: number; thresholds: unknown; actor: AuditActor; reason: string };

/** The percentages of a ceiling at which threshold alerts fire (50/80/100 by default). */
export async function setAlertThresholds(db: Db, p: SetAlertThresholdsParams): Promise<number[]> {
  const thresholds = parse(AlertThresholds, p.thresholds);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const endpoint = await lockedEndpoint(tx, p.key);
    const [row] = await tx
      .select()
      .from(ceilings)
      .where(and(eq(ceilings.id, p.ceilingId), eq(ceilings.endpointId, endpoint.id)))
      .for("update");
    if (!row) throw new CatalogError("not_found", `${endpoint.key} has no ceiling #${p.ceilingId}`);
    const before = [...row.alertThresholds].sort((a, b) => a - b);
    if (before.join(",") === thresholds.join(",")) throw new CatalogError("unchanged", `alerts already fire at ${before.join("/")}%`);
    await tx.update(ceilings).set({ alertThresholds: thresholds, updatedAt: new Date() }).where(eq(ceilings.id, row.id));
    await recordCeilingChange({ tx, actor: p.actor, reason }, endpoint, {
      action: "ceiling.update",
      ceilingId: row.id,
      details: { changes: { alertThresholds: { before, after: thresholds } } },
    });
    return thresholds;
  });
}
