import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { env } from "@/lib/env";
import { multiHostOptions } from "./multi-host";
import * as schema from "./schema";

export type Schema = typeof schema;
/** The database, or a transaction on it: both postgres.js and PGlite fit this type. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export const migrationsFolder = path.join(process.cwd(), "db", "migrations");

export type Database = {
  db: Db;
  kind: "postgres" | "pglite";
  close: () => Promise<void>;
};

export type PostgresOptions = {
  max?: number;
  /** Session settings applied to every connection, e.g. statement_timeout for enforcement. */
  connection?: Record<string, string | number>;
  connectTimeoutSeconds?: number;
};

/** Opens a pool on a real Postgres server. The only place a postgres.js client is created. */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const client = postgres(url, {
    max: options.max ?? env().DB_POOL_MAX,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    idle_timeout: 30,
    onnotice: () => {},
    connection: { application_name: "ceilings", ...options.connection },
    // A multi-host URL (a Patroni cluster) connects to its primary only: see db/multi-host.ts.
    ...multiHostOptions(url, options.connectTimeoutSeconds ?? 10),
  });
  return { db: drizzlePostgres(client, { schema }), kind: "postgres", close: () => client.end({ timeout: 5 }) };
}

/** Opens an embedded PGlite data folder. One process may hold a folder at a time. */
export async function openPglite(dataDir: string): Promise<Database> {
  // PGlite creates its own folder but not the parents: `.data/` is missing in a fresh clone.
  if (!dataDir.includes("://")) await mkdir(path.dirname(dataDir), { recursive: true });
  const client = await PGlite.create(dataDir);
  return { db: drizzlePglite(client, { schema }), kind: "pglite", close: () => client.close() };
}

export async function migrateDatabase(database: Database): Promise<void> {
  if (database.kind === "postgres") {
    await migratePostgres(database.db as Parameters<typeof migratePostgres>[0], { migrationsFolder });
  } else {
    await migratePglite(database.db as Parameters<typeof migratePglite>[0], { migrationsFolder });
  }
}

type Opened = { main: Database; enforcement: Database; ready: Promise<void> };

// Next loads modules several times in one process; two PGlite instances on one folder corrupt it,
// so the opened database lives on globalThis.
const holder = globalThis as typeof globalThis & { __ceilingsDb?: Promise<Opened> };

async function openConfigured(): Promise<Opened> {
  const e = env();
  if (e.DATABASE_URL) {
    const main = openPostgres(e.DATABASE_URL);
    // Enforcement gets its own pool whose every statement is bounded: a slow or locked database
    // answers "unavailable" within the deadline instead of hanging the caller.
    const enforcement = openPostgres(e.DATABASE_URL, {
      max: e.ENFORCEMENT_POOL_MAX,
      connectTimeoutSeconds: Math.max(1, Math.ceil(e.ENFORCEMENT_DEADLINE_MS / 1000)),
      connection: {
        statement_timeout: e.ENFORCEMENT_STATEMENT_TIMEOUT_MS,
        lock_timeout: e.ENFORCEMENT_LOCK_TIMEOUT_MS,
        idle_in_transaction_session_timeout: 10_000,
      },
    });
    return { main, enforcement, ready: Promise.resolve() };
  }
  const main = await openPglite(path.resolve(e.DATA_DIR, "pglite"));
  const ready = (async () => {
    await migrateDatabase(main);
    const { seedDemoIfEmpty } = await import("./seed");
    await seedDemoIfEmpty(main.db, { dataDir: e.DATA_DIR });
  })();
  return { main, enforcement: main, ready };
}

function opened(): Promise<Opened> {
  holder.__ceilingsDb ??= openConfigured();
  return holder.__ceilingsDb;
}

/** The application's database (dashboard, CLIs), migrated and seeded when embedded. */
export async function getDb(): Promise<Db> {
  const o = await opened();
  await o.ready;
  return o.main.db;
}

/** The database enforcement calls go through: bounded statement and lock timeouts. */
export async function getEnforcementDb(): Promise<Db> {
  const o = await opened();
  await o.ready;
  return o.enforcement.db;
}

export async function closeDb(): Promise<void> {
  const o = holder.__ceilingsDb;
  holder.__ceilingsDb = undefined;
  if (!o) return;
  const { main, enforcement } = await o;
  await main.close();
  if (enforcement !== main) await enforcement.close();
}

/** db.execute returns an array on postgres.js and { rows } on PGlite; this reads both. */
export function resultRows<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  if (result && typeof result === "object" && "rows" in result && Array.isArray(result.rows)) {
    return result.rows as T[];
  }
  throw new Error("unexpected query result shape");
}
