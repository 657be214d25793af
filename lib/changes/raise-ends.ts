import { raiseEnds } from "@/db/schema";
import type { Db } from "@/db/client";

// Placeholder until the timing helper's raise ends land (it replaces this file and keeps this
// signature): what core's applier records when an approved value raise carries an end.

export type RecordRaiseEndParams = {
  requestId: number;
  endpointId: number | null;
  ceilingId?: number;
  budgetId?: number;
  revertTo: number;
  raisedTo: number;
  endsAt: Date;
  createdBy: string;
};

/** Remembers what to put back when a raise ends; in the transaction that applies the raise. */
export async function recordRaiseEnd(tx: Db, p: RecordRaiseEndParams): Promise<number> {
  const [row] = await tx
    .insert(raiseEnds)
    .values({ requestId: p.requestId, endpointId: p.endpointId, ceilingId: p.ceilingId ?? null, budgetId: p.budgetId ?? null, revertTo: p.revertTo, raisedTo: p.raisedTo, endsAt: p.endsAt, createdBy: p.createdBy })
    .returning({ id: raiseEnds.id });
  if (!row) throw new Error("raise_ends insert returned nothing");
  return row.id;
}
