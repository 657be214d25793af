import { type Db, getEnforcementDb } from "@/db/client";
import type { KeySource } from "@/lib/api-keys/authenticate";

// What the HTTP handlers depend on. Route files pass the live database; tests pass a test
// database, so the handlers run unchanged against real Postgres without a server.
export type ApiDeps = {
  /** The enforcement handle: bounded timeouts, and reserves batched per handle. */
  db: () => Promise<Db>;
  /** Where API keys are read: the database on every request unless a cache is given (the API server's). */
  keys?: KeySource;
  now?: () => Date;
};

export const liveDeps: ApiDeps = { db: getEnforcementDb };
