import { sql } from "drizzle-orm";
import { z } from "zod";
import { migrateDatabase, openPostgres, resultRows, type Db } from "@/db/client";
import { env } from "@/lib/env";
import { ensureEndpoints, FILL_ENDPOINTS } from "./db-fill/catalog";
import { killEndpoint } from "@/lib/ceilings";
import { fillReservations, fillUsage, prepareFillEndpoints } from "./db-fill/history";
import { fillAccounts } from "./db-fill/accounts";
import { forgetCallerTotals } from "@/lib/counters/caller-totals";
import { fillBudget } from "./db-fill/budgets";
import { fillRefusals } from "./db-fill/refusals";
import { fillWhatIf, WHAT_IF_ENDPOINT } from "./db-fill/what-if";
import { formatCount } from "@/lib/format";

// npm run db:fill -- --refusals 2000000: realistic history at scale on the Postgres in
// DATABASE_URL, for benchmarks (npm run bench:dashboard). Use a database of its own: it adds
// fifty endpoints and millions of rows, a million billing accounts and plans. Re-running adds more
// history to the same endpoints.

const USAGE = "usage: npm run db:fill -- [--refusals N] [--reservations N] [--days N] [--budget-accounts N] [--accounts N] [--caller-usage N] [--what-if N]";
const Count = (max: number) => z.coerce.number().int().min(0).max(max);
const Args = z.object({
  refusals: Count(50_000_000).default(2_000_000),
  reservations: Count(50_000_000).default(200_000),
  days: Count(3650).pipe(z.number().min(1)).default(400),
  "budget-accounts": Count(10_000_000).default(100_000),
  // Billing accounts (a tenth of them assigned a plan), and how many spend today on the busiest
  // per-caller ceiling (the top-accounts view's ranking).
  accounts: Count(50_000_000).pipe(z.number().min(1)).default(1_000_000),
  "caller-usage": Count(10_000_000).default(100_000),
  // Given: only the what-if bench's endpoint, with N reservations over the last 30 days.
  "what-if": Count(50_000_000).optional(),
});

async function isKilled(db: Db, key: string): Promise<boolean> {
  const rows = resultRows<{ n: number }>(
    await db.execute(sql`select count(*)::int as n from ceilings c join endpoints e on e.id = c.endpoint_id where e.key = ${key} and c.killed_at is not null`),
  );
  return (rows[0]?.n ?? 0) > 0;
}

function parseArgs(argv: string[]): z.output<typeof Args> {
  const raw: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? "";
    const value = argv[i + 1];
    if (!flag.startsWith("--") || value === undefined) throw new Error(`unexpected argument '${flag}'\n${USAGE}`);
    raw[flag.slice(2)] = value.replaceAll("_", "").replaceAll(",", "");
  }
  const parsed = Args.strict().safeParse(raw);
  if (!parsed.success) throw new Error(`${parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("\n")}\n${USAGE}`);
  return parsed.data;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const url = env().DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set: db:fill writes millions of rows to a real Postgres (use a database of its own)");
  // One connection: the generator's temp tables live in its session.
  const database = openPostgres(url, { max: 1, connection: { work_mem: "256MB", synchronous_commit: "off", statement_timeout: 0 } });
  const started = Date.now();
  const step = (label: string) => console.log(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${label}`);
  try {
    await migrateDatabase(database);
    const db = database.db;
    // Every foreign key is right by construction; skipping their per-row checks (superuser only)
    // saves a fifth of the time. Without the privilege the fill is just slower.
    await db.execute(sql`set session_replication_role = replica`).catch(() => step("not a superuser: foreign keys checked row by row"));
    if (args["what-if"] !== undefined) {
      const added = await fillWhatIf(db, args["what-if"]);
      step(added ? `${formatCount(added)} reservations on ${WHAT_IF_ENDPOINT} over 30 days` : `${WHAT_IF_ENDPOINT} exists: nothing added`);
      await db.execute(sql`delete from endpoint_config_cache`);
      return;
    }
    const created = await ensureEndpoints(db);
    const endpointCount = await prepareFillEndpoints(db);
    step(`${endpointCount} endpoints (${created} new) with their ceilings`);
    const usageRows = await fillUsage(db, args.days);
    step(`${formatCount(usageRows)} usage counters over ${args.days} days`);
    await fillReservations(db, args.reservations, args.days);
    step(`${formatCount(args.reservations)} reservations`);
    const budgetRows = await fillBudget(db, args["budget-accounts"]);
    step(`${formatCount(budgetRows)} accounts in a per-account budget over 90 days (made once)`);
    const filled = await fillAccounts(db, { accounts: args.accounts, callerUsage: args["caller-usage"] });
    step(
      `${formatCount(filled.accounts)} accounts registered, ${formatCount(filled.assigned)} assigned to plans free/pro/enterprise, ${formatCount(filled.blocked)} blocked; ${formatCount(filled.counters)} per-account counters on the busiest per-caller ceilings`,
    );
    // Counters written for past windows after the worker may have totalled them: totalled again.
    await forgetCallerTotals(
      db,
      resultRows<{ id: number }>(await db.execute(sql`select id from fill_ep`)).map((r) => r.id),
    );
    const refusals = await fillRefusals(db, args.refusals, args.days, step);
    step(`${formatCount(refusals)} refusals; recounting the hourly rollup`);
    // The load bypassed ceilings.log_refusals, which keeps refusal_hourly: recount it from the rows.
    const [hours] = resultRows<{ n: number | string }>(await db.execute(sql`select ceilings.rebuild_refusal_hourly() as n`));
    step(`${formatCount(Number(hours?.n ?? 0))} hourly rollup rows; vacuum and analyze`);
    // An incident in progress: one endpoint killed, as every page must stay fast with one (the
    // kill banner and the killed endpoint's page read its refusals).
    const killed = FILL_ENDPOINTS.at(-1)?.key;
    if (killed && !(await isKilled(db, killed))) {
      await killEndpoint(db, { endpointKey: killed, actor: { type: "cli", name: "db:fill" }, reason: "db:fill: an endpoint killed, as in an incident" });
      step(`${killed} killed`);
    }
    // Fresh statistics for every table (the small catalog tables too, which autovacuum's row
    // threshold never reaches after a bulk load), and a visibility map so index-only scans stay
    // index-only.
    // The fill wrote ceilings and budget members with triggers off (replica): what batches kept
    // of the endpoints' configuration is read again.
    await db.execute(sql`delete from endpoint_config_cache`);
    await db.execute(sql`vacuum analyze`);
    step("done");
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(`db:fill failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
