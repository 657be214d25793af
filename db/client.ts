import path from "node:path";
import { sql } from "drizzle-orm";
import type { PgDatabase } from "drizzle-orm/pg-core";
import { drizzle, type PostgresJsQueryResultHKT } from "drizzle-orm/postgres-js";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres from "postgres";
import { env } from "@/lib/env";
import { EMBEDDED_APP_ROLE, EMBEDDED_DATABASE, type EmbeddedServer, ensureEmbeddedServer, stopEmbeddedServer } from "./embedded/server";
import { multiHostOptions, PoolSockets, probeTimeoutFor } from "./multi-host";
import { queryTiming } from "./query-timing";
import * as schema from "./schema";
import { applyFunctions } from "./functions";

export type Schema = typeof schema;
/** The database, or a transaction on it. */
export type Db = PgDatabase<PostgresJsQueryResultHKT, Schema>;

export const migrationsFolder = path.join(process.cwd(), "db", "migrations");

export type Database = {
  db: Db;
  close: () => Promise<void>;
  /** Drops the connections now, failing queries in flight (a silent network never answers them). */
  destroy?: () => Promise<void>;
};

export type PostgresOptions = {
  max?: number;
  /** Session settings applied to every connection, e.g. statement_timeout for enforcement. */
  connection?: Record<string, string | number>;
  connectTimeoutSeconds?: number;
  /** postgres.js's array-type lookup on every new connection (default on); see the sibling pools. */
  fetchTypes?: boolean;
  /** Called with each notice or warning the server sends (default: dropped). */
  onNotice?: (notice: { message?: string }) => void;
  /** Called each time one of the pool's connections closes (the next query opens another). */
  onClose?: () => void;
  /** A file each statement's time is appended to (db/query-timing.ts); default CEILINGS_QUERY_TIMING, null: never. */
  queryTimingFile?: string | null;
};

// Pools opened beside a pool, with its URL and settings: enforcement runs each batch on a
// one-connection pool of its own, so a batch past its deadline can be destroyed alone.
const siblingOpeners = new WeakMap<Db, SiblingOpener>();
const clients = new WeakMap<Db, postgres.Sql>();
export type SiblingOpener = (
  max: number,
  connection?: Record<string, string | number>,
  onNotice?: PostgresOptions["onNotice"],
  onClose?: PostgresOptions["onClose"],
) => Database;

/** Opens a pool on a Postgres server. The only place a postgres.js client is created. */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const sockets = new PoolSockets();
  const timingFile = options.queryTimingFile === undefined ? env().CEILINGS_QUERY_TIMING : options.queryTimingFile;
  const timing = timingFile ? queryTiming(timingFile, options.onNotice ?? (() => {})) : undefined;
  const client = postgres(url, {
    max: options.max ?? env().DB_POOL_MAX,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    idle_timeout: 30,
    onnotice: timing?.onNotice ?? options.onNotice ?? (() => {}),
    ...(options.onClose ? { onclose: () => options.onClose?.() } : {}),
    fetch_types: options.fetchTypes ?? true,
    connection: { application_name: "ceilings", ...timing?.connection, ...options.connection },
    // A multi-host URL (a Patroni cluster) connects to its primary only: see db/multi-host.ts.
    ...multiHostOptions(url, {
      connectTimeoutSeconds: options.connectTimeoutSeconds ?? 10,
      probeTimeoutMs: probeTimeoutFor(env().ENFORCEMENT_DEADLINE_MS),
      sockets,
    }),
  });
  const siblings = new Set<Database>();
  const db: Db = drizzle(client, { schema });
  clients.set(db, client);
  siblingOpeners.set(db, (max, connection, onNotice, onClose) => {
    // Sibling pools are the enforcement lanes: jsonb in and out, no arrays to parse. Without the
    // type lookup, a lane destroyed while it connects leaves no query of postgres.js's own behind
    // (that query's failure was an unhandled rejection).
    const sibling = openPostgres(url, { ...options, max, fetchTypes: false, onNotice, onClose, connection: { ...options.connection, ...connection } });
    siblings.add(sibling);
    const forget = <T>(work: () => Promise<T>) => {
      siblings.delete(sibling);
      return work();
    };
    return { ...sibling, close: () => forget(sibling.close), destroy: () => forget(() => sibling.destroy?.() ?? sibling.close()) };
  });
  return {
    db,
    close: async () => {
      await Promise.all([...siblings].map((s) => s.close()));
      await client.end({ timeout: 5 });
      sockets.abandon();
    },
    destroy: () => {
      // Before postgres.js lets go: it ends only sockets already open, and a pick under way would
      // still hand it one.
      sockets.abandon();
      return client.end({ timeout: 0 });
    },
  };
}

/** A function that opens another pool on the same server with the same settings, if `db` has one. */
export function siblingOpener(db: Db): SiblingOpener | undefined {
  return siblingOpeners.get(db);
}

/**
 * Runs `text` (placeholders $1, $2, ...) as a named prepared statement of the connection it lands
 * on, if `db` is a pool opened here: parsed once per connection, then one round trip a call.
 * db.execute sends every statement with parameters unnamed and asks the server to describe it
 * first, which costs a round trip and a parse of its own on every call.
 */
export function preparedRunner(db: Db): ((text: string, params: (string | null)[]) => Promise<unknown[]>) | undefined {
  const client = clients.get(db);
  return client && ((text, params) => client.unsafe(text, params, { prepare: true }));
}

/**
 * LISTENs on `channel` over a connection of `db`'s pool set aside for it (postgres.js opens it, and
 * opens it again after it drops, calling `onListen` each time it listens); undefined for a handle
 * not opened here.
 */
export function listenOn(
  db: Db,
  channel: string,
  onNotify: (payload: string) => void,
  onListen: () => void,
): Promise<{ unlisten: () => Promise<void> }> | undefined {
  return clients.get(db)?.listen(channel, onNotify, onListen);
}

// Any fixed number: two migrators of one database run one after the other.
const MIGRATION_TX_LOCK = 726_345_103;

/**
 * The versioned migrations (schema), then the SQL functions of db/functions/ when they changed,
 * in one transaction: a new schema never commits beside functions written for the old one, and a
 * failed apply leaves both as they were. The migrations are read and recorded as drizzle's
 * migrate() does (its table drizzle.__drizzle_migrations, by each file's time), which runs them in
 * a transaction of its own.
 */
export async function migrateDatabase(
  database: Database,
  /** Other folders, for tests of the migration itself. */
  folders: { migrations?: string; functions?: string } = {},
): Promise<{ functionsApplied: boolean }> {
  const migrations = readMigrationFiles({ migrationsFolder: folders.migrations ?? migrationsFolder });
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_TX_LOCK})`);
    await tx.execute(sql`create schema if not exists drizzle`);
    await tx.execute(sql`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`);
    const [last] = resultRows<{ created_at: string | number | null }>(
      await tx.execute(sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`),
    );
    for (const migration of migrations) {
      if (last && Number(last.created_at) >= migration.folderMillis) continue;
      for (const statement of migration.sql) await tx.execute(sql.raw(statement));
      await tx.execute(sql`insert into drizzle.__drizzle_migrations ("hash", "created_at") values (${migration.hash}, ${migration.folderMillis})`);
    }
    return { functionsApplied: await applyFunctions(tx, folders.functions) };
  });
}

/** db.execute on postgres.js returns the rows as an array; this gives them a row type. */
export function resultRows<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  throw new Error("unexpected query result shape");
}

// Any fixed number: processes that open a fresh embedded database at once migrate it one by one.
const MIGRATE_LOCK = 726_345_102;

/** Creates the embedded server's database on first use; processes starting together queue on a lock. */
export async function createEmbeddedDatabase(server: EmbeddedServer): Promise<void> {
  const admin = openPostgres(server.url.replace(/\/[^/]*$/, "/postgres"), { max: 1 });
  try {
    await admin.db.execute(sql`select pg_advisory_lock(${MIGRATE_LOCK})`);
    const rows = resultRows<{ n: number }>(await admin.db.execute(sql`select count(*)::int as n from pg_database where datname = ${EMBEDDED_DATABASE}`));
    if (rows[0]?.n === 0) await admin.db.execute(sql`create database ${sql.identifier(EMBEDDED_DATABASE)}`);
  } finally {
    await admin.close();
  }
}

/**
 * What a fresh embedded database gets once it is migrated (the demo seed, lib/demo): passed in by
 * the caller because what goes into the tables is the domain's business, not db/'s.
 */
export type FirstStart = (db: Db) => Promise<unknown>;

/**
 * Migrates the embedded database, then runs `firstStart` on it. The work runs on one connection
 * holding an advisory lock, so two processes starting together (the dashboard and the worker)
 * never migrate or seed at the same time; later starts only apply what is new.
 */
async function migrateEmbedded(server: EmbeddedServer, firstStart?: FirstStart): Promise<void> {
  await createEmbeddedDatabase(server);
  const one = openPostgres(server.url, { max: 1 });
  try {
    await one.db.execute(sql`select pg_advisory_lock(${MIGRATE_LOCK})`);
    await migrateDatabase(one);
    // The app runs as a role that owns nothing and may only add to the audit log (db/roles.ts).
    const { ensureAppRole } = await import("./roles");
    await ensureAppRole(one.db, { role: EMBEDDED_APP_ROLE, password: server.appPassword });
    if (firstStart) await firstStart(one.db);
    await one.db.execute(sql`select pg_advisory_unlock(${MIGRATE_LOCK})`);
  } finally {
    await one.close();
  }
}

/** The URL the application uses: DATABASE_URL, else the embedded server (started if needed). */
export async function resolveDatabaseUrl(): Promise<{ url: string; embedded?: EmbeddedServer }> {
  const e = env();
  if (e.DATABASE_URL) return { url: e.DATABASE_URL };
  const embedded = await ensureEmbeddedServer(e.DATA_DIR);
  return { url: embedded.appUrl, embedded };
}

/**
 * The configured database, ready to use: DATABASE_URL as it is (migrations are `npm run
 * db:migrate`'s job there), or the embedded server started, migrated and given its `firstStart`.
 */
export async function prepareDatabase(firstStart?: FirstStart): Promise<{ url: string; embedded?: EmbeddedServer }> {
  const resolved = await resolveDatabaseUrl();
  if (resolved.embedded) await migrateEmbedded(resolved.embedded, firstStart);
  return resolved;
}

type Opened = { main: Database; enforcement: Database; ready: Promise<void>; embedded?: EmbeddedServer };

// Next loads modules several times in one process: one set of pools per process, on globalThis.
const holder = globalThis as typeof globalThis & { __ceilingsDb?: Promise<Opened> };

async function openConfigured(): Promise<Opened> {
  const e = env();
  const { url, embedded } = await resolveDatabaseUrl();
  // Migrated only: each entry point seeds first (prepareDatabaseWithDemo in lib/demo), before it
  // asks for the pools.
  const ready = embedded ? migrateEmbedded(embedded) : Promise.resolve();
  const main = openPostgres(url);
  // Enforcement gets its own pool whose every statement is bounded: a slow or locked database
  // answers "unavailable" within the deadline instead of hanging the caller.
  const enforcement = openPostgres(url, {
    max: e.ENFORCEMENT_POOL_MAX,
    // Without postgres.js's array-type lookup, as the lanes: a connection lost while that lookup
    // ran (a primary killed as the pool reconnected) failed it as an unhandled rejection, which
    // ended the API server in test:ha. Drizzle parses array columns from their text form.
    fetchTypes: false,
    connectTimeoutSeconds: Math.max(1, Math.ceil(e.ENFORCEMENT_DEADLINE_MS / 1000)),
    connection: {
      statement_timeout: e.ENFORCEMENT_STATEMENT_TIMEOUT_MS,
      lock_timeout: e.ENFORCEMENT_LOCK_TIMEOUT_MS,
      idle_in_transaction_session_timeout: 10_000,
    },
  });
  if (embedded?.startedHere) stopOnSignals();
  return { main, enforcement, ready, embedded };
}

function opened(): Promise<Opened> {
  holder.__ceilingsDb ??= openConfigured();
  return holder.__ceilingsDb;
}

/** The application's database (dashboard, CLIs, worker); the embedded one migrated. */
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

/**
 * Closes this process's pools. A process that started the embedded server stops it too, unless
 * another client (the dashboard, the worker, psql, a service) is still connected: then it stays up.
 */
export async function closeDb(): Promise<void> {
  const o = holder.__ceilingsDb;
  holder.__ceilingsDb = undefined;
  if (!o) return;
  const { main, enforcement, embedded } = await o;
  await Promise.all([main.close(), enforcement.close()]);
  if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, env().DATA_DIR);
}

/** Stops the embedded server unless a client other than the asking connection is connected. */
export async function stopEmbeddedIfUnused(server: Pick<EmbeddedServer, "url">, dataDir: string): Promise<"stopped" | "in use"> {
  const probe = openPostgres(server.url, { max: 1 });
  let others: number;
  try {
    const rows = resultRows<{ n: number }>(
      await probe.db.execute(sql`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()`),
    );
    others = rows[0]?.n ?? 0;
  } finally {
    await probe.close();
  }
  if (others > 0) {
    console.error(`ceilings: the embedded database stays up: ${others} other connection(s) still use it (npm run db:stop stops it)`);
    return "in use";
  }
  await stopEmbeddedServer(dataDir);
  console.error("ceilings: embedded database stopped");
  return "stopped";
}

/**
 * The process that started the embedded server stops it on Ctrl-C or SIGTERM (see closeDb), when
 * nothing else in the process handles the signal; a process with its own handler (the worker)
 * calls closeDb itself, and `next start` exits at once, leaving the server up for the next start.
 */
function stopOnSignals(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const handler = () => {
      if (process.listenerCount(signal) > 0) return;
      closeDb()
        .catch((error: unknown) => console.error("ceilings: could not stop the embedded database", error))
        .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    };
    process.once(signal, handler);
  }
}
