import { expect, test } from "@playwright/test";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { addStaff } from "@/lib/auth";
import { type AppServer, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { LoginPage } from "./pages/login-page";
import { checkPage, pageRoutes } from "./pages/page-checks";

// A new deployment: migrated, one admin, nothing else (no endpoint, budget, plan value, refusal or
// key). Every page at phone width passes what every page of the demo passes (phone-width.spec.ts):
// no sideways scroll, tables whole, axe finds nothing. Pages of one thing are asked for one that
// does not exist, as a new team's first link would.

const PASSWORD = "correct horse battery staple 42";

test.describe("a new deployment", () => {
  test.skip(!hasTestDatabase(), "needs TEST_DATABASE_URL (npm test sets it)");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    t = await createTestDatabase("e2e_empty", { max: 2 });
    await addStaff(t.db, { email: "admin@new.example", role: "admin", password: PASSWORD, actor: { type: "system", name: "e2e" }, bcryptCost: 4 });
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
  });

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  test("every page at 390 px, empty: no sideways scroll, no axe violation", async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    const base = server?.url ?? "";
    await page.setViewportSize({ width: 390, height: 844 });
    const failures: string[] = [];
    const login = new LoginPage(page);
    await page.goto(`${base}/login`);
    await checkPage(page, "/login", failures, testInfo);
    await login.signIn("admin@new.example", PASSWORD);
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();

    // A route with a parameter is asked for one that does not exist: its not-found page.
    const paths: Record<string, string> = {
      "/endpoints/[key]": "/endpoints/no.such-endpoint",
      "/endpoints/[key]/edit": "/endpoints/no.such-endpoint/edit",
      "/budgets/[key]": "/budgets/no.such-budget",
      "/budgets/[key]/edit": "/budgets/no.such-budget/edit",
      "/plans/[key]": "/plans/no-such-plan",
      "/accounts/[account]": "/accounts/acct_never_seen",
      "/changes/[id]": "/changes/1",
      "/refusals/[id]": "/refusals/1",
      "/reconciliation/sources/[id]": "/reconciliation/sources/1",
    };
    const routes = pageRoutes().filter((r) => r !== "/login");
    for (const route of routes) {
      const path = paths[route] ?? route;
      await page.goto(`${base}${path}`);
      await checkPage(page, path, failures, testInfo);
    }
    expect(routes.length).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });
});
