import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { callReserveBatch } from "./batcher";
import { callResolveBatch } from "./resolve-batcher";
import { batcherFor } from "./reserve";
import { counterTotals, makeEndpoint, PATIENT } from "./test-fixtures";

// resolve_batch decides each settle and release alone, in order, and updates each counter once for
// the whole batch with the sum of the items' changes: a hot counter gets one new row version a
// batch, not one an item, and is held for one update.

describe.skipIf(skipWithoutDatabase())("resolve_batch updates each counter once", () => {
  const t = useTestDatabase("resolve_once", { max: 4 });

  beforeAll(async () => {
    batcherFor(t.db, PATIENT);
    // This suite's database only: every update of a counter row, counted.
    await t.ownerDb.execute(sql`create table usage_updates (ceiling_id int not null)`);
    await t.ownerDb.execute(sql`
      create function note_usage_update() returns trigger language plpgsql as $$
      begin insert into usage_updates select id from ceilings where limit_id = new.limit_id; return new; end $$`);
    await t.ownerDb.execute(sql`create trigger note_usage_update after update on counters for each row execute function note_usage_update()`);
    await t.ownerDb.execute(sql`grant insert, select on usage_updates to public`);
  });

  const updatesOf = async (ceilingIds: number[]) =>
    resultRows<{ n: number }>(
      await t.db.execute(sql`select count(*)::int as n from usage_updates where ceiling_id = any(${`{${ceilingIds.join(",")}}`}::int[])`),
    )[0]?.n;

  it("settles, releases and settles again in one batch, each decided alone, with one update per counter", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1_000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 1_000 },
      ],
    });
    const granted = await callReserveBatch(
      t.db,
      Array.from({ length: 12 }, () => ({ endpoint: e.key, amount: 10 })),
    );
    const ids = granted.map((a) => (a.status === "granted" ? a.reservationId : ""));
    expect(ids.every((id) => id !== "")).toBe(true);
    await t.ownerDb.execute(sql`delete from usage_updates`);
    const answers = await callResolveBatch(t.db, [
      ...ids.slice(0, 8).map((id, i) => ({ id, verb: "settle" as const, actual: i })),
      ...ids.slice(8).map((id) => ({ id, verb: "release" as const })),
      // The same reservation again: decided after the first, as its replay.
      { id: ids[0] ?? "", verb: "settle" as const, actual: 0 },
      { id: ids[8] ?? "", verb: "release" as const },
    ]);
    expect(answers.map((a) => `${a.status}${"replay" in a && a.replay ? " (replay)" : ""}`)).toEqual([
      ...Array.from({ length: 8 }, () => "settled"),
      ...Array.from({ length: 4 }, () => "released"),
      "settled (replay)",
      "released (replay)",
    ]);
    // 0 + 1 + ... + 7 units settled; 8 calls stay counted, the 4 released are given back.
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 28 });
    expect(await counterTotals(t.db, e.ceilingIds[1] ?? 0)).toEqual({ held: 0, settled: 8 });
    expect(await updatesOf(e.ceilingIds)).toBe(2);
  });
});
