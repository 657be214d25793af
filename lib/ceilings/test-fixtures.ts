import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditEvents, ceilings, type Ceiling, type NewCeiling } from "@/db/schema";
import { createEndpoint as createCatalogEndpoint } from "@/lib/catalog/change";
import { BACKSTOP } from "@/lib/enforcement/test-fixtures";
import { setupControl } from "@/lib/control/context";

// Small, explicit endpoints for integration tests: each test creates its own so none shares rows.

let counter = 0;

/** An endpoint through the catalog's own call (lib/catalog createEndpoint), under its rules. */
export async function createEndpoint(
  db: Db,
  opts: { key?: string; ceilings?: Omit<NewCeiling, "endpointId">[] } = {},
): Promise<{ endpointId: number; key: string; ceilings: Ceiling[] }> {
  counter += 1;
  const key = opts.key ?? `email.t${counter}-${Date.now().toString(36)}`;
  const specs = opts.ceilings ?? [
    { metric: "units", scope: "global", window: "utc_day", value: 100, defaultValue: 100, minValue: 10, maxValue: 150 },
    { metric: "units", scope: "global", window: "billing_month", value: 3000, defaultValue: 3000, minValue: 0, maxValue: 3000 },
  ];
  // An endpoint must keep a global ceiling: a test about per-caller ceilings alone gets one far
  // above any test's load, left out of the ceilings returned.
  const backstop = specs.some((c) => c.scope === "global")
    ? []
    : [{ metric: "calls", scope: "global", window: "billing_month", value: BACKSTOP, min: 0, max: BACKSTOP, default: BACKSTOP } as const];
  const endpoint = await createCatalogEndpoint(db, {
    spec: {
      key,
      name: `Test ${key}`,
      unit: "emails",
      parts: [{ name: "units", price: "0" }],
      perCallMax: 1,
      planAllowance: 3000,
      ceilings: specs
        .map((c) => ({
          metric: c.metric,
          scope: c.scope,
          window: c.window,
          ...(c.windowSeconds ? { windowSeconds: c.windowSeconds } : {}),
          value: c.value,
          min: c.minValue ?? 0,
          max: c.maxValue,
          default: c.defaultValue,
        }))
        .concat(backstop),
    },
    actor: { type: "system", name: "test fixture" },
    reason: "test fixture",
    // A fixture builds data on purpose: a ceiling above its default is set up, not asked for.
    ...(specs.some((c) => c.value > (c.defaultValue ?? c.value)) ? { changeControl: setupControl("test fixture") } : {}),
  });
  const rows = await db.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id));
  const own = rows.filter((r) => backstop.length === 0 || r.scope !== "global");
  return { endpointId: endpoint.id, key, ceilings: own.sort((a, b) => a.id - b.id) };
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
