import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Db, resultRows } from "@/db/client";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";

// A reservation names its endpoint without a foreign key (0043: the key's per-row lock on the
// endpoint made a multixact of every batch). What the key promised still holds: an endpoint with
// reservations cannot be deleted, not even while a batch that writes its first one is in flight.

async function reserveOne(db: Db, endpoint: string): Promise<string> {
  const [row] = resultRows<{ a: { status: string; reservationId: string }[] }>(
    await db.execute(sql`select ceilings.reserve_batch(${JSON.stringify([{ endpoint, amount: 1 }])}::jsonb) as a`),
  );
  const answer = row?.a[0];
  if (answer?.status !== "granted") throw new Error(`not granted: ${JSON.stringify(answer)}`);
  return answer.reservationId;
}

async function deleteEndpoint(db: Db, id: number): Promise<unknown> {
  return db.execute(sql`delete from endpoints where id = ${id}`);
}

async function sqlState(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
    return undefined;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? (error as { code?: string }).code;
  }
}

describe.skipIf(skipWithoutDatabase())("reservations keep their endpoint", () => {
  const t = useTestDatabase("reservation_endpoint");
  const spec = { ceilings: [{ metric: "calls" as const, scope: "global" as const, window: "utc_day" as const, value: 100 }] };

  it("refuses to delete an endpoint with a reservation, as the foreign key did, and deletes one without", async () => {
    const kept = await makeEndpoint(t.ownerDb, spec);
    const id = await reserveOne(t.db, kept.key);
    expect(await sqlState(deleteEndpoint(t.ownerDb, kept.endpointId))).toBe("23503");
    const left = resultRows<{ n: number }>(await t.ownerDb.execute(sql`select count(*)::int as n from reservations where id = ${id}`));
    expect(left).toEqual([{ n: 1 }]);

    const unused = await makeEndpoint(t.ownerDb, spec);
    expect(await sqlState(deleteEndpoint(t.ownerDb, unused.endpointId))).toBeUndefined();
  });

  it("a delete waits for a batch in flight and then sees the reservation it wrote", async () => {
    const { key, endpointId } = await makeEndpoint(t.ownerDb, spec);
    // The batch has written the endpoint's first reservation and has not committed.
    const batch = await holdTransaction(t.db, (tx) => reserveOne(tx, key));
    let settled = false;
    const deleting = sqlState(deleteEndpoint(t.ownerDb, endpointId)).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    await batch.release();
    expect(await deleting).toBe("23503");
    const left = resultRows<{ n: number }>(
      await t.ownerDb.execute(sql`select count(*)::int as n from reservations r join endpoints e on e.id = r.endpoint_id where e.id = ${endpointId}`),
    );
    expect(left).toEqual([{ n: 1 }]);
  });
});
