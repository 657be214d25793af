import type { Db } from "@/db/client";
import type { Ceiling, Endpoint } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { killLimit, restoreLimit, restoreValue } from "@/lib/limits/kill";
import { CeilingError, optionalReason } from "./errors";
import { endpointsById, lockCeilings, lockEndpointCeilings } from "./lock";
import { ceilingTarget } from "./target";

export type KillParams = { endpointKey: string; actor: AuditActor; reason?: string };
export type RestoreParams = { endpointKey: string; actor: AuditActor; reason?: string };
export type KillAllParams = { actor: AuditActor; reason?: string };

export type CeilingChange = { ceilingId: number; endpointKey: string; previous: number; applied: number };

/**
 * The kill of ceilings the caller has locked (lockCeilings) in its transaction (the kernel's
 * killLimit, each): the dashboard's, the CLI's and a schedule's kill all write through here.
 * `details` joins each audit row's. A ceiling already at 0 is left as it is.
 */
export async function killCeilings(
  tx: Db,
  endpoint: Endpoint,
  rows: Ceiling[],
  actor: AuditActor,
  reason: string | null,
  via: "endpoint" | "all" | "schedule",
  details: Record<string, unknown> = {},
): Promise<CeilingChange[]> {
  const changes: CeilingChange[] = [];
  for (const c of rows) {
    if (await killLimit(ceilingTarget(tx, c, endpoint), { actor, reason, details: { via, ...details } })) {
      changes.push({ ceilingId: c.id, endpointKey: endpoint.key, previous: c.value, applied: 0 });
    }
  }
  return changes;
}

/** Sets every ceiling of one endpoint to 0, remembering each value for restore. */
export async function killEndpoint(db: Db, p: KillParams): Promise<CeilingChange[]> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { endpoint, rows } = await lockEndpointCeilings(tx, p.endpointKey);
    if (rows.length === 0) throw new CeilingError("not_found", `${endpoint.key} has no ceilings to kill`);
    const changes = await killCeilings(tx, endpoint, rows, p.actor, reason, "endpoint");
    if (changes.length === 0) throw new CeilingError("already_killed", `${endpoint.key} is already killed`);
    return changes;
  });
}

/** Kills every endpoint in one transaction; each can then be restored on its own. */
export async function killAll(db: Db, p: KillAllParams): Promise<CeilingChange[]> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const rows = await lockCeilings(tx);
    const byEndpoint = await endpointsById(tx, [...new Set(rows.map((r) => r.endpointId))]);
    const changes: CeilingChange[] = [];
    for (const [id, endpoint] of byEndpoint) {
      const own = rows.filter((r) => r.endpointId === id);
      changes.push(...(await killCeilings(tx, endpoint, own, p.actor, reason, "all")));
    }
    if (changes.length === 0) throw new CeilingError("already_killed", "every endpoint is already killed");
    return changes;
  });
}

/**
 * Puts back the value each killed ceiling of the endpoint had before its kill. A ceiling at 0
 * with no remembered value (it was created at 0) gets its default.
 */
export async function restoreEndpoint(db: Db, p: RestoreParams): Promise<CeilingChange[]> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { endpoint, rows } = await lockEndpointCeilings(tx, p.endpointKey);
    return restoreCeilings(tx, endpoint, rows, p.actor, reason);
  });
}

/**
 * The restore of ceilings the caller has locked in its transaction (the ones at 0 among `rows`):
 * the dashboard's and a schedule's restore write through here.
 */
export async function restoreCeilings(
  tx: Db,
  endpoint: Endpoint,
  rows: Ceiling[],
  actor: AuditActor,
  reason: string | null,
  details: Record<string, unknown> = {},
): Promise<CeilingChange[]> {
  const killed = rows.filter((r) => r.value === 0);
  if (killed.length === 0) throw new CeilingError("not_killed", `${endpoint.key} is not killed: nothing to restore`);
  const changes: CeilingChange[] = [];
  for (const c of killed) {
    // Bounds may have moved since the kill; a restore never lands outside them.
    const applied = restoreValue(c);
    if (await restoreLimit(ceilingTarget(tx, c, endpoint), { actor, reason, details }, applied)) {
      changes.push({ ceilingId: c.id, endpointKey: endpoint.key, previous: 0, applied });
    }
  }
  if (changes.length === 0) {
    throw new CeilingError("not_killed", `${endpoint.key} has no remembered value to restore: set a value on the endpoint page`);
  }
  return changes;
}
