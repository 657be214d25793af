import { describe, expect, it } from "vitest";
import { databaseUrl, hasTestDatabase, TestDatabaseError, testDatabaseCreatedAt } from "./testing";

const url = "postgres://postgres@127.0.0.1:5432/ceilings_ci";

describe("hasTestDatabase", () => {
  it("is true whenever TEST_DATABASE_URL is set, on CI or not", () => {
    expect(hasTestDatabase({ TEST_DATABASE_URL: url, CI: undefined })).toBe(true);
    expect(hasTestDatabase({ TEST_DATABASE_URL: url, CI: "true" })).toBe(true);
  });

  it("lets a developer without Postgres skip the integration suites", () => {
    expect(hasTestDatabase({ TEST_DATABASE_URL: undefined, CI: undefined })).toBe(false);
    expect(hasTestDatabase({ TEST_DATABASE_URL: undefined, CI: "false" })).toBe(false);
  });

  it("fails on CI without TEST_DATABASE_URL: a skipped Postgres suite is never a quiet pass", () => {
    expect(() => hasTestDatabase({ TEST_DATABASE_URL: undefined, CI: "true" })).toThrow(TestDatabaseError);
    expect(() => hasTestDatabase({ TEST_DATABASE_URL: undefined, CI: "1" })).toThrow(TestDatabaseError);
  });
});

it("points a URL at another database on the same server, keeping credentials and options", () => {
  expect(databaseUrl("postgres://u:p%40ss@db.internal:6543/main?sslmode=require", "ceilings_t_x")).toBe(
    "postgres://u:p%40ss@db.internal:6543/ceilings_t_x?sslmode=require",
  );
});

it("reads the creation time back from a test database name, and ignores names that are not ours", () => {
  const at = new Date("2025-06-01T12:00:00.000Z");
  expect(testDatabaseCreatedAt(`ceilings_t_seed_run_${at.getTime().toString(36)}_0a1b2c3d`)).toEqual(at);
  expect(testDatabaseCreatedAt("ceilings_ci")).toBeUndefined();
  expect(testDatabaseCreatedAt("ceilings_t_manual")).toBeUndefined();
});
