import { spawn } from "node:child_process";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { type Db, openPostgres, resultRows } from "@/db/client";
import { ceilings, usage, type NewCeiling } from "@/db/schema";
import { createEndpoint } from "@/lib/catalog/change";
import { batcherFor } from "./reserve";
import type { BatcherOptions } from "./batcher";

// Endpoints made for one test each, so no two tests share a counter.

let counter = 0;

export type CeilingSpec = Pick<NewCeiling, "metric" | "scope" | "window" | "value"> & { windowSeconds?: number; destinationKind?: "email" | "phone" };

/**
 * An endpoint through the catalog's own call (createEndpoint), so fixtures obey its rules. A test
 * about per-caller ceilings or cooldowns alone gets a global calls ceiling far above any test's
 * load appended (an endpoint must keep one), which is left out of `ceilingIds`.
 */
export async function makeEndpoint(
  db: Db,
  opts: { perCallMax?: number; throttlePerMinute?: number; ceilings: CeilingSpec[] },
): Promise<{ key: string; endpointId: number; ceilingIds: number[] }> {
  counter += 1;
  const key = `t.e${counter}-${Date.now().toString(36)}`;
  const specs = opts.ceilings.map((c) => ({
    metric: c.metric,
    scope: c.scope,
    window: c.window,
    ...(c.windowSeconds !== undefined ? { windowSeconds: c.windowSeconds } : {}),
    ...(c.destinationKind !== undefined ? { destinationKind: c.destinationKind } : {}),
    value: c.value,
    min: 0,
    max: Math.max(c.value, 1),
    default: c.value,
  }));
  const unbounded = !specs.some((c) => c.scope === "global");
  const extra = unbounded
    ? [{ metric: "calls", scope: "global", window: "billing_month", value: BACKSTOP, min: 0, max: BACKSTOP, default: BACKSTOP } as const]
    : [];
  const endpoint = await createEndpoint(db, {
    spec: {
      key,
      name: key,
      unit: "units",
      parts: [{ name: "units", price: "0" }],
      perCallMax: opts.perCallMax ?? 1_000_000,
      throttlePerMinute: opts.throttlePerMinute ?? null,
      ceilings: [...specs, ...extra],
    },
    actor: { type: "system", name: "test fixture" },
    reason: "test fixture",
  });
  const rows = await db
    .select({ id: ceilings.id, value: ceilings.value, scope: ceilings.scope, metric: ceilings.metric, window: ceilings.window })
    .from(ceilings)
    .where(eq(ceilings.endpointId, endpoint.id));
  const own = rows.filter((r) => !(unbounded && r.scope === "global" && r.metric === "calls" && r.window === "billing_month" && r.value === BACKSTOP));
  return { key, endpointId: endpoint.id, ceilingIds: own.map((r) => r.id).sort((a, b) => a - b) };
}

/** The global ceiling a fixture without one gets: far above any test's load, so it never binds. */
export const BACKSTOP = 1_000_000_000;

/** held + settled of one ceiling's counters in the current windows, summed over scope keys. */
export async function counterTotals(db: Db, ceilingId: number): Promise<{ held: number; settled: number }> {
  const [row] = await db
    .select({
      held: sql<string>`coalesce(sum(${usage.held}), 0)`,
      settled: sql<string>`coalesce(sum(${usage.settled}), 0)`,
    })
    .from(usage)
    .where(and(eq(usage.ceilingId, ceilingId), sql`${usage.windowEnd} > now()`));
  return { held: Number(row?.held ?? 0), settled: Number(row?.settled ?? 0) };
}

export async function setCeilingValue(db: Db, ceilingId: number, value: number): Promise<void> {
  // The same lock an edit from the dashboard takes: it waits for batches in flight.
  await db.transaction(async (tx) => {
    await tx.execute(sql`select ceilings.lock_endpoints_for_change(array(select endpoint_id from ceilings where id = ${ceilingId}))`);
    await tx.execute(sql`select id from ceilings where id = ${ceilingId} for update`);
    await tx
      .update(ceilings)
      .set({ value, maxValue: sql`greatest(${ceilings.maxValue}, ${value})` })
      .where(eq(ceilings.id, ceilingId));
  });
}

// Exactness tests must not lose requests to the 2 s deadline on a loaded machine: the deadline has
// tests of its own (fail-closed.int.test.ts).
export const PATIENT: Partial<BatcherOptions> = { deadlineMs: 30_000 };

/** Independent pools with batchers of their own: as many "processes" as there are pools. */
export function openPools(url: string, count: number, max: number, options?: Partial<BatcherOptions>) {
  const pools = Array.from({ length: count }, () => openPostgres(url, { max }));
  for (const p of pools) batcherFor(p.db, { ...PATIENT, ...options });
  return { dbs: pools.map((p) => p.db), close: () => Promise.all(pools.map((p) => p.close())) };
}

export async function countRows(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = resultRows<{ n: string | number }>(await db.execute(query));
  return Number(row?.n ?? 0);
}

/**
 * A fixture script run as its own OS process (so nothing in this process can coordinate it): it
 * prints "ready", waits on its stdin, and prints its result as one JSON line before it exits.
 * `send` ends its stdin (with a go signal, or none to say stop).
 */
export function startFixtureProcess<T>(file: string, args: string[]): { ready: Promise<void>; send: (text?: string) => void; done: Promise<T> } {
  const child = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: path.resolve(__dirname, "..", ".."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith("ready\n")) markReady();
  });
  const done = new Promise<T>((resolve, reject) => {
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.slice("ready\n".length))) : reject(new Error(`${path.basename(file)} exited ${code}`))));
  });
  return { ready, send: (text) => child.stdin.end(text), done };
}
