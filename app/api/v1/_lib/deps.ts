import { type Db, getDb, getEnforcementDb } from "@/db/client";
import type { KeySource } from "@/lib/api-keys/authenticate";

// What the HTTP handlers depend on. Route files pass the live database; tests pass a test
// database, so the handlers run unchanged against real Postgres without a server.
export type ApiDeps = {
  /** The enforcement handle: bounded timeouts, and reserves batched per handle. */
  db: () => Promise<Db>;
  /**
   * The app's own pool, without enforcement's short statement timeout, for the account writes (a
   * bulk assignment of 10,000 rows); the enforcement handle when not given (tests).
   */
  adminDb?: () => Promise<Db>;
  /** Where API keys are read: the database on every request unless a cache is given (the API server's). */
  keys?: KeySource;
  now?: () => Date;
};

export const liveDeps: ApiDeps = { db: getEnforcementDb, adminDb: getDb };
