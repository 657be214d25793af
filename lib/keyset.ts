import { sql, type AnyColumn, type SQL } from "drizzle-orm";
import { z } from "zod";
import { isRealUtcInstant } from "@/lib/http/strict-input";

// Keyset pages over logs ordered by (at, id), the audit log's and the refusal log's: a cursor is
// the (at, id) of a row. `at` keeps microseconds as Postgres stores them, which a JS Date would
// truncate and so skip or repeat rows sharing a millisecond.

export const KeysetCursor = z
  .string()
  .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z_\d{1,15}$/, "invalid page cursor")
  // The shape alone lets "2026-13-45T99:99:99" through to Postgres, which fails the whole page.
  .refine((s) => isRealUtcInstant(s.split("_")[0] ?? ""), "invalid page cursor: not a real time")
  .transform((s) => {
    const [at = "", id = "0"] = s.split("_");
    return { at, id: Number(id) };
  });
export type KeysetCursor = z.output<typeof KeysetCursor>;

/** The cursor of a row, written by the database so `at` keeps its microseconds. */
export function keysetCursorText(at: AnyColumn, id: AnyColumn): SQL<string> {
  return sql<string>`to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '_' || ${id}`;
}
