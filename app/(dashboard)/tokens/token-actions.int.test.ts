import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, staff, staffTokens } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { SessionStaff } from "@/lib/auth";
import { hashToken } from "@/lib/api-keys";
import { authenticateStaffToken, listStaffTokens } from "@/lib/staff-tokens";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/action-state";
import { form } from "@/app/_lib/test-form";
import { createStaffTokenCore, revokeStaffTokenCore } from "./token-action-core";

// Personal tokens from the dashboard: each member makes and revokes only their own; viewers and
// strangers change nothing; create and revoke are audited; the secret is answered once, hashed.

describe.skipIf(skipWithoutDatabase())("personal token server actions", () => {
  const t = useTestDatabase("token_actions", { max: 4 });
  const members = new Map<string, SessionStaff>();
  const revalidated: string[] = [];
  const as = (email: string | null): ActionDeps => ({
    session: async () => (email ? (members.get(email) ?? null) : null),
    db: async () => t.db,
    revalidate: (path) => revalidated.push(path),
  });
  const secretOf = (state: ActionState) => (state.status === "ok" && state.secret ? state.secret : "");
  const tokenCount = async () => (await t.db.select().from(staffTokens)).length;

  beforeAll(async () => {
    const rows = await t.db
      .insert(staff)
      .values([
        { email: "op@t.local", role: "operator", passwordHash: "x" },
        { email: "ad@t.local", role: "admin", passwordHash: "x" },
        { email: "vi@t.local", role: "viewer", passwordHash: "x" },
      ])
      .returning();
    for (const r of rows) members.set(r.email, { id: r.id, email: r.email, role: r.role });
  });

  it("an operator creates their own token: shown once, only its hash stored, audited, and it proves them", async () => {
    const state = await createStaffTokenCore(as("op@t.local"), form({ name: "laptop" }));
    expect(state).toMatchObject({ status: "ok", message: expect.stringContaining("CEILINGS_STAFF_TOKEN") });
    const secret = secretOf(state);
    expect(secret).toMatch(/^cst_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    const [row] = await t.db
      .select()
      .from(staffTokens)
      .where(eq(staffTokens.secretHash, hashToken(secret)));
    expect(row).toMatchObject({ name: "laptop", staffId: members.get("op@t.local")?.id, revokedAt: null });
    expect(JSON.stringify(await t.db.select().from(staffTokens))).not.toContain(secret.slice(13));
    const audit = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "staff_token.create"));
    expect(audit).toEqual([
      expect.objectContaining({
        actorType: "staff",
        actor: "op@t.local",
        target: `laptop (cst_${row?.prefix ?? ""})`,
        details: expect.objectContaining({ tokenId: row?.id, name: "laptop" }),
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret.slice(13));
    expect(revalidated).toContain("/tokens");
    expect(await authenticateStaffToken(t.db, secret)).toMatchObject({ email: "op@t.local", role: "operator" });
  });

  it("refuses a viewer and a stranger, and a bad name; nothing is made", async () => {
    const before = await tokenCount();
    expect(await createStaffTokenCore(as("vi@t.local"), form({ name: "x" }))).toMatchObject({ status: "error", error: expect.stringContaining("viewer") });
    expect(await createStaffTokenCore(as(null), form({ name: "x" }))).toMatchObject({ status: "error", error: "Sign in required" });
    expect(await createStaffTokenCore(as("ad@t.local"), form({ name: "  " }))).toMatchObject({ status: "error", code: "invalid_input" });
    expect(await tokenCount()).toBe(before);
  });

  it("revokes only one's own token, once, audited; a revoked token proves nobody", async () => {
    const mine = secretOf(await createStaffTokenCore(as("ad@t.local"), form({ name: "desk" })));
    const theirs = secretOf(await createStaffTokenCore(as("op@t.local"), form({ name: "phone" })));
    const idOf = async (secret: string) =>
      (
        await t.db
          .select()
          .from(staffTokens)
          .where(eq(staffTokens.secretHash, hashToken(secret)))
      )[0]?.id ?? 0;
    // Another member's token reads as not found, and stays live; a viewer may not revoke at all.
    expect(await revokeStaffTokenCore(as("ad@t.local"), form({ id: String(await idOf(theirs)) }))).toMatchObject({ status: "error", code: "not_found" });
    expect(await revokeStaffTokenCore(as("vi@t.local"), form({ id: String(await idOf(theirs)) }))).toMatchObject({
      status: "error",
      error: expect.stringContaining("viewer"),
    });
    expect(await authenticateStaffToken(t.db, theirs)).toMatchObject({ email: "op@t.local" });

    expect(await revokeStaffTokenCore(as("ad@t.local"), form({ id: String(await idOf(mine)) }))).toMatchObject({
      status: "ok",
      message: expect.stringContaining("Revoked desk"),
    });
    expect(await revokeStaffTokenCore(as("ad@t.local"), form({ id: String(await idOf(mine)) }))).toMatchObject({ status: "error", code: "already_revoked" });
    await expect(authenticateStaffToken(t.db, mine)).rejects.toMatchObject({ code: "invalid_token", message: expect.stringContaining("revoked") });
    const audit = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "staff_token.revoke"));
    expect(audit).toEqual([expect.objectContaining({ actor: "ad@t.local", details: expect.objectContaining({ tokenId: await idOf(mine), name: "desk" }) })]);

    // Each member lists only their own.
    const adId = members.get("ad@t.local")?.id ?? 0;
    expect((await listStaffTokens(t.db, { staffId: adId })).map((x) => [x.name, x.live])).toEqual([["desk", false]]);
  });
  it("three revokes of one token at once: exactly one is done and audited, the others say already revoked", async () => {
    const secret = secretOf(await createStaffTokenCore(as("op@t.local"), form({ name: "race" })));
    const [row] = await t.db
      .select()
      .from(staffTokens)
      .where(eq(staffTokens.secretHash, hashToken(secret)));
    const id = String(row?.id ?? 0);
    // The row held locked while four revokes start: each has read it before any of them writes.
    const held = await holdTransaction(t.db, (tx) =>
      tx
        .select()
        .from(staffTokens)
        .where(eq(staffTokens.id, row?.id ?? 0))
        .for("update"),
    );
    const racing = Promise.all(Array.from({ length: 3 }, () => revokeStaffTokenCore(as("op@t.local"), form({ id }))));
    await new Promise((r) => setTimeout(r, 300));
    await held.release();
    const results = await racing;
    expect(results.filter((r) => r.status === "ok")).toHaveLength(1);
    expect(results.filter((r) => r.status === "error" && r.code === "already_revoked")).toHaveLength(2);
    const audit = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "staff_token.revoke"));
    expect(audit.filter((a) => (a.details as { tokenId?: number } | null)?.tokenId === row?.id)).toHaveLength(1);
  });
});
