import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents, ceilings, endpoints, type Ceiling, type NewCeiling } from "@/db/schema";

// Small, explicit endpoints for integration tests: each test creates its own so none shares rows.

let counter = 0;

export async function createEndpoint(
  db: Db,
  opts: { key?: string; ceilings?: Omit<NewCeiling, "endpointId">[] } = {},
): Promise<{ endpointId: number; key: string; ceilings: Ceiling[] }> {
  counter += 1;
  const key = opts.key ?? `email.t${counter}-${Date.now().toString(36)}`;
  const [endpoint] = await db
    .insert(endpoints)
    .values({ key, name: `Test ${key}`, unit: "emails", perCallMax: 1, planAllowance: 3000 })
    .returning();
  if (!endpoint) throw new Error("endpoint insert returned nothing");
  const specs = opts.ceilings ?? [
    { metric: "units", scope: "global", window: "utc_day", value: 100, defaultValue: 100, minValue: 10, maxValue: 150 },
    { metric: "units", scope: "global", window: "billing_month", value: 3000, defaultValue: 3000, minValue: 0, maxValue: 3000 },
  ];
  const rows = await db
    .insert(ceilings)
    .values(specs.map((c) => ({ ...c, endpointId: endpoint.id })))
    .returning();
  return { endpointId: endpoint.id, key, ceilings: rows.sort((a, b) => a.id - b.id) };
}

export async function readCeiling(db: Db, id: number): Promise<Ceiling> {
  const [row] = await db.select().from(ceilings).where(eq(ceilings.id, id));
  if (!row) throw new Error(`ceiling ${id} not found`);
  return row;
}

export async function auditOf(db: Db, ceilingId: number) {
  return db.select().from(auditEvents).where(eq(auditEvents.ceilingId, ceilingId)).orderBy(auditEvents.id);
}

/** First element, failing the test clearly rather than asserting non-null. */
export function first<T>(rows: T[]): T {
  const [row] = rows;
  if (row === undefined) throw new Error("expected at least one row");
  return row;
}
