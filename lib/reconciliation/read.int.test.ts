import { describe, expect, it, vi } from "vitest";
import type { Db } from "@/db/client";
import { budgets, endpoints, reconciliationDays, reservations, usageSourceRules, usageSources } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { eq } from "drizzle-orm";
import { dayBounds } from "./days";
import { endpointReconciliation, reconciliationGrid, reconciliationSources } from "./read";
import type { Drift } from "./types";

// drift.ts is compare's (written beside this); until both are in one tree the brief's definition
// stands in for it, and the real one is used as soon as it exists.
vi.mock("./drift", async (importOriginal) => {
  try {
    return await importOriginal();
  } catch {
    return {
      driftOf(billed: { units: number; micros: number }, charged: { units: number; micros: number }, t: { basisPoints: number; micros: number }): Drift {
        const diffUnits = billed.units - charged.units;
        const diffMicros = billed.micros - charged.micros;
        const money = billed.micros !== 0 || charged.micros !== 0;
        const top = money ? Math.max(billed.micros, charged.micros) : Math.max(billed.units, charged.units);
        const percent = top === 0 ? 0 : ((money ? diffMicros : diffUnits) / top) * 100;
        const over = Math.abs(percent) * 100 >= t.basisPoints && Math.abs(diffMicros) >= t.micros;
        return {
          diffUnits,
          diffMicros,
          percent,
          over,
          direction: diffMicros > 0 || (!money && diffUnits > 0) ? "billed_more" : diffMicros < 0 || diffUnits < 0 ? "charged_more" : "even",
        };
      },
    };
  }
});

const NOW = new Date("2026-03-10T12:00:00Z");
const MICROS = 1_000_000;

describe.skipIf(skipWithoutDatabase())("reconciliation reads", () => {
  const t = useTestDatabase("recon_read");
  let sources = 0;

  const endpoint = () => makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });

  async function source(owner: Db, over: Partial<typeof usageSources.$inferInsert> = {}) {
    sources += 1;
    const [s] = await owner
      .insert(usageSources)
      .values({ name: `src-${sources}`, kind: "openai", createdBy: "test", ...over })
      .returning();
    if (!s) throw new Error("no source");
    return s;
  }

  async function compared(
    owner: Db,
    p: {
      sourceId: number;
      endpointId?: number;
      budgetId?: number;
      day: string;
      zone?: string;
      billed: [number, number];
      charged: [number, number];
      held?: number;
    },
  ) {
    const { start, end } = dayBounds(p.day, p.zone ?? "UTC");
    await owner.insert(reconciliationDays).values({
      sourceId: p.sourceId,
      endpointId: p.endpointId ?? null,
      budgetId: p.budgetId ?? null,
      day: p.day,
      dayStart: start,
      dayEnd: end,
      billedUnits: p.billed[0],
      billedMicros: p.billed[1],
      billedMoney: "reported",
      chargedUnits: p.charged[0],
      chargedMicros: p.charged[1],
      heldReservations: p.held ?? 0,
    });
  }

  async function reserve(owner: Db, endpointId: number, at: string, state: "held" | "settled" | "released" | "expired", amount: number, settled?: number) {
    await owner.insert(reservations).values({
      endpointId,
      amount,
      money: amount * 10,
      state,
      settledAmount: settled ?? null,
      settledMoney: settled === undefined ? null : settled * 10,
      charges: [],
      createdAt: new Date(at),
      expiresAt: new Date(Date.parse(at) + 300_000),
    });
  }

  it("draws every day of 30 and 90, both lines only where compared: a day nothing compared is a gap in both", async () => {
    const e = await endpoint();
    const s = await source(t.ownerDb);
    await t.ownerDb.insert(usageSourceRules).values({ sourceId: s.id, match: "gpt-4o", endpointId: e.endpointId, createdBy: "test" });
    await compared(t.ownerDb, {
      sourceId: s.id,
      endpointId: e.endpointId,
      day: "2026-03-09",
      billed: [1000, 10 * MICROS],
      charged: [900, 9 * MICROS],
      held: 2,
    });
    await compared(t.ownerDb, { sourceId: s.id, endpointId: e.endpointId, day: "2026-03-07", billed: [0, 0], charged: [0, 0] });
    // 2026-03-08 has no comparison: its reservations are not read (a gap, not the ledger's numbers).
    await reserve(t.ownerDb, e.endpointId, "2026-03-08T01:00:00Z", "settled", 100, 120);
    await reserve(t.ownerDb, e.endpointId, "2026-03-08T02:00:00Z", "expired", 50);
    await reserve(t.ownerDb, e.endpointId, "2026-03-08T23:59:59Z", "held", 30);

    const r = await endpointReconciliation(t.db, { endpointId: e.endpointId, now: NOW });
    expect(r.source).toMatchObject({ id: s.id, name: s.name, kind: "openai", timeZone: "UTC", lastPullOkAt: null, lastPullError: null });
    expect(r.ranges[90].days).toHaveLength(90);
    expect(r.ranges[30].days).toHaveLength(30);
    expect(r.ranges[30].days[0]?.day).toBe("2026-02-08");
    // Today is not complete: never on the axis.
    expect(r.ranges[90].days.at(-1)?.day).toBe("2026-03-09");
    expect(r.ranges[30]).toMatchObject({ unit: "units", currency: "USD", timeZone: "UTC" });
    const byDay = new Map(r.ranges[30].days.map((d) => [d.day, d]));
    expect(byDay.get("2026-03-09")).toMatchObject({
      billedUnits: 1000,
      billedMicros: 10 * MICROS,
      chargedUnits: 900,
      chargedMicros: 9 * MICROS,
      held: 2,
      final: false,
    });
    expect(byDay.get("2026-03-09")?.drift).toMatchObject({ diffUnits: 100, diffMicros: MICROS, percent: 10, over: true, direction: "billed_more" });
    expect(byDay.get("2026-03-08")).toEqual({
      day: "2026-03-08",
      billedUnits: null,
      billedMicros: null,
      chargedUnits: null,
      chargedMicros: null,
      drift: null,
      held: 0,
      final: true,
    });
    expect(byDay.get("2026-03-07")).toMatchObject({ billedUnits: 0, chargedUnits: 0, drift: { percent: 0, over: false } });
    expect(byDay.get("2026-03-06")).toMatchObject({ billedUnits: null, chargedUnits: null, chargedMicros: null, held: 0 });
  });

  it("reads three statements, none of them on the reservations", async () => {
    const e = await endpoint();
    const s = await source(t.ownerDb);
    await t.ownerDb.insert(usageSourceRules).values({ sourceId: s.id, match: "gpt-4o-mini", endpointId: e.endpointId, createdBy: "test" });
    const statements: string[] = [];
    const counting = new Proxy(t.db, {
      get: (target, prop, receiver) => {
        if (prop === "select" || prop === "selectDistinct" || prop === "execute") statements.push(String(prop));
        return Reflect.get(target, prop, receiver);
      },
    });
    await endpointReconciliation(counting, { endpointId: e.endpointId, now: NOW });
    expect(statements).toHaveLength(3);
  });

  it("lays an endpoint's days out in its source's zone (New York): the last complete day there, and its comparison", async () => {
    const e = await endpoint();
    const s = await source(t.ownerDb, { kind: "file", timeZone: "America/New_York" });
    await t.ownerDb.insert(usageSourceRules).values({ sourceId: s.id, match: "emails", endpointId: e.endpointId, createdBy: "test" });
    await compared(t.ownerDb, { sourceId: s.id, endpointId: e.endpointId, zone: "America/New_York", day: "2026-03-08", billed: [6, 60], charged: [6, 60] });
    await compared(t.ownerDb, { sourceId: s.id, endpointId: e.endpointId, zone: "America/New_York", day: "2026-03-07", billed: [1, 10], charged: [1, 10] });
    // At 2026-03-10T03:00Z it is still 03-09 in New York: the last complete day there is 03-08.
    const r = await endpointReconciliation(t.db, { endpointId: e.endpointId, now: new Date("2026-03-10T03:00:00Z") });
    expect(r.ranges[30].timeZone).toBe("America/New_York");
    const days = r.ranges[30].days;
    expect(days.at(-1)).toMatchObject({ day: "2026-03-08", chargedUnits: 6, chargedMicros: 60 });
    expect(days.at(-2)).toMatchObject({ day: "2026-03-07", chargedUnits: 1 });
  });

  it("without any source: UTC days, both lines empty, and no source", async () => {
    const e = await endpoint();
    await reserve(t.ownerDb, e.endpointId, "2026-03-09T10:00:00Z", "settled", 3, 3);
    const r = await endpointReconciliation(t.db, { endpointId: e.endpointId, now: NOW });
    expect(r.source).toBeNull();
    expect(r.ranges[30].timeZone).toBe("UTC");
    expect(r.ranges[90].days.every((d) => d.billedUnits === null && d.chargedUnits === null && d.drift === null)).toBe(true);
    expect(r.ranges[30].days.at(-1)?.day).toBe("2026-03-09");
  });

  it("the grid: mapped endpoints and budgets with their 7 days (over first), then every live endpoint nothing maps", async () => {
    const over = await endpoint();
    const fine = await endpoint();
    const lonely = await endpoint();
    const archived = await endpoint();
    await t.ownerDb.update(endpoints).set({ archivedAt: NOW, archivedBy: "test" }).where(eq(endpoints.id, archived.endpointId));
    const [budget] = await t.ownerDb
      .insert(budgets)
      .values({ key: `grid.budget-${over.endpointId}`, name: "LLM", scope: "global", window: "utc_day", value: MICROS, maxValue: MICROS, defaultValue: MICROS })
      .returning();
    if (!budget) throw new Error("no budget");
    const utc = await source(t.ownerDb);
    const ny = await source(t.ownerDb, { kind: "file", timeZone: "America/New_York", lastPullError: "HTTP 500" });
    await t.ownerDb.insert(usageSourceRules).values([
      { sourceId: utc.id, match: "gpt-4o", endpointId: fine.endpointId, createdBy: "test" },
      { sourceId: ny.id, match: "emails", endpointId: over.endpointId, createdBy: "test" },
      { sourceId: utc.id, match: "claude*", budgetId: budget.id, createdBy: "test" },
    ]);
    await compared(t.ownerDb, { sourceId: utc.id, endpointId: fine.endpointId, day: "2026-03-09", billed: [100, 1000], charged: [100, 1000] });
    await compared(t.ownerDb, {
      sourceId: ny.id,
      endpointId: over.endpointId,
      zone: "America/New_York",
      day: "2026-03-09",
      billed: [1000, 10 * MICROS],
      charged: [900, 9 * MICROS],
    });
    await compared(t.ownerDb, { sourceId: utc.id, budgetId: budget.id, day: "2026-03-05", billed: [0, 5 * MICROS], charged: [0, 7 * MICROS], held: 2 });
    // Outside the 7 days: not shown.
    await compared(t.ownerDb, { sourceId: utc.id, endpointId: fine.endpointId, day: "2026-03-02", billed: [1, 1], charged: [0, 0] });

    const rows = await reconciliationGrid(t.db, { now: NOW });
    const ours = rows.filter((r) => [over.endpointId, fine.endpointId, lonely.endpointId, archived.endpointId].includes(r.id) || r.target === "budget");
    // `over` has a day over; the budget's day past the threshold still holds reservations: not
    // final, so not over (compare.ts has not alerted it), and it sorts with the days-over-free.
    expect(ours.map((r) => [r.target, r.key, r.source?.name ?? null, r.overDays])).toEqual([
      ["endpoint", over.key, ny.name, 1],
      ["budget", budget.key, utc.name, 0],
      ["endpoint", fine.key, utc.name, 0],
      ["endpoint", lonely.key, null, 0],
    ]);
    const first = ours[0];
    expect(first?.days.map((d) => d.day)).toEqual(["2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09"]);
    expect(first?.days.at(-1)).toMatchObject({
      billed: { units: 1000, micros: 10 * MICROS },
      charged: { units: 900, micros: 9 * MICROS },
      drift: { percent: 10, over: true },
    });
    expect(first?.days.at(-1)?.final).toBe(true);
    expect(first?.days[0]).toEqual({ day: "2026-03-03", billed: null, charged: null, held: 0, drift: null, final: true, unitsOnly: false });
    const b = ours.find((r) => r.target === "budget");
    expect(b?.unit).toBeNull();
    expect(b?.days.find((d) => d.day === "2026-03-05")).toMatchObject({ held: 2, final: false, drift: { direction: "charged_more", over: true } });
    expect(
      ours
        .find((r) => r.id === fine.endpointId)
        ?.days.filter((d) => d.billed !== null)
        .map((d) => d.day),
    ).toEqual(["2026-03-09"]);
    expect(ours.find((r) => r.id === lonely.endpointId)).toMatchObject({ source: null, days: [] });

    const list = await reconciliationSources(t.db);
    expect(list.find((x) => x.id === ny.id)).toMatchObject({ kind: "file", enabled: true, lastPullError: "HTTP 500", rules: 1, timeZone: "America/New_York" });
    expect(list.find((x) => x.id === utc.id)).toMatchObject({ rules: 2, pullRequestedAt: null });
  });
});
