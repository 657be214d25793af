import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { batcherFor, reserve } from "./reserve";
import { expireReservations, releaseReservation, settleReservation } from "./resolve";
import { counterTotals, makeEndpoint, PATIENT } from "./test-fixtures";
import { ReservationInputError } from "./types";

// Bounded settle: an overrun is charged and alerted, never dropped (also after expiry or
// release), and nothing is charged above the per-call max.

describe.skipIf(skipWithoutDatabase())("overruns", () => {
  const t = useTestDatabase("overrun", { max: 6 });

  beforeAll(async () => {
    batcherFor(t.db, PATIENT);
  });

  async function setup() {
    const e = await makeEndpoint(t.db, {
      perCallMax: 100,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 10_000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 10_000 },
      ],
    });
    const d = await reserve(t.db, { endpoint: e.key, amount: 10, caller: "acct_liar" });
    if (d.status !== "granted") throw new Error("expected a grant");
    const totals = async () => ({
      units: await counterTotals(t.db, e.ceilingIds[0] ?? 0),
      calls: await counterTotals(t.db, e.ceilingIds[1] ?? 0),
    });
    return { e, id: d.reservationId, totals };
  }

  async function reservation(id: string) {
    const rows = resultRows<{ state: string; overrun: boolean; settled_amount: number | null }>(
      await t.db.execute(sql`select state::text as state, overrun, settled_amount::int as settled_amount from reservations where id = ${id}`),
    );
    return rows[0];
  }

  async function overrunAlerts(endpointId: number) {
    return resultRows<{ message: string; caller: string }>(
      await t.db.execute(sql`select message, details->>'caller' as caller from alerts where kind = 'overrun' and endpoint_id = ${endpointId}`),
    );
  }

  it("refuses an actual above the per-call max as invalid_actual and leaves the reservation as it was", async () => {
    const { id, totals } = await setup();
    const before = await totals();
    const attempt = settleReservation(t.db, { reservationId: id, actual: Number.MAX_SAFE_INTEGER });
    await expect(attempt).rejects.toBeInstanceOf(ReservationInputError);
    await expect(settleReservation(t.db, { reservationId: id, actual: 101 })).rejects.toMatchObject({ code: "invalid_actual" });
    expect(await reservation(id)).toEqual({ state: "held", overrun: false, settled_amount: null });
    expect(await totals()).toEqual(before);
  });

  it("charges an overrun within the per-call max, flags it and raises an alert naming the caller", async () => {
    const { e, id, totals } = await setup();
    expect(await settleReservation(t.db, { reservationId: id, actual: 100 })).toMatchObject({ status: "settled", overrun: true });
    expect(await totals()).toEqual({ units: { held: 0, settled: 100 }, calls: { held: 0, settled: 1 } });
    expect(await reservation(id)).toEqual({ state: "settled", overrun: true, settled_amount: 100 });
    const alerts = await overrunAlerts(e.endpointId);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.caller).toBe("acct_liar");
    expect(alerts[0]?.message).toContain("caller acct_liar settled a reservation at 100, above the 10 reserved");
  });

  it("records an overrun reported after expiry in the reservation's window, once", async () => {
    const { e, id, totals } = await setup();
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where id = ${id}`);
    expect(await expireReservations(t.db)).toBe(1);
    expect(await totals()).toEqual({ units: { held: 0, settled: 10 }, calls: { held: 0, settled: 1 } });
    const first = await settleReservation(t.db, { reservationId: id, actual: 45 });
    expect(first).toMatchObject({ status: "already_resolved", state: "expired", overrun: true, charged: 35 });
    expect(await totals()).toEqual({ units: { held: 0, settled: 45 }, calls: { held: 0, settled: 1 } });
    // Reported again (a retry): charged once.
    expect(await settleReservation(t.db, { reservationId: id, actual: 45 })).toMatchObject({ status: "already_resolved", replay: true });
    expect(await totals()).toEqual({ units: { held: 0, settled: 45 }, calls: { held: 0, settled: 1 } });
    expect(await reservation(id)).toEqual({ state: "expired", overrun: true, settled_amount: 45 });
    expect((await overrunAlerts(e.endpointId))[0]?.message).toContain("after it was expired");
    // Within the reservation: nothing to record, as before.
    const other = await reserve(t.db, { endpoint: e.key, amount: 10, caller: "acct_liar" });
    if (other.status !== "granted") throw new Error("expected a grant");
    await t.db.execute(sql`update reservations set expires_at = now() - interval '1 second' where id = ${other.reservationId}`);
    await expireReservations(t.db);
    expect(await settleReservation(t.db, { reservationId: other.reservationId, actual: 4 })).toMatchObject({ status: "already_resolved", state: "expired" });
  });

  it("records an overrun reported after release: the units and the call count again", async () => {
    const { id, totals } = await setup();
    await releaseReservation(t.db, { reservationId: id });
    expect(await totals()).toEqual({ units: { held: 0, settled: 0 }, calls: { held: 0, settled: 0 } });
    expect(await settleReservation(t.db, { reservationId: id, actual: 45 })).toMatchObject({ status: "already_resolved", state: "released", charged: 45 });
    expect(await totals()).toEqual({ units: { held: 0, settled: 45 }, calls: { held: 0, settled: 1 } });
  });
});
