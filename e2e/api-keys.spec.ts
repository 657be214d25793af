import { expect, test } from "@playwright/test";
import { ApiKeysPage } from "./pages/api-keys-page";
import { AuditPage } from "./pages/control-pages";
import { DEMO_ADMIN, DEMO_VIEWER, signedIn } from "./pages/login-page";

// An admin creates a key in the dashboard, a service uses it over HTTP, the admin revokes it and
// the very next call is refused. Uses llm.chat (a large per-account quota) so other suites'
// endpoints are left as they were.
const ENDPOINT = "llm.chat";

test.describe.configure({ mode: "serial" });

test.describe("API keys", () => {
  test("an admin creates a key shown once, a service spends with it, and a revoke binds the next call", async ({ page, request }, testInfo) => {
    await signedIn(page, DEMO_ADMIN, "/api-keys");
    const keys = new ApiKeysPage(page);
    const secret = await keys.createForAccount("e2e chat service", "acct_e2e", [ENDPOINT]);
    expect(secret).toMatch(/^ck_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    const prefix = secret.slice(3, 11);
    await expect(keys.row(prefix)).toContainText("acct_e2e");
    await expect(keys.row(prefix)).toContainText("never");
    await expect(keys.scopes(prefix)).toHaveText("reserve");
    await testInfo.attach("key created", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    const headers = { authorization: `Bearer ${secret}` };
    const granted = await request.post("/api/v1/reservations", { headers, data: { endpoint: ENDPOINT, amount: 10 } });
    expect(granted.status()).toBe(201);
    const { reservationId } = (await granted.json()) as { reservationId: string };
    const settled = await request.post(`/api/v1/reservations/${reservationId}/settle`, { headers, data: { actual: 4 } });
    expect(settled.status()).toBe(200);
    const status = await request.get(`/api/v1/endpoints/${ENDPOINT}`, { headers });
    expect(status.status()).toBe(200);
    expect(await status.json()).toMatchObject({ account: "acct_e2e", killed: false });

    // Shown once: after a reload the secret is gone and the key's last use is recorded.
    await keys.goto();
    await expect(keys.secret).toHaveCount(0);
    await expect(page.getByText(secret)).toHaveCount(0);
    await expect(keys.row(prefix)).not.toContainText("never");

    await keys.revoke(prefix);
    const refused = await request.post("/api/v1/reservations", { headers, data: { endpoint: ENDPOINT, amount: 10 } });
    expect(refused.status()).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: "revoked_api_key" } });

    const audit = new AuditPage(page);
    await audit.goto({ action: "api_key.create" });
    await expect(audit.rows.first()).toContainText(`ck_${prefix}`);
    await audit.goto({ action: "api_key.revoke" });
    await expect(audit.rows.first()).toContainText(`ck_${prefix}`);
  });

  test("keys carry scopes: the billing service's accounts key reads accounts but cannot spend, an endpoint key cannot read or move accounts", async ({
    page,
    request,
  }, testInfo) => {
    await signedIn(page, DEMO_ADMIN, "/api-keys");
    const keys = new ApiKeysPage(page);
    const billing = await keys.createForAccounts("e2e billing service", ["accounts:read", "accounts:write"]);
    const billingPrefix = billing.slice(3, 11);
    await expect(keys.scopes(billingPrefix)).toHaveText(/accounts:read\s*accounts:write/);
    await expect(keys.row(billingPrefix)).toContainText("trusted service");
    await testInfo.attach("accounts key", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
    const spender = await keys.createForAccount("e2e scoped spender", "acct_e2e_scopes", [ENDPOINT]);

    const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
    const read = await request.get("/api/v1/accounts/acct_e2e_scopes", { headers: as(billing) });
    expect(read.status()).toBe(200);
    const spend = await request.post("/api/v1/reservations", { headers: as(billing), data: { endpoint: ENDPOINT, amount: 1, caller: "acct_e2e_scopes" } });
    expect([spend.status(), await spend.json()]).toEqual([403, { error: expect.objectContaining({ code: "insufficient_scope" }) }]);
    expect(spender).not.toBe(billing);
    for (const answer of [
      await request.get("/api/v1/accounts/acct_e2e_scopes", { headers: as(spender) }),
      await request.put("/api/v1/accounts/acct_e2e_scopes", { headers: as(spender), data: { plan: "enterprise" } }),
    ]) {
      expect([answer.status(), await answer.json()]).toEqual([403, { error: expect.objectContaining({ code: "insufficient_scope" }) }]);
    }
  });

  test("a viewer sees the keys but can neither create nor revoke", async ({ page }) => {
    await signedIn(page, DEMO_VIEWER, "/api-keys");
    const keys = new ApiKeysPage(page);
    await expect(keys.rows.first()).toBeVisible();
    await expect(keys.create).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Revoke" })).toHaveCount(0);
  });
});
