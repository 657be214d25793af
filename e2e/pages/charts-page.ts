import { expect, type Locator, type Page } from "@playwright/test";

/**
 * The spend charts of one endpoint page. Recharts draws legend icons as svg.recharts-surface too,
 * so the plot is found as the surface directly inside the chart's wrapper, within our figure.
 */
export class SpendCharts {
  readonly daily: Locator;
  readonly dailyPlot: Locator;
  readonly bars: Locator;
  readonly ceilingLine: Locator;
  readonly killAreas: Locator;
  readonly dailyRows: Locator;
  readonly month: Locator;
  readonly cumulativeLine: Locator;
  readonly projectionLine: Locator;

  constructor(readonly page: Page) {
    this.daily = page.getByTestId("daily-spend-chart");
    this.dailyPlot = this.daily.locator(".recharts-wrapper > svg.recharts-surface");
    this.bars = this.dailyPlot.locator(".spend-bars .recharts-bar-rectangle path, .spend-bars path.recharts-rectangle");
    this.ceilingLine = this.dailyPlot.locator(".ceiling-line path.recharts-line-curve");
    this.killAreas = this.dailyPlot.locator(".kill-period");
    this.dailyRows = this.daily.locator("table tbody tr");
    this.month = page.getByTestId("month-to-date-chart");
    this.cumulativeLine = this.month.locator(".recharts-wrapper > svg.recharts-surface .cumulative-line path.recharts-line-curve");
    this.projectionLine = this.month.locator(".recharts-wrapper > svg.recharts-surface .projection-line path.recharts-line-curve");
  }

  async goto(endpointKey: string): Promise<void> {
    await this.page.goto(`/endpoints/${encodeURIComponent(endpointKey)}`);
    await expect(this.daily).toBeVisible();
    await expect(this.dailyPlot).toHaveCount(1);
  }

  range(days: 30 | 90): Locator {
    return this.daily.getByRole("group", { name: "Range" }).getByRole("button", { name: `${days} days` });
  }

  mode(label: string): Locator {
    return this.daily.getByRole("group", { name: "Show spend in" }).getByRole("button", { name: label });
  }
}
