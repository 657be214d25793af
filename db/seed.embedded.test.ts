import { count } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, migrateDatabase, openPglite } from "./client";
import { endpoints, refusals, staff, usage } from "./schema";
import { seedDemoIfEmpty } from "./seed";

// The embedded database is what the README's first command runs on: the seed must work on PGlite
// too, without TEST_DATABASE_URL. Race behaviour is tested on Postgres (seed.int.test.ts).
let database: Database;
const lines: string[] = [];

beforeAll(async () => {
  database = await openPglite("memory://");
  await migrateDatabase(database);
}, 120_000);

afterAll(async () => {
  await database.close();
});

it("seeds the embedded database once, printing the demo credentials", async () => {
  const log = (line: string) => lines.push(line);
  expect(await seedDemoIfEmpty(database.db, { log, bcryptCost: 4, dataDir: ".data" })).toBe(true);
  expect(await seedDemoIfEmpty(database.db, { log, bcryptCost: 4 })).toBe(false);

  const n = async (table: typeof endpoints | typeof usage | typeof refusals | typeof staff) =>
    (await database.db.select({ n: count() }).from(table))[0]?.n;
  expect(await n(endpoints)).toBe(4);
  expect(await n(staff)).toBe(3);
  expect(await n(usage)).toBeGreaterThan(500);
  expect(await n(refusals)).toBeGreaterThan(200);

  const printed = lines.join("\n");
  expect(printed).toContain("admin@ceilings.local");
  expect(printed).toContain('"ceilings-demo"');
}, 60_000);
