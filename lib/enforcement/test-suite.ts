import { afterAll, beforeAll } from "vitest";
import type { Db } from "@/db/client";
import type { TestDatabase } from "@/db/testing";
import type { BatcherOptions } from "./batcher";
import { batcherFor } from "./reserve";
import { openPools, PATIENT } from "./test-fixtures";

// Kept apart from test-fixtures.ts, which fixture scripts load outside Vitest (startFixtureProcess).

/**
 * For suites that race reservations from several "processes": in beforeAll, gives the suite's own
 * pool the patient batcher and opens `count` more pools of `max` connections, each with a batcher
 * of its own; closes them in afterAll. Call it after useTestDatabase, so the pools close first.
 */
export function useRacingPools(t: TestDatabase, count: number, max: number, options?: Partial<BatcherOptions>): { readonly dbs: Db[] } {
  let pools: ReturnType<typeof openPools> | undefined;
  beforeAll(() => {
    batcherFor(t.db, PATIENT);
    pools = openPools(t.url, count, max, options);
  });
  afterAll(async () => {
    await pools?.close();
  });
  return {
    get dbs() {
      if (!pools) throw new Error("the racing pools are used before their beforeAll opened them");
      return pools.dbs;
    },
  };
}
