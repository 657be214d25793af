import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

/**
 * Analyzes the reservations table each time it has doubled while it is young (true when it did),
 * so no session keeps a plan made for a table a fraction of its size
 * (db/functions/analyze_young_ledger.sql says why). One catalog read a call once it is not young.
 */
export async function analyzeYoungLedger(db: Db): Promise<boolean> {
  const [row] = resultRows<{ analyzed: boolean }>(await db.execute(sql`select ceilings.analyze_young_ledger() as analyzed`));
  return row?.analyzed === true;
}
