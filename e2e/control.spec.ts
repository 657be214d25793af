import { expect, test, type Browser, type Page } from "@playwright/test";
import { AuditPage, EndpointPage, OverviewPage } from "./pages/control-pages";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";
import { chartsDrawn, expectNoSidewaysScroll } from "./pages/overflow";

const DEMO_OPERATOR = "operator@ceilings.local";
const DEMO_APPROVER = "approver@ceilings.local";
const EMAIL = "email.subscribe";

async function newSignedInPage(browser: Browser, email: string, next: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signedIn(page, email, next);
  return page;
}

// The tests share one e2e database and run in order: each leaves the demo endpoint live.
test.describe.configure({ mode: "serial" });

test.describe("dashboard control", () => {
  test("a typo is rejected and nothing is saved; a value above the bounds is clamped, previewed first and logged", async ({ page }, testInfo) => {
    await signedIn(page, DEMO_ADMIN, `/endpoints/${EMAIL}`);
    const endpoint = new EndpointPage(page, EMAIL);
    const daily = endpoint.ceiling("utc_day");
    await expect(daily.guarantee).toHaveText("at most 100 emails per UTC day");
    await expect(page.getByTestId("derived-default")).toHaveText("3,000 emails a month ≈ 100 a day");

    await daily.type("1e9");
    await expect(daily.preview).toHaveText("limit must be a whole number, got '1e9'");
    await daily.adjust("1e9", "typo check");
    await expect(daily.error).toContainText("limit must be a whole number, got '1e9'");
    await expect(daily.value).toHaveText("100");

    await daily.type("1000");
    await expect(daily.preview).toContainText("you typed 1,000; 150 will apply, the maximum");
    // A raise is asked for, not saved: a second admin applies it (e2e/change-control.spec.ts).
    await daily.reason.fill("newsletter launch");
    await page.getByTestId("ask-approval").click();
    await expect(page.getByTestId("ask-approval-ok")).toBeVisible();
    await expect(daily.value).toHaveText("100");
    const request = (await page.getByTestId("ask-approval-link").getAttribute("href")) ?? "";
    const approver = await newSignedInPage(page.context().browser() as Browser, DEMO_APPROVER, request);
    await approver.getByTestId("approve-request").click();
    await expect(approver.getByTestId("request-state")).toHaveAttribute("data-state", "applied");
    await approver.context().close();
    await page.reload();
    await expect(daily.value).toHaveText("150");
    await expect(daily.guarantee).toHaveText("at most 150 emails per UTC day");

    await testInfo.attach("endpoint page", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    const audit = new AuditPage(page);
    await audit.goto({ endpoint: EMAIL, action: "ceiling.adjust" });
    const row = audit.rows.first();
    // Applied by the approver; the typed 1000 and the clamp stay on the record.
    await expect(row).toContainText(DEMO_APPROVER);
    await expect(row).toContainText("1000");
    await expect(row).toContainText("100 → 150");
    await expect(row).toContainText("yes");
    await expect(row).toContainText("newsletter launch");

    // The refused typo saved nothing, but staff can see it was tried.
    await audit.goto({ endpoint: EMAIL, action: "ceiling.rejected" });
    await expect(audit.rows.first()).toContainText("1e9");
  });

  test("two admins on the same ceiling: the second save is a conflict showing the value in force", async ({ browser }) => {
    const first = await newSignedInPage(browser, DEMO_ADMIN, `/endpoints/${EMAIL}`);
    const second = await newSignedInPage(browser, DEMO_ADMIN, `/endpoints/${EMAIL}`);
    const a = new EndpointPage(first, EMAIL).ceiling("utc_day");
    const b = new EndpointPage(second, EMAIL).ceiling("utc_day");
    await expect(b.value).toHaveText("150");

    await a.adjust("120", "first editor");
    await expect(a.ok).toContainText("Saved: 150 → 120");

    await b.adjust("90", "second editor");
    await expect(b.error).toContainText("someone else changed this ceiling first: it is now 120");
    await expect(b.conflictCurrent).toContainText("Value in force now: 120");
    await first.reload();
    await expect(new EndpointPage(first, EMAIL).ceiling("utc_day").value).toHaveText("120");

    // Having seen the current value, the second editor's next save is deliberate and goes through.
    await b.adjust("100", "back to the plan default");
    await expect(b.ok).toContainText("Saved: 120 → 100");
    await first.context().close();
    await second.context().close();
  });

  test("an operator kills an endpoint from the overview, the banner shows it everywhere, and restore puts the values back", async ({ page }, testInfo) => {
    await signedIn(page, DEMO_OPERATOR);
    const overview = new OverviewPage(page);
    await overview.goto();
    await expect(overview.banner).toBeHidden();

    // Keyboard only: focus the kill button, open with Enter, Escape cancels without a change.
    const killButton = page.getByTestId(`kill-${EMAIL}`);
    await expect(killButton).toBeEnabled();
    await killButton.focus();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("dialog")).toBeVisible();
    await expect(page.getByTestId(`kill-${EMAIL}-reason`)).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("dialog")).toBeHidden();
    await expect(overview.banner).toBeHidden();

    const kill = overview.kill(EMAIL);
    await kill.open();
    await kill.confirmWith("bounce storm");
    await expect(overview.banner).toContainText(EMAIL);
    await expect(overview.banner).toContainText(`by ${DEMO_OPERATOR}`);
    await expect(overview.card(EMAIL).getByTestId("state-badge").first()).toHaveText("killed");
    await testInfo.attach("overview with a kill", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    // The banner is on every dashboard page, and an operator may not change values alone.
    await new AuditPage(page).goto();
    await expect(page.getByTestId("kill-banner")).toContainText(EMAIL);
    const endpoint = new EndpointPage(page, EMAIL);
    await endpoint.goto();
    await expect(endpoint.ceiling("utc_day").guarantee).toHaveText("killed: no emails at all until restored");
    // An operator may ask for a raise there, but has no Save.
    await expect(endpoint.ceiling("utc_day").save).toHaveCount(0);

    const restore = endpoint.restore();
    await restore.open();
    await restore.confirmWith("bounces handled");
    await expect(page.getByTestId("kill-banner")).toBeHidden();
    await expect(endpoint.ceiling("utc_day").guarantee).toHaveText("at most 100 emails per UTC day");
    await expect(endpoint.ceiling("billing_month").guarantee).toHaveText("at most 3,000 emails per billing month (from the 1st)");

    const audit = new AuditPage(page);
    await audit.goto({ endpoint: EMAIL, actor: DEMO_OPERATOR });
    await expect(audit.rows.filter({ hasText: "ceiling.kill" }).first()).toContainText("bounce storm");
    await expect(audit.rows.filter({ hasText: "ceiling.restore" }).first()).toContainText("bounces handled");
  });

  test("the overview and endpoint page read at phone width and in dark mode", async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await signedIn(page, DEMO_ADMIN);
    const overview = new OverviewPage(page);
    await overview.goto();
    // The overview names the database node it reads: on a Patroni cluster it moves with failovers.
    await expect(page.getByTestId("database-node")).toContainText("Database: primary");
    await chartsDrawn(page);
    await expectNoSidewaysScroll(page, "/");
    await testInfo.attach("overview, phone, dark", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
    await new EndpointPage(page, EMAIL).goto();
    await chartsDrawn(page);
    await expectNoSidewaysScroll(page, `/endpoints/${EMAIL}`);
    await testInfo.attach("endpoint page, phone, dark", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  });
});
