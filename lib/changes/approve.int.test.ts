import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { changeRequests } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { adjustCeiling } from "@/lib/ceilings/adjust";
import { lockCeiling } from "@/lib/ceilings/lock";
import { createEndpoint, first, readCeiling } from "@/lib/ceilings/test-fixtures";
import {
  approveChange,
  cancelChange,
  ChangeControlError,
  expireChangeRequests,
  getChangeRequest,
  listChangeRequests,
  pendingChangeRequests,
  pendingForEndpoint,
  rejectChange,
  requestChange,
} from "./index";
import { ceilingEvents, requestEvents, staffMember } from "./test-fixtures";

// The second person, at the lib level: who may ask, approve, reject and cancel; a requester is the
// same person from any session or the CLI; two approvals at once apply once; an approval racing a
// lowering goes stale and raises nothing.

const HOUR = 60 * 60 * 1000;

describe.skipIf(skipWithoutDatabase())("change requests: asking and deciding a ceiling raise", () => {
  const t = useTestDatabase("changes_approve", { max: 16 });

  async function raiseAsked(value = 120, opts: { now?: Date } = {}) {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const operator = await staffMember(t.db, "operator");
    const request = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: c.id, value },
      requester: operator,
      reason: "launch on Friday",
      ...opts,
    });
    return { c, operator, request };
  }

  it("a direct raise is refused with approval_required and what to ask instead; nothing changes", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const refused = adjustCeiling(t.db, {
      ceilingId: c.id,
      input: "120",
      expectedVersion: c.version,
      actor: { type: "staff", email: "a@test.local" },
      reason: "launch",
    });
    await expect(refused).rejects.toBeInstanceOf(ChangeControlError);
    await expect(refused).rejects.toMatchObject({ code: "approval_required", ask: { kind: "ceiling.value", change: { ceilingId: c.id, value: 120 } } });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100, version: c.version });
    // Lowering stays instant and one person's.
    await adjustCeiling(t.db, {
      ceilingId: c.id,
      input: "90",
      expectedVersion: c.version,
      actor: { type: "staff", email: "a@test.local" },
      reason: "quiet week",
    });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 90 });
  });

  it("an operator asks: the request holds before, after, the worst case both ways and a summary; audited and alerted", async () => {
    const { c, operator, request } = await raiseAsked(120);
    expect(request).toMatchObject({
      kind: "ceiling.value",
      state: "pending",
      before: { value: 100, valueBeforeKill: null },
      after: { value: 120 },
      requestedById: operator.staffId,
      requestedBy: operator.email,
      // The fixture's endpoint: a day of 100 units (the day ceiling) at price 0, in USD.
      worstCaseBefore: 100,
      worstCaseAfter: 120,
      worstMoneyBefore: 0,
      worstMoneyAfter: 0,
      currency: "USD",
    });
    expect(request.summary).toMatch(/units\/day 100 → 120$/);
    expect(request.expiresAt.getTime() - request.requestedAt.getTime()).toBe(24 * HOUR);
    expect((await requestEvents(t.db, request.id)).map((e) => e.action)).toEqual(["change.request"]);
    const alerts = await t.db.execute(sql`select kind, message from alerts where dedupe_key = ${`change_request:${request.id}`}`);
    expect(alerts).toHaveLength(1);
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
    expect((await pendingForEndpoint(t.db, c.endpointId)).map((r) => r.id)).toEqual([request.id]);
    expect((await pendingChangeRequests(t.db)).map((r) => r.id)).toContain(request.id);
    expect(await getChangeRequest(t.db, request.id)).toMatchObject({ id: request.id, endpointKey: expect.any(String), budgetKey: null });
    expect((await listChangeRequests(t.db, { state: "pending", endpointId: c.endpointId })).rows.map((r) => r.id)).toEqual([request.id]);
  });

  it("a viewer cannot ask; an operator cannot approve; nothing changes and each refusal is logged", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const viewer = await staffMember(t.db, "viewer");
    await expect(requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 120 }, requester: viewer, reason: "x" })).rejects.toMatchObject(
      { code: "forbidden" },
    );
    // A role claimed by the caller is not believed: the staff row decides.
    await expect(
      requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 120 }, requester: { ...viewer, role: "admin" }, reason: "x" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const { request } = await raiseAsked(120);
    const otherOperator = await staffMember(t.db, "operator");
    await expect(approveChange(t.db, { id: request.id, approver: otherOperator })).rejects.toMatchObject({ code: "forbidden" });
    await expect(approveChange(t.db, { id: request.id, approver: { ...otherOperator, role: "admin" } })).rejects.toMatchObject({ code: "forbidden" });
    expect(await getChangeRequest(t.db, request.id)).toMatchObject({ state: "pending" });
    const refused = await t.db.execute(
      sql`select count(*)::int as n from audit_events where action = 'change.refused' and actor in (${viewer.email}, ${otherOperator.email})`,
    );
    expect(refused[0]).toMatchObject({ n: 4 });
  });

  it("the requester cannot approve or reject their own request, from a second session or the CLI; they may cancel it", async () => {
    const admin = await staffMember(t.db, "admin");
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const request = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 130 }, requester: admin, reason: "launch" });
    const viaCli = { ...admin, via: "cli" as const };
    for (const approver of [admin, viaCli]) {
      await expect(approveChange(t.db, { id: request.id, approver })).rejects.toMatchObject({ code: "own_request" });
      await expect(rejectChange(t.db, { id: request.id, approver, note: "never mind" })).rejects.toMatchObject({ code: "own_request" });
    }
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
    const otherAdmin = await staffMember(t.db, "admin");
    await expect(cancelChange(t.db, { id: request.id, requester: otherAdmin })).rejects.toMatchObject({ code: "forbidden" });
    expect(await cancelChange(t.db, { id: request.id, requester: viaCli })).toMatchObject({ state: "cancelled", decidedById: admin.staffId });
    await expect(approveChange(t.db, { id: request.id, approver: otherAdmin })).rejects.toMatchObject({ code: "not_pending" });
  });

  it("the database holds the second person too: a direct UPDATE making the requester the approver fails (the independence trigger, before the CHECKs)", async () => {
    const { operator, request } = await raiseAsked(125);
    // As the app role, the way a bug in lib (or a forged path around it) would write.
    await expect(
      t.db.execute(
        sql`update change_requests set state = 'applied', decided_by_id = ${operator.staffId}, decided_by = ${operator.email} where id = ${request.id}`,
      ),
    ).rejects.toMatchObject({ cause: { constraint_name: "change_requests_independent" } });
    await expect(t.db.execute(sql`update change_requests set acknowledged_by_id = ${operator.staffId} where id = ${request.id}`)).rejects.toMatchObject({
      cause: { constraint_name: "change_requests_independent" },
    });
    expect(await getChangeRequest(t.db, request.id)).toMatchObject({ state: "pending", decidedById: null });
  });

  it("a second admin approves: applied under the lock, audited as ceiling.adjust by the approver with the request", async () => {
    const { c, operator, request } = await raiseAsked(120);
    const admin = await staffMember(t.db, "admin");
    const result = await approveChange(t.db, { id: request.id, approver: admin, note: "ok for the launch" });
    expect(result).toMatchObject({
      applied: true,
      request: { state: "applied", decidedById: admin.staffId, decidedBy: admin.email, decisionNote: "ok for the launch" },
    });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 120 });
    const [adjust] = await ceilingEvents(t.db, c.id, "ceiling.adjust");
    expect(adjust).toMatchObject({
      actor: admin.email,
      previousValue: 100,
      appliedValue: 120,
      reason: "launch on Friday",
      details: { requestId: request.id, requestedBy: operator.email },
    });
    expect((await requestEvents(t.db, request.id)).map((e) => e.action)).toEqual(["change.request", "change.approve"]);
  });

  it("a rejection needs a note; the value stays", async () => {
    const { c, request } = await raiseAsked(140);
    const admin = await staffMember(t.db, "admin");
    await expect(rejectChange(t.db, { id: request.id, approver: admin, note: " " })).rejects.toMatchObject({ code: "reason_required" });
    expect(await rejectChange(t.db, { id: request.id, approver: admin, note: "not this week" })).toMatchObject({ state: "rejected", decidedBy: admin.email });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });
  });

  it("two admins approving at once from two pools: it applies exactly once", async () => {
    const other = openPostgres(t.url, { max: 4 });
    try {
      for (let round = 0; round < 5; round += 1) {
        const { c, request } = await raiseAsked(110 + round);
        const [a, b] = [await staffMember(t.db, "admin"), await staffMember(t.db, "admin")];
        const results = await Promise.allSettled([
          approveChange(t.db, { id: request.id, approver: a }),
          approveChange(other.db, { id: request.id, approver: b }),
        ]);
        const applied = results.filter((r) => r.status === "fulfilled" && r.value.applied);
        const refused = results.filter((r) => r.status === "rejected");
        expect(applied).toHaveLength(1);
        expect(refused).toHaveLength(1);
        expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ code: "not_pending" });
        expect(await ceilingEvents(t.db, c.id, "ceiling.adjust")).toHaveLength(1);
        expect((await requestEvents(t.db, request.id)).filter((e) => e.action === "change.approve")).toHaveLength(1);
      }
    } finally {
      await other.close();
    }
  });

  it("an approval racing a lowering: the lowering holds the lock first, the request goes stale and nothing is raised", async () => {
    const { c, request } = await raiseAsked(120);
    const admin = await staffMember(t.db, "admin");
    const lowering = await holdTransaction(t.db, async (tx) => {
      const locked = await lockCeiling(tx, c.id);
      const { writeCeilingValue } = await import("@/lib/ceilings/adjust");
      await writeCeilingValue(tx, locked, { input: "80", actor: { type: "staff", email: "oncall@test.local" }, reason: "cost spike" });
    });
    const approval = approveChange(t.db, { id: request.id, approver: admin });
    // The approval waits on the endpoint lock; the lowering commits first.
    await new Promise((r) => setTimeout(r, 200));
    await lowering.release();
    const result = await approval;
    expect(result).toMatchObject({ applied: false, request: { state: "stale" } });
    expect(result.message).toMatch(/value 100 → 80/);
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 80 });
    expect(await ceilingEvents(t.db, c.id, "ceiling.adjust")).toHaveLength(1);
    expect((await requestEvents(t.db, request.id)).map((e) => e.action)).toEqual(["change.request", "change.stale"]);
  });

  it("an approval after a lowering committed also goes stale", async () => {
    const { c, request } = await raiseAsked(120);
    const now = await readCeiling(t.db, c.id);
    await adjustCeiling(t.db, {
      ceilingId: c.id,
      input: "90",
      expectedVersion: now.version,
      actor: { type: "staff", email: "oncall@test.local" },
      reason: "cost spike",
    });
    const result = await approveChange(t.db, { id: request.id, approver: await staffMember(t.db, "admin") });
    expect(result).toMatchObject({ applied: false, request: { state: "stale" } });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 90 });
  });

  it("an expired request is refused with a clear error and marked expired; the worker job expires the rest", async () => {
    const asked = new Date(Date.now() - 25 * HOUR);
    const { c, request } = await raiseAsked(120, { now: asked });
    const admin = await staffMember(t.db, "admin");
    await expect(approveChange(t.db, { id: request.id, approver: admin })).rejects.toMatchObject({
      code: "expired",
      message: expect.stringMatching(/expired .* nothing was applied/),
    });
    expect(await getChangeRequest(t.db, request.id)).toMatchObject({ state: "expired" });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100 });

    const old = await raiseAsked(130, { now: asked });
    const fresh = await raiseAsked(130);
    expect(await expireChangeRequests(t.db)).toBeGreaterThanOrEqual(1);
    expect(await getChangeRequest(t.db, old.request.id)).toMatchObject({ state: "expired" });
    expect(await getChangeRequest(t.db, fresh.request.id)).toMatchObject({ state: "pending" });
    expect((await requestEvents(t.db, old.request.id)).map((e) => e.action)).toEqual(["change.request", "change.expire"]);
  });

  it("bad input: an unknown id, a reason with control characters, a lowering asked as a raise, an end in the past", async () => {
    const admin = await staffMember(t.db, "admin");
    await expect(approveChange(t.db, { id: 987654, approver: admin })).rejects.toMatchObject({ code: "not_found" });
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const operator = await staffMember(t.db, "operator");
    const ask = (over: Partial<Parameters<typeof requestChange>[1]>) =>
      requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: c.id, value: 120 }, requester: operator, reason: "launch", ...over });
    await expect(ask({ reason: "launch\u0007now" })).rejects.toMatchObject({ code: "invalid_input", message: expect.stringMatching(/control characters/) });
    await expect(ask({ reason: "  " })).rejects.toMatchObject({ code: "reason_required" });
    await expect(ask({ change: { ceilingId: c.id, value: 50 } })).rejects.toMatchObject({ code: "not_a_raise" });
    await expect(ask({ change: { ceilingId: c.id, value: "1e9" } })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(ask({ endsAt: new Date(Date.now() - 1000) })).rejects.toMatchObject({ code: "invalid_input", message: expect.stringMatching(/past/) });
    await expect(ask({ endsAt: new Date(Date.now() + HOUR), endsAfterSeconds: 60 })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(ask({ kind: "ceiling.nope" as never })).rejects.toMatchObject({ code: "invalid_input" });
    const rows = await t.db.select().from(changeRequests).where(eq(changeRequests.requestedById, operator.staffId));
    expect(rows).toHaveLength(0);
    const refused = await t.db.execute(sql`select count(*)::int as n from audit_events where action = 'change.refused' and actor = ${operator.email}`);
    expect(refused[0]).toMatchObject({ n: 7 });
  });
});
