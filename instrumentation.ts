// Runs once when the server starts, before it answers: opening the database here means the
// embedded server is started, migrated and seeded before the first request, and a missing
// NEXTAUTH_SECRET against a real database stops the start with a clear message.
export async function register(): Promise<void> {
  // Read directly rather than via lib/env.ts: Next replaces this at build time, which keeps the
  // Node-only imports below out of any edge bundle.
  // eslint-disable-next-line no-restricted-syntax
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // First, before anything slow: TRACE and CONNECT are answered on the Node server itself (405 with
  // Allow), since Next cannot build a Request of them for proxy.ts or a route (lib/http/method-guard.ts).
  const { installMethodGuard } = await import("./lib/http/method-guard");
  installMethodGuard();
  const { env } = await import("./lib/env");
  const { resolveAuthSecret } = await import("./lib/auth/secret");
  const e = env();
  resolveAuthSecret({ nextAuthSecret: e.NEXTAUTH_SECRET, databaseUrl: e.DATABASE_URL, dataDir: e.DATA_DIR });
  // Metrics count from the first reservation on, not from the first scrape.
  const { metrics } = await import("./lib/metrics");
  metrics("app");
  const { prepareDatabaseWithDemo } = await import("./lib/demo");
  await prepareDatabaseWithDemo();
  const { getDb } = await import("./db/client");
  const db = await getDb();
  if (e.DATABASE_URL) {
    // Not awaited: a database that does not answer yet must not fail the start (db/roles.ts).
    const { warnAboutAppRoleWhenReachable } = await import("./db/roles");
    void warnAboutAppRoleWhenReachable(db, (line) => console.warn(line));
  }
}
