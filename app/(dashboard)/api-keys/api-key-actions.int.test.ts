import { count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys, auditEvents } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { authenticateApiKey, hashToken } from "@/lib/api-keys";
import type { SessionStaff } from "@/lib/auth";
import type { Role } from "@/lib/auth/roles";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/action-state";
import { createApiKeyCore, revokeApiKeyCore } from "./api-key-action-core";
import { form } from "@/app/_lib/test-form";

describe.skipIf(skipWithoutDatabase())("API key server actions", () => {
  const t = useTestDatabase("api_key_actions", { max: 4 });
  let endpointKey: string;
  const revalidated: string[] = [];
  const as = (role: Role | null): ActionDeps => ({
    session: async () => (role ? ({ id: 1, email: `${role}@example.com`, role } satisfies SessionStaff) : null),
    db: async () => t.db,
    revalidate: (path) => revalidated.push(path),
  });
  const snapshot = async () => {
    const [keys] = await t.db.select({ n: count() }).from(apiKeys);
    const [audit] = await t.db.select({ n: count() }).from(auditEvents);
    const revoked = await t.db.select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt }).from(apiKeys).orderBy(apiKeys.id);
    return { keys: keys?.n, audit: audit?.n, revoked };
  };
  const created = (state: ActionState) => (state.status === "ok" && state.secret ? state.secret : null);

  beforeAll(async () => {
    endpointKey = (await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] })).key;
  });

  it("creates a key for an admin: the secret is returned once, only its hash is stored, the audit row is written", async () => {
    const state = await createApiKeyCore(
      as("admin"),
      form({ name: "newsletter", binding: "account", account: "acct_9", scopes: ["reserve"], endpointKeys: [endpointKey] }),
    );
    const secret = created(state);
    expect(secret).toMatch(/^ck_[a-z0-9]{8}_/);
    const rows = await t.db.select().from(apiKeys);
    const row = rows.find((r) => r.name === "newsletter");
    expect(row).toMatchObject({
      account: "acct_9",
      trusted: false,
      endpointKeys: [endpointKey],
      createdBy: "admin@example.com",
      secretHash: hashToken(secret ?? ""),
    });
    expect(JSON.stringify(rows)).not.toContain(secret?.slice(12));
    const audit = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "api_key.create"));
    expect(audit).toEqual([
      expect.objectContaining({ actorType: "staff", actor: "admin@example.com", details: expect.objectContaining({ apiKeyId: row?.id, account: "acct_9" }) }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret?.slice(12));
    expect(revalidated).toContain("/api-keys");
    const auth = await authenticateApiKey(t.db, `Bearer ${secret}`);
    expect(auth).toMatchObject({ ok: true, principal: { account: "acct_9", trusted: false } });
  });

  it("creates a trusted-service key without an account", async () => {
    const state = await createApiKeyCore(
      as("admin"),
      form({ name: "billing backend", binding: "trusted", account: "ignored", scopes: ["reserve"], endpointKeys: [endpointKey] }),
    );
    const auth = await authenticateApiKey(t.db, `Bearer ${created(state)}`);
    expect(auth).toMatchObject({ ok: true, principal: { account: null, trusted: true } });
  });

  it("creates a billing service's key: trusted, accounts:read and accounts:write, no endpoint; the message names its scopes", async () => {
    const state = await createApiKeyCore(
      as("admin"),
      form({ name: "billing accounts", binding: "trusted", scopes: ["accounts:write", "accounts:read"], endpointKeys: [] }),
    );
    expect(state.status === "ok" ? state.message : state).toContain("scopes accounts:read, accounts:write");
    const auth = await authenticateApiKey(t.db, `Bearer ${created(state)}`);
    expect(auth).toMatchObject({ ok: true, principal: { trusted: true, endpointKeys: [], scopes: ["accounts:read", "accounts:write"] } });
  });

  it.each([null, "viewer", "operator"] as const)("refuses %s to create or revoke, and changes nothing", async (role) => {
    const target = await createApiKeyCore(as("admin"), form({ name: `target-${role}`, binding: "trusted", scopes: ["reserve"], endpointKeys: [endpointKey] }));
    expect(target.status).toBe("ok");
    const [row] = await t.db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.name, `target-${role}`));
    const before = await snapshot();
    const create = await createApiKeyCore(as(role), form({ name: "sneaky", binding: "trusted", scopes: ["reserve"], endpointKeys: [endpointKey] }));
    const revoke = await revokeApiKeyCore(as(role), form({ id: String(row?.id) }));
    expect(create.status).toBe("error");
    expect(revoke.status).toBe("error");
    expect(await snapshot()).toEqual(before);
  });

  it("refuses bad forms with a clear message and writes nothing", async () => {
    const before = await snapshot();
    const cases: [Record<string, string | string[]>, string][] = [
      [{ name: "", binding: "trusted", scopes: ["reserve"], endpointKeys: [endpointKey] }, "a name is required"],
      [{ name: "x", binding: "account", account: " ", scopes: ["reserve"], endpointKeys: [endpointKey] }, "the billing account is required"],
      [{ name: "x", binding: "account", account: "acct one", scopes: ["reserve"], endpointKeys: [endpointKey] }, "may not contain spaces"],
      [{ name: "x", binding: "trusted", scopes: ["reserve"] }, "choose at least one endpoint"],
      [{ name: "x", binding: "trusted", endpointKeys: [endpointKey] }, "choose at least one scope"],
      [{ name: "x", binding: "trusted", scopes: ["reserve", "accounts:root"], endpointKeys: [endpointKey] }, "unknown scope 'accounts:root'"],
      [
        { name: "x", binding: "trusted", scopes: ["reserve", "accounts:write"], endpointKeys: [endpointKey] },
        "a key bound to endpoints cannot read or move accounts",
      ],
      [{ name: "x", binding: "trusted", scopes: ["accounts:read"], endpointKeys: [endpointKey] }, "a key for accounts has no endpoints"],
      [{ name: "x", binding: "account", account: "acct_1", scopes: ["accounts:write"] }, "only a trusted-service key may have accounts:write"],
      [{ name: "x", binding: "nobody", scopes: ["reserve"], endpointKeys: [endpointKey] }, "choose a billing account or trusted service"],
      [{ name: "x", binding: "trusted", scopes: ["reserve"], endpointKeys: [endpointKey, "no.such"] }, "unknown endpoint(s): no.such"],
    ];
    for (const [fields, message] of cases) {
      const state = await createApiKeyCore(as("admin"), form(fields));
      expect(state.status === "error" ? state.error : state.status).toContain(message);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("revokes a key with its audit row; the key fails at once; a second revoke is refused", async () => {
    const secret = created(
      await createApiKeyCore(as("admin"), form({ name: "to revoke", binding: "account", account: "acct_r", scopes: ["reserve"], endpointKeys: [endpointKey] })),
    );
    const [row] = await t.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.name, "to revoke"));
    const revoked = await revokeApiKeyCore(as("admin"), form({ id: String(row?.id) }));
    expect(revoked.status).toBe("ok");
    expect(await authenticateApiKey(t.db, `Bearer ${secret}`)).toMatchObject({ ok: false, code: "revoked_api_key" });
    const audit = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "api_key.revoke"));
    expect(audit.filter((a) => a.details?.apiKeyId === row?.id)).toHaveLength(1);
    const again = await revokeApiKeyCore(as("admin"), form({ id: String(row?.id) }));
    expect(again).toEqual({ status: "error", error: expect.stringContaining("already revoked"), code: "already_revoked" });
    expect(await revokeApiKeyCore(as("admin"), form({ id: "999999" }))).toEqual({ status: "error", error: "no API key with id 999999", code: "not_found" });
    expect((await t.db.select().from(auditEvents).where(eq(auditEvents.action, "api_key.revoke"))).length).toBe(audit.length);
  });
});
