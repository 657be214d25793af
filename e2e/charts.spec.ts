import { expect, test } from "@playwright/test";
import { SpendCharts } from "./pages/charts-page";
import { DEMO_VIEWER, signedIn } from "./pages/login-page";

// Reads the seeded demo (35 days of history; webhook.notify killed for 45 minutes 8 days ago).
// Read-only: no test here changes data, so the other suites' order does not matter.

test.describe("spend charts", () => {
  test("the endpoint page draws daily spend as bars under the ceiling line, and switches 30/90 days and units/money", async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await signedIn(page, DEMO_VIEWER, "/endpoints/email.subscribe");
    const charts = new SpendCharts(page);
    await charts.goto("email.subscribe");

    await expect(charts.range(30)).toHaveAttribute("aria-pressed", "true");
    await expect(charts.dailyRows).toHaveCount(30);
    // Every seeded day has traffic, so each of the 30 days has a bar; but a run that crosses UTC
    // midnight after the seed has a new today with no traffic yet, and no bar for it.
    const todayUnits = (await charts.dailyRows.last().locator("td").nth(0).innerText()).trim();
    await expect(charts.bars).toHaveCount(/^0\b/.test(todayUnits) ? 29 : 30);
    await expect(charts.ceilingLine).toHaveCount(1);
    await expect(charts.ceilingLine).toHaveAttribute("d", /^M[\d.]+,[\d.]+(?:[HVL][\d.,]+)+$/);
    await expect(charts.daily.locator("figcaption")).toContainText("Daily ceiling now 100 emails");
    await testInfo.attach("email.subscribe spend, 30 days", { body: await charts.daily.screenshot(), contentType: "image/png" });

    await charts.range(90).click();
    await expect(charts.range(90)).toHaveAttribute("aria-pressed", "true");
    await expect(charts.daily).toHaveAttribute("data-range", "90");
    await expect(charts.dailyRows).toHaveCount(90);
    await expect(charts.daily.locator("figcaption")).toContainText("90 days from");
    // The demo has 35 days of history: the other 55 days are zeros and draw no bar.
    await expect(charts.bars).toHaveCount(35);

    const moneyTicks = charts.dailyPlot.locator(".recharts-cartesian-axis-tick-value", { hasText: "$" });
    await expect(moneyTicks).toHaveCount(0);
    await charts.mode("USD").click();
    await expect(charts.daily).toHaveAttribute("data-mode", "money");
    await expect(moneyTicks.first()).toBeVisible();
    await testInfo.attach("email.subscribe spend, 90 days in money", { body: await charts.daily.screenshot(), contentType: "image/png" });

    await expect(charts.month).toContainText("Month to date");
    await expect(charts.month).toContainText("straight line");
    await expect(charts.cumulativeLine).toHaveCount(1);
    await expect(charts.projectionLine).toHaveCount(1);
  });

  test("a kill period is shaded, and the charts fit a phone", async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signedIn(page, DEMO_VIEWER, "/endpoints/webhook.notify");
    const charts = new SpendCharts(page);
    await charts.goto("webhook.notify");
    await expect(charts.killAreas).toHaveCount(1);
    await expect(charts.daily.locator("figcaption")).toContainText("Killed 1 time in this range");
    const box = await charts.dailyPlot.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(200);
    expect(box?.width ?? 1000).toBeLessThanOrEqual(390);
    await testInfo.attach("webhook.notify spend on a phone", { body: await charts.daily.screenshot(), contentType: "image/png" });
  });

  test("the overview shows a 14-day trend per endpoint", async ({ page }) => {
    await signedIn(page, DEMO_VIEWER, "/");
    for (const key of ["email.subscribe", "sms.password-reset", "llm.chat", "webhook.notify"]) {
      const spark = page.getByTestId(`sparkline-${key}`);
      await expect(spark.getByRole("img")).toHaveAttribute("aria-label", /^Last 14 days: [\d,]+ \w+ \(\$[\d.,]+\)/);
      await expect(spark.locator(".recharts-area-area")).toHaveCount(1);
    }
  });
});
