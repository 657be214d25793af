import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve, ReservationInputError } from "@/lib/enforcement";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";

const COOLDOWN = { metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 86_400, value: 1 } as const;
const BUDGET = { metric: "units", scope: "global", window: "utc_day", value: 1000 } as const;

describe.skipIf(skipWithoutDatabase())("reserve folds destinations to canonical identities for the cooldown", () => {
  const t = useTestDatabase("canonical_cooldown");

  it("gives one send to every alias of one gmail inbox, and keeps the original for delivery", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [BUDGET, COOLDOWN] });
    const aliases = ["J.Doe+news@GoogleMail.com", "jdoe@gmail.com", "j.d.o.e@gmail.com", " JDOE+x@googlemail.com ", "jdoe+y@gmail.com"];
    const decisions = [];
    for (const destination of aliases) decisions.push(await reserve(t.db, { endpoint: e.key, amount: 1, destination }));
    expect(decisions.map((d) => (d.status === "refused" ? d.gate : d.status))).toEqual(["granted", "cooldown", "cooldown", "cooldown", "cooldown"]);

    const [row] = resultRows(await t.db.execute(sql`select destination, destination_key from reservations where endpoint_id = ${e.endpointId}`));
    expect(row).toEqual({ destination: "J.Doe+news@GoogleMail.com", destination_key: "jdoe@gmail.com" });
    // The refusals are logged under the canonical identity, so staff see one inbox, not five.
    const refusals = resultRows(
      await t.db.execute(sql`select destination, sum(count)::int as n from refusals where endpoint_id = ${e.endpointId} group by destination`),
    );
    expect(refusals).toEqual([{ destination: "jdoe@gmail.com", n: 4 }]);
  });

  it("folds phone numbers to E.164 and keeps distinct inboxes apart", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [BUDGET, COOLDOWN] });
    const first = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "(415) 555-2671" });
    const again = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "+1 415-555-2671" });
    const other = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "jane.doe@example.com" });
    const dotted = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "janedoe@example.com" });
    expect([first.status, again.status === "refused" && again.gate, other.status, dotted.status]).toEqual(["granted", "cooldown", "granted", "granted"]);
  });

  it("uses a destinationKey the caller already computed as it is", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [BUDGET, COOLDOWN] });
    const a = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "a+1@gmail.com", destinationKey: "key-1" });
    const b = await reserve(t.db, { endpoint: e.key, amount: 1, destination: "a+2@gmail.com", destinationKey: "key-2" });
    expect([a.status, b.status]).toEqual(["granted", "granted"]);
  });

  it.each(["jane@", "not an address@example.com", "555-0100"])("refuses to reserve for %j: invalid_destination, nothing charged", async (destination) => {
    const e = await makeEndpoint(t.db, { ceilings: [BUDGET, COOLDOWN] });
    const error = await reserve(t.db, { endpoint: e.key, amount: 1, destination }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ReservationInputError);
    expect(error instanceof ReservationInputError && error.code).toBe("invalid_destination");
    const [row] = resultRows(await t.db.execute(sql`select count(*)::int as n from reservations where endpoint_id = ${e.endpointId}`));
    expect(row).toEqual({ n: 0 });
  });
});
