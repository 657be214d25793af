import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, TestDatabaseError, type TestDatabase, type TestDatabaseOptions } from "./testing";

// Kept apart from db/testing.ts because that module is also loaded by Playwright (e2e/) and by
// scripts run with tsx, where importing vitest would fail or clash with Playwright's own expect.

/**
 * The suite's database, for use inside a `describe.skipIf(skipWithoutDatabase())(...)`: registers
 * a beforeAll that creates it and an afterAll that drops it, and returns an object whose fields
 * read the live database. Call it before the suite's own hooks, so its database exists in their
 * beforeAll and is dropped only after their afterAll (Vitest runs after-hooks in reverse order).
 */
export function useTestDatabase(label: string, options?: TestDatabaseOptions): TestDatabase {
  let current: TestDatabase | undefined;
  beforeAll(async () => {
    current = await createTestDatabase(label, options);
  });
  afterAll(async () => {
    // Undefined when the beforeAll failed: that failure is the one to report.
    await current?.drop();
  });
  const live = (): TestDatabase => {
    if (!current) throw new TestDatabaseError(`the test database "${label}" is used before its beforeAll created it (or after that failed)`);
    return current;
  };
  return {
    get name() {
      return live().name;
    },
    get url() {
      return live().url;
    },
    get database() {
      return live().database;
    },
    get db() {
      return live().db;
    },
    get ownerDb() {
      return live().ownerDb;
    },
    drop: () => live().drop(),
  };
}
