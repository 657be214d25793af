import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, migrateDatabase, openPglite } from "@/db/client";
import { endpoints } from "@/db/schema";
import { seedDemoIfEmpty } from "@/db/seed";
import { dailySpend, monthToDate, overviewTrends } from "./index";

// The dashboard runs on PGlite by default, whose drivers return integers and JSON in their own
// types: the spend queries must read the same there. Exact numbers are tested on Postgres.
const NOW = new Date("2025-03-20T12:00:00Z");
let database: Database;

beforeAll(async () => {
  database = await openPglite("memory://");
  await migrateDatabase(database);
  await seedDemoIfEmpty(database.db, { log: () => {}, bcryptCost: 4, now: NOW });
}, 120_000);

afterAll(async () => {
  await database.close();
});

it("reads the seeded demo on the embedded database", async () => {
  const [webhook] = await database.db.select({ id: endpoints.id }).from(endpoints).where(eq(endpoints.key, "webhook.notify"));
  if (!webhook) throw new Error("demo endpoint missing");
  const daily = await dailySpend(database.db, { endpointId: webhook.id, days: 30, now: NOW });
  expect(daily.days).toHaveLength(30);
  expect(daily.days[29]?.day).toBe("2025-03-20");
  expect(daily.days.every((d) => Number.isInteger(d.units) && d.ceiling === 10_000)).toBe(true);
  // Killed for 45 minutes eight days ago (db/demo/incidents.ts).
  expect(daily.kills).toEqual([{ start: Date.parse("2025-03-12T14:05:00Z"), end: Date.parse("2025-03-12T14:50:00Z") }]);
  expect(daily.totalMoneyMicros).toBe(daily.totalUnits * 100);

  const month = await monthToDate(database.db, { endpointId: webhook.id, now: NOW });
  expect([month.start, month.end, month.days.length]).toEqual(["2025-03-15", "2025-04-15", 31]);
  expect(month.days[5]?.cumulativeUnits).toBe(month.spentUnits);

  const trends = await overviewTrends(database.db, { now: NOW });
  expect(trends.size).toBe(4);
  expect(trends.get(webhook.id)?.points).toHaveLength(14);
}, 60_000);
