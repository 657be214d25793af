import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { isCi } from "@/lib/ci";
import { env, type Env } from "@/lib/env";
import { type Database, type Db, migrateDatabase, openPostgres, resultRows } from "./client";
import { ensureAppRole } from "./roles";

// Integration suites run on the real Postgres named by TEST_DATABASE_URL, each in a database of its
// own so suites never share rows. Names carry their creation time so a later run can drop the
// leftovers of a crashed one without touching databases another run is still using.

export const TEST_DATABASE_PREFIX = "ceilings_t_";
const STALE_AFTER_MS = 60 * 60 * 1000;
/** Default pool per suite: with two Vitest workers and the e2e server this stays far below 100. */
export const DEFAULT_TEST_POOL_MAX = 12;
/** Concurrency suites may raise their pool, but two of them in parallel must still fit in 100. */
export const MAX_TEST_POOL_MAX = 40;

/**
 * The least-privilege role every suite's pool connects as, the way the app does in production.
 * Cluster-wide and shared by every suite; ensureAppRole is safe to race. Test-only password.
 */
export const TEST_APP_ROLE = { role: "ceilings_test_app", password: "ceilings-test-app-only" };

export class TestDatabaseError extends Error {
  override name = "TestDatabaseError";
}

type TestEnv = Pick<Env, "CI" | "TEST_DATABASE_URL">;

/**
 * Whether integration suites can run. Without TEST_DATABASE_URL they are skipped, except on CI,
 * where a skipped Postgres suite must be a failure, never a quiet pass: there this throws, which
 * fails the test file that asked.
 */
export function hasTestDatabase(e: TestEnv = env()): boolean {
  if (e.TEST_DATABASE_URL) return true;
  if (isCi(e.CI)) {
    throw new TestDatabaseError("CI is set but TEST_DATABASE_URL is not: integration suites cannot be skipped on CI");
  }
  return false;
}

/** For `describe.skipIf(skipWithoutDatabase())(...)` in *.int.test.ts files. */
export function skipWithoutDatabase(): boolean {
  return !hasTestDatabase();
}

function serverUrl(): string {
  const url = env().TEST_DATABASE_URL;
  if (!url) throw new TestDatabaseError("TEST_DATABASE_URL is not set");
  return url;
}

/** The same server and credentials as `base`, another database. */
export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

function testDatabaseName(label: string): string {
  const clean =
    label
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 30) || "suite";
  const stamp = Date.now().toString(36);
  const random = randomBytes(4).toString("hex");
  return `${TEST_DATABASE_PREFIX}${clean}_${stamp}_${random}`;
}

/** The creation time encoded in a test database name, or undefined if the name is not ours. */
export function testDatabaseCreatedAt(name: string): Date | undefined {
  const match = /^ceilings_t_[a-z0-9_]*_([0-9a-z]+)_[0-9a-f]{8}$/.exec(name);
  if (!match?.[1]) return undefined;
  const ms = Number.parseInt(match[1], 36);
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/** Runs `work` on a one-connection pool to the database named in TEST_DATABASE_URL. */
export async function withServerAdmin<T>(work: (db: Db) => Promise<T>, base = serverUrl()): Promise<T> {
  const admin = openPostgres(base, { max: 1 });
  try {
    return await work(admin.db);
  } finally {
    await admin.close();
  }
}

export async function dropDatabase(admin: Db, name: string): Promise<void> {
  // FORCE ends sessions a crashed suite left open; Postgres 13 and later.
  await admin.execute(sql`drop database if exists ${sql.identifier(name)} with (force)`);
}

export type TestDatabase = {
  name: string;
  /** The suite's connection URL, as the app role (the owner's when migrate is false). */
  url: string;
  database: Database;
  /** The suite's pool: the app role, which owns nothing and may only add to the audit log. */
  db: Db;
  /** A small pool as the owner that ran the migrations, for tests of what only the owner may do. */
  ownerDb: Db;
  /** Closes the suite's pool and drops its database. Safe to call twice. */
  drop: () => Promise<void>;
};

export type TestDatabaseOptions = {
  /** Pool size; raise it only for concurrency tests (at most MAX_TEST_POOL_MAX). */
  max?: number;
  /** Skip the migrations, for tests of the migrations themselves. */
  migrate?: boolean;
};

/** Creates a fresh, migrated database for one suite on the TEST_DATABASE_URL server. */
export async function createTestDatabase(label: string, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const max = options.max ?? DEFAULT_TEST_POOL_MAX;
  if (!Number.isInteger(max) || max < 1 || max > MAX_TEST_POOL_MAX) {
    throw new TestDatabaseError(`test pool size must be a whole number from 1 to ${MAX_TEST_POOL_MAX}, got ${max}`);
  }
  const base = serverUrl();
  const name = testDatabaseName(label);
  await withServerAdmin((admin) => admin.execute(sql`create database ${sql.identifier(name)}`), base);
  const ownerUrl = databaseUrl(base, name);
  const owner = openPostgres(ownerUrl, { max: 2 });
  let database: Database | undefined;
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await database?.close();
    await owner.close();
    await withServerAdmin((admin) => dropDatabase(admin, name), base);
  };
  let url = ownerUrl;
  try {
    if (options.migrate !== false) {
      // As in production: the owner migrates and grants, then the suite connects as the app role.
      await migrateDatabase(owner);
      await ensureAppRole(owner.db, TEST_APP_ROLE);
      url = roleUrl(ownerUrl, TEST_APP_ROLE);
    }
    database = openPostgres(url, { max });
  } catch (error) {
    await drop();
    throw error;
  }
  return { name, url, database, db: database.db, ownerDb: owner.db, drop };
}

/** The same server and database as `base`, connecting as another role. */
export function roleUrl(base: string, login: { role: string; password?: string | null }): string {
  const url = new URL(base);
  url.username = encodeURIComponent(login.role);
  url.password = login.password ? encodeURIComponent(login.password) : "";
  return url.toString();
}

/** Drops test databases left behind by runs that started over an hour ago. Returns their names. */
export async function dropStaleTestDatabases(now = new Date()): Promise<string[]> {
  return withServerAdmin(async (admin) => {
    const rows = resultRows<{ datname: string }>(await admin.execute(sql`select datname from pg_database where datname like 'ceilings\_t\_%'`));
    const stale = rows
      .map((r) => r.datname)
      .filter((name) => {
        const created = testDatabaseCreatedAt(name);
        return created !== undefined && now.getTime() - created.getTime() > STALE_AFTER_MS;
      });
    for (const name of stale) await dropDatabase(admin, name);
    return stale;
  });
}

/**
 * Runs `hold` in a transaction and keeps that transaction open, its locks and uncommitted rows held,
 * until `release()` (which resolves once it has committed): what a batch, an edit or an assignment
 * in flight looks like to whatever a test runs meanwhile. Resolves once `hold` has run.
 */
export async function holdTransaction(db: Db, hold: (tx: Db) => Promise<unknown>): Promise<{ release: () => Promise<void> }> {
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((r) => (ready = r));
  const done = db.transaction(async (tx) => {
    await hold(tx);
    ready();
    await held;
  });
  // A `hold` that throws rejects here instead of leaving the test waiting.
  await Promise.race([isReady, done]);
  return {
    release: async () => {
      release();
      await done;
    },
  };
}
