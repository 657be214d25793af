import { expect, test } from "@playwright/test";
import { DEMO_ADMIN, DEMO_PASSWORD, LoginPage } from "./pages/login-page";
import { overflowing } from "./pages/overflow";

// No page scrolls sideways at phone width (390 px): wide tables scroll inside their own box.
// Every page of the dashboard, as an admin (who sees every control), plus the sign-in page.

const PAGES = ["/", "/endpoints/email.subscribe", "/endpoints/llm.chat", "/refusals", "/alerts", "/alerts/destinations", "/api-keys", "/audit", "/staff", "/forbidden"];

test("no page scrolls sideways at 390 px", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 390, height: 844 });
  const login = new LoginPage(page);
  await login.goto("/");
  expect(await overflowing(page), "/login").toEqual([]);
  await login.signIn(DEMO_ADMIN, DEMO_PASSWORD);
  await expect(page.getByTestId("signed-in-as")).toContainText(DEMO_ADMIN);

  // A refusal's detail page: the first row of the log.
  await page.goto("/refusals");
  const detail = await page.getByTestId("refusals-table").locator("a[href^='/refusals/']").first().getAttribute("href");
  const pages = detail ? [...PAGES, detail] : PAGES;

  const found: Record<string, string[]> = {};
  for (const path of pages) {
    await page.goto(path);
    await page.waitForLoadState("networkidle");
    const wide = await overflowing(page);
    if (wide.length > 0) found[path] = wide;
    await testInfo.attach(`phone ${path}`, { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  }
  expect(detail, "a refusal detail link on /refusals").toBeTruthy();
  expect(found).toEqual({});
});
