import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts, changeRequests } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { deliverDueAlerts, type DeliverySettings } from "@/lib/alerts/delivery";
import { startReceiver } from "@/lib/alerts/test-receiver";
import { createEndpoint, first, readCeiling } from "@/lib/ceilings/test-fixtures";
import { acknowledgeBreakGlass, breakGlass, unacknowledgedBreakGlass } from "./index";
import { ceilingEvents, requestEvents, staffMember } from "./test-fixtures";

// Break glass: an admin applies a raise alone with a reason; it is audited as such, alerted to
// every destination, and stays unacknowledged until another admin acknowledges it.

const fast: DeliverySettings = { retryBaseMs: 5, retryCapMs: 20, maxAttempts: 3, timeoutMs: 2000, leaseMs: 5000, egress: { allowHosts: ["127.0.0.1"] } };

describe.skipIf(skipWithoutDatabase())("break glass", () => {
  const t = useTestDatabase("changes_break_glass", { max: 6 });

  it("an admin applies a raise alone: audited, alerted to every enabled destination and delivered, acknowledged by another admin only", async () => {
    const [one, two] = [await startReceiver(), await startReceiver()];
    try {
      const dest = async (name: string, url: string, enabled = true) =>
        first(
          await t.db
            .insert(alertDestinations)
            .values({ name, kind: "webhook", target: url, signingSecret: "0123456789abcdef0123456789abcdef", createdBy: "test", enabled })
            .returning(),
        );
      const a = await dest("ops", one.url);
      const b = await dest("finance", two.url);
      const off = await dest("off", one.url, false);

      const { ceilings } = await createEndpoint(t.db);
      const c = first(ceilings);
      const admin = await staffMember(t.db, "admin");
      const row = await breakGlass(t.db, {
        kind: "ceiling.value",
        change: { ceilingId: c.id, value: 140 },
        requester: admin,
        reason: "launch, nobody else awake",
      });
      expect(row).toMatchObject({ state: "applied", breakGlass: true, decidedById: null, requestedById: admin.staffId, acknowledgedAt: null });
      expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 140 });
      expect(await ceilingEvents(t.db, c.id, "ceiling.adjust")).toMatchObject([
        { actor: admin.email, appliedValue: 140, details: { requestId: row.id, breakGlass: true } },
      ]);
      expect((await requestEvents(t.db, row.id)).map((e) => e.action)).toEqual(["change.break_glass"]);

      const alert = first(
        await t.db
          .select()
          .from(alerts)
          .where(eq(alerts.dedupeKey, `break_glass:${row.id}`)),
      );
      expect(alert).toMatchObject({ kind: "break_glass" });
      const queued = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alert.id));
      expect(queued.map((d) => d.destinationId).sort()).toEqual([a.id, b.id].sort());
      expect(queued.some((d) => d.destinationId === off.id)).toBe(false);
      await deliverDueAlerts(t.db, fast);
      const delivered = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alert.id));
      expect(delivered.map((d) => d.state)).toEqual(["delivered", "delivered"]);
      expect(one.accepted().some((r) => r.body.includes("break_glass"))).toBe(true);
      expect(two.accepted().some((r) => r.body.includes("break_glass"))).toBe(true);

      expect((await unacknowledgedBreakGlass(t.db)).map((r) => r.id)).toContain(row.id);
      await expect(acknowledgeBreakGlass(t.db, { id: row.id, admin })).rejects.toMatchObject({ code: "own_request" });
      await expect(acknowledgeBreakGlass(t.db, { id: row.id, admin: { ...admin, via: "cli" } })).rejects.toMatchObject({ code: "own_request" });
      await expect(acknowledgeBreakGlass(t.db, { id: row.id, admin: await staffMember(t.db, "operator") })).rejects.toMatchObject({ code: "forbidden" });
      const other = await staffMember(t.db, "admin");
      expect(await acknowledgeBreakGlass(t.db, { id: row.id, admin: other })).toMatchObject({ acknowledgedById: other.staffId, acknowledgedBy: other.email });
      expect((await unacknowledgedBreakGlass(t.db)).map((r) => r.id)).not.toContain(row.id);
      await expect(acknowledgeBreakGlass(t.db, { id: row.id, admin: await staffMember(t.db, "admin") })).rejects.toMatchObject({ code: "not_pending" });
      const events = (await requestEvents(t.db, row.id)).map((e) => e.action);
      expect(events.filter((a) => a !== "change.refused")).toEqual(["change.break_glass", "change.acknowledge"]);
      // Each refused acknowledgement is logged too.
      expect(events.filter((a) => a === "change.refused")).toHaveLength(4);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("only an admin, with a reason of 10 characters or more, and only for a raise; nothing changes otherwise", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const admin = await staffMember(t.db, "admin");
    const operator = await staffMember(t.db, "operator");
    const glass = (over: Partial<Parameters<typeof breakGlass>[1]>) =>
      breakGlass(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 140 }, requester: admin, reason: "launch, nobody else awake", ...over });
    await expect(glass({ requester: operator })).rejects.toMatchObject({ code: "forbidden" });
    await expect(glass({ reason: "  urgent   " })).rejects.toMatchObject({ code: "invalid_input", message: expect.stringMatching(/at least 10 characters/) });
    await expect(glass({ reason: "launch\u0000 now, nobody" })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(glass({ change: { ceilingId: c.id, value: 60 } })).rejects.toMatchObject({ code: "not_a_raise" });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
    const [row] = await t.db
      .select({ n: sql<number>`count(*)::int` })
      .from(changeRequests)
      .where(eq(changeRequests.requestedById, admin.staffId));
    expect(row?.n).toBe(0);
  });
});
