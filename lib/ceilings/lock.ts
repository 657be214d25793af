import { asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, type Ceiling, type Endpoint, type NewCeiling } from "@/db/schema";
import { CeilingConflictError, CeilingError } from "./errors";

// Each reservation batch takes its endpoints' locks shared and reads their ceilings FOR SHARE.
// Every edit here takes the endpoint locks exclusively (queued fairly: a stream of batches cannot
// starve a kill), then FOR UPDATE on the rows it changes, in id order: it waits only for batches in
// flight and binds the next one. That is what makes a kill exact and prompt.

export async function lockCeilings(tx: Db, where?: SQL): Promise<Ceiling[]> {
  const ids = tx.selectDistinct({ id: ceilings.endpointId }).from(ceilings);
  const endpointIds = (await (where ? ids.where(where) : ids)).map((r) => r.id);
  await tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${endpointIds.join(",")}}`}::int[])`);
  const query = tx.select().from(ceilings);
  return (where ? query.where(where) : query).orderBy(asc(ceilings.id)).for("update");
}

export async function lockCeiling(tx: Db, ceilingId: number): Promise<{ ceiling: Ceiling; endpoint: Endpoint }> {
  const [ceiling] = await lockCeilings(tx, eq(ceilings.id, ceilingId));
  if (!ceiling) throw new CeilingError("not_found", `no ceiling with id ${ceilingId}`);
  const [endpoint] = await tx.select().from(endpoints).where(eq(endpoints.id, ceiling.endpointId));
  if (!endpoint) throw new CeilingError("not_found", `no endpoint for ceiling ${ceilingId}`);
  return { ceiling, endpoint };
}

/**
 * lockCeiling for an edit made on what the person saw: if someone saved the ceiling since, that is
 * a conflict carrying what is in force now (`conflict` says it), never overwritten silently.
 */
export async function lockCeilingAsSeen(
  tx: Db,
  ceilingId: number,
  expectedVersion: number,
  conflict: (now: Ceiling) => string,
): Promise<{ ceiling: Ceiling; endpoint: Endpoint }> {
  const locked = await lockCeiling(tx, ceilingId);
  const { ceiling } = locked;
  if (ceiling.version !== expectedVersion) throw new CeilingConflictError(ceiling.value, ceiling.version, conflict(ceiling));
  return locked;
}

/**
 * Writes an edit to a locked ceiling as its next version; returns that version. An edit that also
 * stamps a time (killedAt) passes the same one as updatedAt.
 */
export async function saveCeiling(tx: Db, ceilingId: number, fields: Partial<NewCeiling>): Promise<number> {
  const [updated] = await tx
    .update(ceilings)
    .set({ updatedAt: new Date(), ...fields, version: sql`${ceilings.version} + 1` })
    .where(eq(ceilings.id, ceilingId))
    .returning({ version: ceilings.version });
  if (!updated) throw new CeilingError("not_found", `no ceiling with id ${ceilingId}`);
  return updated.version;
}

/** An endpoint by its key, with all its ceilings locked for a change (a kill or a restore). */
export async function lockEndpointCeilings(tx: Db, endpointKey: string): Promise<{ endpoint: Endpoint; rows: Ceiling[] }> {
  const [endpoint] = await tx.select().from(endpoints).where(eq(endpoints.key, endpointKey));
  if (!endpoint) throw new CeilingError("not_found", `no endpoint '${endpointKey}'`);
  return { endpoint, rows: await lockCeilings(tx, eq(ceilings.endpointId, endpoint.id)) };
}

export async function endpointsById(tx: Db, ids: number[]): Promise<Map<number, Endpoint>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.select().from(endpoints).where(inArray(endpoints.id, ids));
  return new Map(rows.map((e) => [e.id, e]));
}
