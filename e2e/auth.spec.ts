import { expect, test } from "@playwright/test";
import { DashboardShell, NAV_LABELS, signInAs } from "./pages/dashboard-shell";
import { DEMO_ADMIN, DEMO_PASSWORD, DEMO_VIEWER, LoginPage } from "./pages/login-page";
import { StaffPage } from "./pages/staff-page";

test.describe("staff sign-in", () => {
  test("a visitor is sent to sign in, then lands where they were going with the navigation", async ({ page }) => {
    await page.goto("/audit");
    await expect(page).toHaveURL(/\/login\?next=%2Faudit$/);
    const login = new LoginPage(page);
    await login.signIn(DEMO_ADMIN, DEMO_PASSWORD);

    await expect(page).toHaveURL(/\/audit$/);
    const shell = new DashboardShell(page);
    for (const label of NAV_LABELS) await expect(shell.navLink(label)).toBeVisible();
    await expect(shell.navLink("Audit")).toHaveAttribute("aria-current", "page");
    await shell.expectSignedInAs(DEMO_ADMIN, "admin");
  });

  test("a wrong password shows the generic error and never reaches the URL", async ({ page }) => {
    const login = new LoginPage(page);
    await login.goto();
    await login.signIn(DEMO_ADMIN, "not-the-password");

    await expect(login.error).toHaveText("Email or password is incorrect");
    await expect(page).toHaveURL(/\/login$/);
    expect(page.url()).not.toContain("not-the-password");

    // An unknown account reads exactly the same.
    await login.signIn("nobody@ceilings.local", DEMO_PASSWORD);
    await expect(login.error).toHaveText("Email or password is incorrect");
  });

  test("signing out ends the session", async ({ page }) => {
    const login = new LoginPage(page);
    await login.goto();
    await login.signIn(DEMO_ADMIN, DEMO_PASSWORD);
    const shell = new DashboardShell(page);
    await shell.expectSignedInAs(DEMO_ADMIN, "admin");

    await shell.signOut();
    await page.goto("/staff");
    await expect(page).toHaveURL(/\/login\?next=%2Fstaff$/);
  });

  test("a viewer is turned away from the staff page", async ({ page }) => {
    const login = new LoginPage(page);
    await login.goto("/staff");
    await login.signIn(DEMO_VIEWER, DEMO_PASSWORD);

    await expect(page).toHaveURL(/\/forbidden\?need=admin$/);
    await expect(page.getByRole("heading", { name: "Not allowed" })).toBeVisible();
    await expect(page.getByText("Your role (viewer) can read everything.")).toBeVisible();
  });
});

test.describe("staff administration", () => {
  test("an admin adds a member who signs in; disabling them ends their open session", async ({ page, browser }) => {
    const email = `e2e-${Date.now()}@ceilings.local`;
    const login = new LoginPage(page);
    await login.goto("/staff");
    await login.signIn(DEMO_ADMIN, DEMO_PASSWORD);
    const staffPage = new StaffPage(page);
    await expect(page).toHaveURL(/\/staff$/);
    const password = await staffPage.addWithGeneratedPassword(email, "operator");

    const memberContext = await browser.newContext();
    try {
      const memberPage = await memberContext.newPage();
      await signInAs(memberPage, email, "operator", password);

      await staffPage.disable(email);

      await memberPage.reload();
      await expect(memberPage).toHaveURL(/\/login\?next=/);
    } finally {
      await memberContext.close();
    }
  });
});
