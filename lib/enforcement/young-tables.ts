import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

/**
 * Analyzes the reservations and counters tables each time one has doubled while it is young (the
 * tables it analyzed), so no session keeps a plan made for a table a fraction of its size
 * (db/functions/analyze_young_tables.sql says why). One catalog read a call once both are not young.
 */
export async function analyzeYoungTables(db: Db): Promise<string[]> {
  const [row] = resultRows<{ analyzed: string[] }>(await db.execute(sql`select ceilings.analyze_young_tables() as analyzed`));
  return row?.analyzed ?? [];
}
