import { expect, test } from "@playwright/test";
import { type Database, openPostgres } from "@/db/client";
import { hasTestDatabase } from "@/db/testing";
import { authenticateStaffToken } from "@/lib/staff-tokens";
import { AuditPage } from "./pages/control-pages";
import { DEMO_ADMIN, DEMO_VIEWER, signedIn } from "./pages/login-page";

// An admin makes a personal token for the command line on /tokens: shown once, it proves them to
// the CLI (lib/staff-tokens, as `npm run ceilings -- approve` reads it); revoked on the page, the
// next use is refused. A viewer may not open the page.

test.describe.configure({ mode: "serial" });

test.describe("personal tokens", () => {
  test.skip(!hasTestDatabase(), "the test checks the token against the e2e database: set TEST_DATABASE_URL");
  let database: Database | undefined;

  test.beforeAll(() => {
    // eslint-disable-next-line no-restricted-syntax
    database = openPostgres(process.env.E2E_DATABASE_URL ?? "", { max: 2 });
  });
  test.afterAll(async () => {
    await database?.close();
  });

  test("an admin creates a token shown once, it proves them, and a revoke on the page ends it", async ({ page }, testInfo) => {
    const db = database?.db;
    if (!db) throw new Error("no e2e database");
    await signedIn(page, DEMO_ADMIN, "/");
    await page.getByRole("link", { name: "Personal tokens" }).click();
    await expect(page.getByRole("heading", { name: "Personal tokens", level: 1 })).toBeVisible();
    await page.getByLabel("Name", { exact: true }).fill("e2e laptop");
    await page.getByRole("button", { name: "Create token" }).click();
    const shown = page.getByTestId("token-secret");
    await expect(shown).toBeVisible();
    const secret = (await shown.textContent()) ?? "";
    expect(secret).toMatch(/^cst_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    const prefix = secret.slice(4, 12);
    const row = page.locator(`[data-testid="token-row"][data-prefix="${prefix}"]`);
    await expect(row).toContainText("e2e laptop");
    await expect(row).toContainText("never");
    await testInfo.attach("token created", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    expect(await authenticateStaffToken(db, secret)).toMatchObject({ email: DEMO_ADMIN, role: "admin" });
    // Shown once: after a reload the secret is gone, and its last use is recorded.
    await page.reload();
    await expect(page.getByText(secret)).toHaveCount(0);
    await expect(row).not.toContainText("never");

    page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect(row).toContainText("revoked");
    await expect(authenticateStaffToken(db, secret)).rejects.toMatchObject({ code: "invalid_token" });

    const audit = new AuditPage(page);
    await audit.goto({ action: "staff_token.create" });
    await expect(audit.rows.first()).toContainText(DEMO_ADMIN);
    await audit.goto({ action: "staff_token.revoke" });
    await expect(audit.rows.first()).toContainText(DEMO_ADMIN);
  });

  test("a viewer has no link and is sent to the forbidden page", async ({ page }) => {
    await signedIn(page, DEMO_VIEWER, "/");
    await expect(page.getByRole("link", { name: "Personal tokens" })).toHaveCount(0);
    await page.goto("/tokens");
    await expect(page).toHaveURL(/\/forbidden\?need=operator/);
  });
});
