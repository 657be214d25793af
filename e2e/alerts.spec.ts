import { expect, test } from "@playwright/test";
import { AlertsPage, DestinationsPage } from "./pages/alerts-page";
import { DEMO_ADMIN, DEMO_VIEWER, signedIn } from "./pages/login-page";

const DEMO_OPERATOR = "operator@ceilings.local";

// The demo seed leaves one open fail-closed alert and two acknowledged threshold alerts.
test.describe.configure({ mode: "serial" });

test.describe("alert inbox", () => {
  test("a viewer reads the inbox, its links and the worker state, but cannot acknowledge", async ({ page }) => {
    await signedIn(page, DEMO_VIEWER, "/alerts");
    const inbox = new AlertsPage(page);
    await expect(inbox.summary).toContainText("unacknowledged");
    await expect(inbox.summary).toContainText("operators and admins acknowledge them");
    await expect(inbox.workerStatus).toBeVisible();
    const open = inbox.row("fail_closed").first();
    await expect(open).toHaveAttribute("data-acknowledged", "false");
    await expect(open.getByRole("link", { name: "Spend chart" })).toHaveAttribute("href", /^\/endpoints\/[a-z0-9._-]+#spend$/);
    await expect(open.getByRole("link", { name: "Refusals in this window" })).toHaveAttribute("href", /^\/refusals\?endpoint=.+&from=.+&to=.+/);
    await expect(page.getByTestId("acknowledge")).toHaveCount(0);
    expect(await inbox.count()).toBeGreaterThan(0);
  });

  test("an operator filters by kind and acknowledges: the count in the navigation drops", async ({ page }, testInfo) => {
    await signedIn(page, DEMO_OPERATOR, "/alerts");
    const inbox = new AlertsPage(page);
    const before = await inbox.count();
    await inbox.goto({ kind: "fail_closed" });
    await expect(inbox.rows).not.toHaveCount(0);
    for (const kind of await inbox.rows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")))) expect(kind).toBe("fail_closed");
    const open = inbox.page.locator('[data-testid="alert-row"][data-acknowledged="false"]').first();
    const message = await open.getByTestId("alert-message").innerText();
    await testInfo.attach("inbox", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
    await open.getByTestId("acknowledge").click();
    const done = inbox.rows.filter({ hasText: message });
    await expect(done).toHaveAttribute("data-acknowledged", "true");
    await expect(done).toContainText(`acknowledged by ${DEMO_OPERATOR}`);
    await expect.poll(() => inbox.count()).toBe(before - 1);
  });

  test("an admin adds a signed webhook destination; an operator cannot open the page", async ({ page, browser }) => {
    await signedIn(page, DEMO_ADMIN, "/alerts/destinations");
    const destinations = new DestinationsPage(page);
    const name = `e2e hook ${Date.now()}`;
    await destinations.add({ name, kind: "webhook", url: "https://hooks.example.com/ceilings" });
    const row = destinations.rows.filter({ hasText: name });
    await expect(row).toContainText("enabled");
    await row.getByText("show").click();
    await expect(row.getByTestId("signing-secret")).toHaveText(/^[0-9a-f]{64}$/);

    const other = await (await browser.newContext()).newPage();
    await signedIn(other, DEMO_OPERATOR, "/alerts");
    await other.goto("/alerts/destinations");
    await expect(other).toHaveURL(/\/forbidden/);
  });
});
