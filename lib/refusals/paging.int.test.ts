import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";
import { refusalCsvChunks } from "./export";
import { KeysetCursor } from "@/lib/keyset";
import { RefusalFilters } from "./filters";
import { listRefusals } from "./list";
import { purgeOldRefusals } from "./purge";
import { insertRefusals, minutesAgo } from "./test-fixtures";

describe.skipIf(skipWithoutDatabase())("refusal paging, export and purge on real Postgres", () => {
  const t = useTestDatabase("refusal_paging");

  it("pages older without skipping or repeating rows while newer refusals arrive", async () => {
    const ep = await createEndpoint(t.db);
    const base = new Date();
    const e = { endpointId: ep.endpointId, endpointKey: ep.key };
    // Three rows share one instant: only the id tells them apart, as in one reserve batch.
    const tied = minutesAgo(base, 30);
    const original = await insertRefusals(t.db, [
      ...Array.from({ length: 20 }, (_, i) => ({ ...e, at: minutesAgo(base, 60 + i) })),
      { ...e, at: tied },
      { ...e, at: tied },
      { ...e, at: tied },
    ]);
    const filters = RefusalFilters.parse({ endpoint: ep.key });
    const seen: number[] = [];
    let before: KeysetCursor | undefined;
    for (let page = 0; page < 10; page += 1) {
      const result = await listRefusals(t.db, { filters, position: { before }, limit: 4 });
      seen.push(...result.rows.map((r) => r.id));
      // New refusals land between page fetches, as they do while someone reads the log.
      await insertRefusals(t.db, [
        { ...e, at: new Date() },
        { ...e, at: new Date() },
      ]);
      if (!result.older) break;
      before = KeysetCursor.parse(result.older);
    }
    const tiedIds = original.slice(20).sort((a, b) => b - a);
    const expected = [...tiedIds, ...original.slice(0, 20)];
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("pages newer from a cursor and back to the top", async () => {
    const ep = await createEndpoint(t.db);
    const e = { endpointId: ep.endpointId, endpointKey: ep.key };
    const base = new Date();
    const ids = await insertRefusals(
      t.db,
      Array.from({ length: 7 }, (_, i) => ({ ...e, at: minutesAgo(base, 10 + i) })),
    );
    const filters = RefusalFilters.parse({ endpoint: ep.key });
    const first = await listRefusals(t.db, { filters, limit: 3 });
    expect(first.rows.map((r) => r.id)).toEqual(ids.slice(0, 3));
    expect(first.newer).toBeNull();
    const second = await listRefusals(t.db, { filters, position: { before: KeysetCursor.parse(first.older ?? "") }, limit: 3 });
    expect(second.rows.map((r) => r.id)).toEqual(ids.slice(3, 6));
    const third = await listRefusals(t.db, { filters, position: { before: KeysetCursor.parse(second.older ?? "") }, limit: 3 });
    expect(third.rows.map((r) => r.id)).toEqual(ids.slice(6));
    expect(third.older).toBeNull();
    const back = await listRefusals(t.db, { filters, position: { after: KeysetCursor.parse(third.newer ?? "") }, limit: 3 });
    expect(back.rows.map((r) => r.id)).toEqual(ids.slice(3, 6));
    const top = await listRefusals(t.db, { filters, position: { after: KeysetCursor.parse(back.newer ?? "") }, limit: 3 });
    expect(top.rows.map((r) => r.id)).toEqual(ids.slice(0, 3));
    expect(top.newer).toBeNull();
  });

  it("exports every filtered row in keyset batches, masked or in full", async () => {
    const ep = await createEndpoint(t.db);
    const e = { endpointId: ep.endpointId, endpointKey: ep.key };
    const base = new Date();
    await insertRefusals(
      t.db,
      Array.from({ length: 11 }, (_, i) => ({ ...e, at: minutesAgo(base, i), caller: "acct_7h3k9q89", destination: `maria.${i}@example.com` })),
    );
    const filters = RefusalFilters.parse({ endpoint: ep.key });
    const collect = async (mask: boolean) => {
      let text = "";
      for await (const chunk of refusalCsvChunks(t.db, { filters, mask, batchSize: 4 })) text += chunk;
      return text.trimEnd().split("\r\n");
    };
    const masked = await collect(true);
    expect(masked[0]).toBe("id,at,last_at,endpoint,gate,count,caller,destination,amount,remaining,ceiling_id,request_id,detail");
    expect(masked).toHaveLength(12);
    expect(masked.join("\n")).not.toContain("maria.");
    expect(masked.join("\n")).not.toContain("acct_7h3k9q89");
    expect(masked[1]).toContain("acct_***89,m***@e***.com");
    const full = await collect(false);
    expect(full[1]).toContain("acct_7h3k9q89,maria.0@example.com");
    expect(full.slice(1).map((l) => l.split(",")[7])).toEqual(Array.from({ length: 11 }, (_, i) => `maria.${i}@example.com`));
  });

  it("purges only refusals past the retention age, in batches", async () => {
    const ep = await createEndpoint(t.db);
    const e = { endpointId: ep.endpointId, endpointKey: ep.key };
    const now = new Date();
    const day = 86_400_000;
    await insertRefusals(
      t.db,
      Array.from({ length: 23 }, (_, i) => ({ ...e, at: new Date(now.getTime() - (91 + i) * day) })),
    );
    const kept = await insertRefusals(t.db, [
      { ...e, at: new Date(now.getTime() - 89 * day) },
      { ...e, at: new Date(now.getTime() - 60_000) },
    ]);
    const before = await t.db.execute(sql`select count(*)::int as n from refusals where endpoint_id = ${ep.endpointId}`);
    expect(before).toEqual([{ n: 25 }]);
    const limited = await purgeOldRefusals(t.db, { olderThanDays: 90, batchSize: 5, maxBatches: 2, now });
    expect(limited).toBe(10);
    const rest = await purgeOldRefusals(t.db, { olderThanDays: 90, batchSize: 5, now });
    expect(rest).toBe(13);
    const left = await t.db.execute(sql`select id::int as id from refusals where endpoint_id = ${ep.endpointId} order by id`);
    expect(left).toEqual(kept.map((id) => ({ id })));
    expect(await purgeOldRefusals(t.db, { olderThanDays: 90, now })).toBe(0);
    await expect(purgeOldRefusals(t.db, { olderThanDays: 0 })).rejects.toThrow(/olderThanDays/);
  });
});
