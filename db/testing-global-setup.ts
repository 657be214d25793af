import { dropStaleTestDatabases, hasTestDatabase } from "./testing";

// Runs once per `vitest run`, before any suite. On CI without TEST_DATABASE_URL hasTestDatabase()
// throws, so the whole run fails instead of quietly skipping the Postgres suites.
export default async function setup(): Promise<void> {
  if (!hasTestDatabase()) {
    console.log("SKIPPED: integration suites (*.int.test.ts) need TEST_DATABASE_URL");
    return;
  }
  const dropped = await dropStaleTestDatabases();
  if (dropped.length > 0) console.log(`dropped ${dropped.length} stale test database(s): ${dropped.join(", ")}`);
}
