import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type BatchRequest, callReserveBatch, ReservationBatcher } from "./batcher";
import { reserve } from "./reserve";
import { countRows, makeEndpoint } from "./test-fixtures";
import { type BatchAnswer, ReservationInputError } from "./types";

// Batches share no fate: one request the database cannot take is that request's problem alone.
// The batcher is driven directly (not through reserve's zod parse) so the bad requests really
// reach the database, as they would from a caller that skipped the library's checks.

describe.skipIf(skipWithoutDatabase())("batch isolation", () => {
  const t = useTestDatabase("isolation", { max: 6 });
  let key: string;

  beforeAll(async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1_000_000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 1_000_000 },
      ],
    });
    key = e.key;
    // A forced failure the boundary cannot see: the reservation insert raises for one caller.
    await t.ownerDb.execute(sql`create function poison_reservation() returns trigger language plpgsql as $$
      begin
        if new.caller like 'poison%' then raise exception 'poisoned reservation for %', new.caller; end if;
        return new;
      end $$`);
    await t.ownerDb.execute(sql`create trigger poison before insert on reservations for each row execute function poison_reservation()`);
  });

  function batch(): { requests: BatchRequest[]; poisoned: Set<number> } {
    const requests: BatchRequest[] = [];
    const poisoned = new Set<number>();
    for (let i = 0; i < 65; i++) {
      if (i % 13 === 6) {
        poisoned.add(i);
        // Three NULs (the jsonb cast of the whole batch fails) and two trigger failures.
        const caller = poisoned.size <= 3 ? `acct_nul\u0000${i}` : `poison_${i}`;
        requests.push({ endpoint: key, amount: 1, caller });
      } else {
        requests.push({ endpoint: key, amount: 1, caller: i % 2 ? "acct_a" : "acct_b" });
      }
    }
    return { requests, poisoned };
  }

  async function runOneBatch(split: boolean): Promise<{ answers: BatchAnswer[]; poisoned: Set<number> }> {
    const pool = openPostgres(t.url, { max: 2 });
    try {
      const batcher = new ReservationBatcher(pool.db, { deadlineMs: 30_000, maxBatch: 128, maxInFlight: 1, split });
      const { requests, poisoned } = batch();
      // Submitted in one turn of the event loop: one batch of 65.
      const answers = await Promise.all(requests.map((r) => batcher.submit(r)));
      await batcher.close();
      return { answers, poisoned };
    } finally {
      await pool.close();
    }
  }

  it("decides all 60 valid requests and refuses exactly the 5 poisoned ones", async () => {
    const { answers, poisoned } = await runOneBatch(true);
    const valid = answers.filter((_, i) => !poisoned.has(i));
    const bad = answers.filter((_, i) => poisoned.has(i));
    expect(valid).toHaveLength(60);
    expect(valid.filter((a) => a.status === "granted")).toHaveLength(60);
    expect(bad).toHaveLength(5);
    expect(bad.every((a) => a.status === "refused" && a.gate === "unavailable")).toBe(true);
    // Their refusals are stored too, with the NUL replaced.
    await expect
      .poll(() => countRows(t.db, sql`select coalesce(sum(count), 0) as n from refusals where endpoint_key = ${key} and gate = 'unavailable'`))
      .toBe(5);
  });

  it("without splitting, the same batch fails all 65 (what the splitting is for)", async () => {
    const { answers } = await runOneBatch(false);
    expect(answers.filter((a) => a.status === "refused" && a.gate === "unavailable")).toHaveLength(65);
  });

  it("answers a request with control characters as an input error in SQL, its neighbours granted", async () => {
    const answers = await callReserveBatch(t.db, [
      { endpoint: key, amount: 1, caller: "acct_a" },
      { endpoint: key, amount: 1, caller: "acct\u0001b" },
      { endpoint: key, amount: 1, caller: "acct_b", idempotencyKey: "k\u001b" },
      { endpoint: key, amount: 1, caller: "acct_b" },
    ]);
    expect(answers.map((a) => (a.status === "error" ? a.code : a.status))).toEqual(["granted", "invalid_input", "invalid_input", "granted"]);
  });

  it("rejects control characters at the library's boundary, before any batch", async () => {
    for (const params of [
      { endpoint: key, amount: 1, caller: "acct\u0000x" },
      { endpoint: key, amount: 1, caller: "acct_a", idempotencyKey: "k\u0000" },
      { endpoint: key, amount: 1, caller: "acct_a", destination: "a@b.c\u0007" },
      { endpoint: `${key}\u0000`, amount: 1 },
    ]) {
      await expect(reserve(t.db, params)).rejects.toBeInstanceOf(ReservationInputError);
    }
  });
});
