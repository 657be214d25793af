import { and, asc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { raiseEnds, type Ceiling } from "@/db/schema";

// The value a scheduled value is judged against, when it is scheduled and again when it runs: the
// value that stands once what is passing has passed. A killed ceiling stands at what a restore puts
// back; a temporary raise stands at what its end puts back (its revert_to), not at the raised value,
// or a schedule made during a one-hour raise would keep the raise for good.

export async function standingValue(db: Db, ceiling: Pick<Ceiling, "id" | "value" | "valueBeforeKill" | "defaultValue">): Promise<number> {
  const inForce = ceiling.value === 0 ? (ceiling.valueBeforeKill ?? ceiling.defaultValue) : ceiling.value;
  const [end] = await db
    .select({ revertTo: raiseEnds.revertTo })
    .from(raiseEnds)
    .where(and(eq(raiseEnds.ceilingId, ceiling.id), eq(raiseEnds.state, "active")))
    .orderBy(asc(raiseEnds.revertTo))
    .limit(1);
  return end ? Math.min(inForce, end.revertTo) : inForce;
}
