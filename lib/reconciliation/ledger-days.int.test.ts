import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { reservationDays } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { pricedEndpoint, reservation, resolveReservation } from "./compare-fixtures";
import { LEDGER_DAYS_EVERY_MS, rollUpLedgerDays } from "./ledger-days";
import { readinessOf } from "./readiness";

const NOW = new Date("2026-11-14T12:00:00Z");
const HOUR = 3_600_000;
const CENT = 10_000;

describe.skipIf(skipWithoutDatabase())("the ledger per endpoint and UTC day (ledger-days)", () => {
  const t = useTestDatabase("recon_ledger_days");

  const at = (iso: string) => new Date(iso);
  const daysOf = async (endpointId: number) =>
    (await t.db.select().from(reservationDays).where(eq(reservationDays.endpointId, endpointId))).sort((a, b) => a.day.localeCompare(b.day));

  it("counts each endpoint's reservations per UTC day by how they ended, the last 8 days, and recounts them on the next run", async () => {
    const a = await pricedEndpoint(t.db);
    const b = await pricedEndpoint(t.db);
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T00:00:00Z"), state: "settled", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T23:59:59Z"), state: "released", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-13T12:00:00Z"), state: "expired", amount: 1, money: CENT });
    const held = await reservation(t.db, { endpointId: a.id, at: at("2026-11-14T11:00:00Z"), state: "held", amount: 1, money: CENT });
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-07T00:00:00Z"), state: "settled", amount: 1, money: CENT }); // the 8th day back
    await reservation(t.db, { endpointId: a.id, at: at("2026-11-06T23:59:59Z"), state: "settled", amount: 1, money: CENT }); // before: not counted
    await reservation(t.db, { endpointId: b.id, at: at("2026-11-10T05:00:00Z"), state: "expired", amount: 1, money: CENT });

    expect(await rollUpLedgerDays(t.db, NOW)).toEqual({ from: "2026-11-07", rows: 4 });
    const rows = await daysOf(a.id);
    expect(rows.map(({ day, reservations, settled, released, expired, held }) => ({ day, reservations, settled, released, expired, held }))).toEqual([
      { day: "2026-11-07", reservations: 1, settled: 1, released: 0, expired: 0, held: 0 },
      { day: "2026-11-13", reservations: 3, settled: 1, released: 1, expired: 1, held: 0 },
      { day: "2026-11-14", reservations: 1, settled: 0, released: 0, expired: 0, held: 1 },
    ]);
    expect(rows.every((r) => r.computedAt.getTime() === NOW.getTime())).toBe(true);
    expect(await daysOf(b.id)).toMatchObject([{ day: "2026-11-10", reservations: 1, expired: 1 }]);

    // The held one settles: the next run recounts its day in place.
    await resolveReservation(t.db, held, "settled");
    const later = new Date(NOW.getTime() + LEDGER_DAYS_EVERY_MS);
    await rollUpLedgerDays(t.db, later);
    expect((await daysOf(a.id)).find((r) => r.day === "2026-11-14")).toMatchObject({ reservations: 1, settled: 1, held: 0, computedAt: later });
  });

  it("is one statement whatever the number of endpoints", async () => {
    for (let i = 0; i < 5; i++) {
      const e = await pricedEndpoint(t.db);
      await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - i * HOUR), state: "settled", amount: 1, money: CENT });
    }
    let statements = 0;
    const counting = new Proxy(t.db, {
      get: (target, prop, receiver) => {
        if (prop === "select" || prop === "selectDistinct" || prop === "execute" || prop === "insert" || prop === "update" || prop === "transaction") statements += 1;
        return Reflect.get(target, prop, receiver);
      },
    });
    await rollUpLedgerDays(counting, NOW);
    expect(statements).toBe(1);
  });

  it("readiness' settle discipline is the rollup's last 7 UTC days, with 'as of' once it is older than a run", async () => {
    const e = await pricedEndpoint(t.db);
    for (let i = 0; i < 96; i++) await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - (i + 1) * HOUR), state: "settled", amount: 1, money: CENT });
    for (let i = 0; i < 4; i++) await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - (i + 1) * HOUR), state: "expired", amount: 1, money: CENT });
    // The 8th UTC day back is rolled up but outside readiness' 7 days.
    await reservation(t.db, { endpointId: e.id, at: at("2026-11-07T10:00:00Z"), state: "expired", amount: 1, money: CENT });
    const settled = async (now: Date) => (await readinessOf(t.db, { endpointIds: [e.id], now })).get(e.id)?.settled;

    // Before any rollup, nothing is counted: readiness never reads the reservations.
    expect((await settled(NOW))?.figure).toBe("no reservations");
    await rollUpLedgerDays(t.db, NOW);
    expect(await settled(NOW)).toMatchObject({ color: "amber", figure: "4 expired of 100" });
    // A reservation after the rollup waits for the next run.
    await reservation(t.db, { endpointId: e.id, at: new Date(NOW.getTime() - HOUR), state: "expired", amount: 1, money: CENT });
    expect((await settled(NOW))?.figure).toBe("4 expired of 100");
    // The worker stopped: 20 minutes later the figure says when it was counted.
    expect((await settled(new Date(NOW.getTime() + 20 * 60_000)))?.figure).toBe("4 expired of 100 as of 12:00 UTC");
    await rollUpLedgerDays(t.db, new Date(NOW.getTime() + 20 * 60_000));
    expect((await settled(new Date(NOW.getTime() + 20 * 60_000)))?.figure).toBe("5 expired of 101");
  });
});
