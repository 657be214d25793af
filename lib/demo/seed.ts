import { sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { hashPassword, PRODUCTION_BCRYPT_COST } from "@/lib/auth/password";
import type { Db } from "@/db/client";
import { applyCatalog } from "@/lib/catalog/file";
import { setupControl } from "@/lib/control/context";
import { DEMO_CATALOG_TEXT, DEMO_ENDPOINTS, DEMO_PASSWORD, DEMO_STAFF, type CeilingRef } from "./catalog";
import type { SeededCeiling, UsageRow } from "./history";
import { demoAlerts, demoAuditEvents, demoRefusals, type Endpoints } from "./incidents";
import { seedBudgetHistory } from "./budgets";
import { seedDemoAccounts } from "./accounts";
import { seedDemoChangeRequest } from "./changes";
import { seedDemoReconciliation } from "./reconciliation";
import { seededRandom } from "./random";
import type { ReservationRow } from "./today";
import { demoUsage } from "./usage";
import { insertCounters } from "@/lib/counters/insert";
import { alerts, auditEvents, ceilings, endpoints, refusals, reservations, staff, staffGrants } from "@/db/schema";

// Demo data for a first start: the demo catalog's endpoints with their ceilings, budgets and plans, five weeks of
// spend, refusals at every gate, customers' accounts on their plans, a few alerts and three staff accounts, so no
// page of a fresh dashboard is empty.

// The demo accounts hash at the production cost: a cheaper hash would answer sign-in faster than
// the dummy hash an unknown email is checked against, telling which emails are demo accounts.
export const DEMO_BCRYPT_COST = PRODUCTION_BCRYPT_COST;
// Any fixed number: two processes seeding one database at once queue on it instead of racing.
const SEED_LOCK = 726_345_101;

export type SeedOptions = {
  /** The embedded data folder, named in the printed message so people know what to delete. */
  dataDir?: string;
  /** The instant the history ends at; tests pin it. */
  now?: Date;
  /** Where the credentials and summary go; stdout by default. */
  log?: (line: string) => void;
  bcryptCost?: number;
};

export type SeedSummary = {
  endpoints: number;
  ceilings: number;
  usage: number;
  budgetUsage: number;
  accounts: number;
  reservations: number;
  refusals: number;
  alerts: number;
  changeRequests: number;
  staff: string[];
};

async function insertChunked<T extends PgTable>(tx: Db, table: T, rows: T["$inferInsert"][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) await tx.insert(table).values(rows.slice(i, i + 500));
}

async function isEmpty(db: Db): Promise<boolean> {
  const rows = await db.select({ id: endpoints.id }).from(endpoints).limit(1);
  return rows.length === 0;
}

/**
 * Seeds the demo in one transaction if the endpoints table is empty. Returns true if it seeded.
 * Demo staff that already exist (same email) are left as they are.
 */
export async function seedDemoIfEmpty(db: Db, opts: SeedOptions = {}): Promise<boolean> {
  if (!(await isEmpty(db))) return false;
  const now = opts.now ?? new Date();
  const log = opts.log ?? ((line: string) => console.log(line));
  // Hashing is slow on purpose; do it before the transaction so no lock waits on it.
  const hash = await hashPassword(DEMO_PASSWORD, opts.bcryptCost ?? DEMO_BCRYPT_COST);

  const summary = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SEED_LOCK})`);
    if (!(await isEmpty(tx))) return undefined;
    return seedDemo(tx, now, hash);
  });
  if (!summary) return false;
  // Statistics for the tables just filled: autovacuum would analyse the big ones in a while and the
  // small catalog ones never, and until then the planner guesses (docs/operations.md). A role that
  // owns no table is warned and skips them: harmless.
  await db.execute(sql`analyze`);

  log("");
  log("Ceilings demo data seeded:");
  log(`  ${summary.endpoints} endpoints, ${summary.ceilings} ceilings, ${summary.usage} usage rows, ${summary.budgetUsage} budget counter rows,`);
  log(
    `  ${summary.accounts} accounts on three plans, ${summary.reservations} reservations today, ${summary.refusals} refusal rows, ${summary.alerts} alerts, ${summary.changeRequests} change request waiting for a second admin.`,
  );
  if (summary.staff.length > 0) {
    log(`Demo staff, all with the password "${DEMO_PASSWORD}":`);
    for (const email of summary.staff) {
      const role = DEMO_STAFF.find((s) => s.email === email)?.role ?? "";
      log(`  ${email.padEnd(26)} ${role}`);
    }
  }
  if (opts.dataDir) log(`Embedded database in ${opts.dataDir}/; delete that folder to start over.`);
  log("");
  return true;
}

async function seedDemo(tx: Db, now: Date, passwordHash: string): Promise<SeedSummary> {
  const random = seededRandom(1_234_567);
  // The catalog goes in through the same code as any team's catalog file (`ceilings apply`).
  // Built on purpose: the demo plans' values above the own ones are set up, not raised by a person.
  await applyCatalog(tx, {
    text: DEMO_CATALOG_TEXT,
    actor: { type: "system", name: "demo seed" },
    reason: "the demo catalog (lib/demo/ceilings.json)",
    confirmRaise: true,
    changeControl: setupControl("demo seed"),
  });
  const insertedEndpoints = await tx.select({ id: endpoints.id, key: endpoints.key }).from(endpoints);
  const insertedCeilings = await tx.select().from(ceilings);
  const idOf = new Map(insertedEndpoints.map((e) => [e.key, e.id]));
  const seeded: Partial<Endpoints> = {};
  for (const def of DEMO_ENDPOINTS) {
    const id = mustGet(idOf, def.key);
    const byRef: Partial<Record<CeilingRef, SeededCeiling>> = {};
    for (const c of def.ceilings) {
      // Metric, scope and window identify a ceiling within one demo endpoint.
      const row = insertedCeilings.find((r) => r.endpointId === id && r.metric === c.metric && r.scope === c.scope && r.window === c.window);
      if (!row) throw new Error(`demo ceiling ${def.key}/${c.ref} was not inserted`);
      byRef[c.ref] = { ...c, id: row.id, limitId: row.limitId };
    }
    seeded[def.key] = { def, id, ceilings: byRef };
  }
  const eps = completeEndpoints(seeded);

  const usageRows: UsageRow[] = [];
  const reservationRows: ReservationRow[] = [];
  for (const ep of Object.values(eps)) {
    const { usage: rows, reservations: made } = demoUsage(ep, now, random);
    usageRows.push(...rows);
    reservationRows.push(...made);
  }
  const refusalRows = demoRefusals(eps, now, random);
  const alertRows = demoAlerts(eps, now, refusalRows);

  await insertCounters(tx, usageRows);
  await insertChunked(tx, reservations, reservationRows);
  await insertChunked(tx, refusals, refusalRows);
  await insertChunked(tx, alerts, alertRows);
  const budgetRows = await seedBudgetHistory(tx);
  const accountRows = await seedDemoAccounts(tx);
  const addedStaff = await tx
    .insert(staff)
    .values(DEMO_STAFF.map((s) => ({ email: s.email, name: s.name, role: s.role, passwordHash })))
    .onConflictDoNothing({ target: staff.email })
    .returning({ id: staff.id, email: staff.email, role: staff.role });
  // Made by the seed, not by a staff member: roots of the independence rule, as `npm run staff` makes.
  if (addedStaff.length > 0)
    await tx
      .insert(staffGrants)
      .values(addedStaff.map((s) => ({ staffId: s.id, grantedById: null, grantedBy: "seed", kind: "create" as const, role: s.role })));
  await insertChunked(tx, auditEvents, demoAuditEvents(eps, now, addedStaff));
  const changeRequests = await seedDemoChangeRequest(tx);
  await seedDemoReconciliation(tx, eps, usageRows, now, random);

  return {
    endpoints: insertedEndpoints.length,
    ceilings: insertedCeilings.length,
    usage: usageRows.length,
    budgetUsage: budgetRows,
    accounts: accountRows,
    reservations: reservationRows.length,
    refusals: refusalRows.length,
    alerts: alertRows.length,
    changeRequests,
    staff: addedStaff.map((s) => s.email),
  };
}

function mustGet<K, V>(map: Map<K, V>, key: K): V {
  const value = map.get(key);
  if (value === undefined) throw new Error(`demo seed: missing ${String(key)}`);
  return value;
}

function completeEndpoints(seeded: Partial<Endpoints>): Endpoints {
  const email = seeded["email.subscribe"];
  const sms = seeded["sms.password-reset"];
  const llm = seeded["llm.chat"];
  const gpt = seeded["llm.gpt-4o"];
  const claude = seeded["llm.claude-sonnet"];
  const embed = seeded["llm.embed"];
  const webhook = seeded["webhook.notify"];
  if (!email || !sms || !llm || !gpt || !claude || !embed || !webhook) throw new Error("demo seed: an endpoint is missing from the catalog");
  return {
    "email.subscribe": email,
    "sms.password-reset": sms,
    "llm.chat": llm,
    "llm.gpt-4o": gpt,
    "llm.claude-sonnet": claude,
    "llm.embed": embed,
    "webhook.notify": webhook,
  };
}
