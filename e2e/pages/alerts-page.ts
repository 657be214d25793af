import { expect, type Locator, type Page } from "@playwright/test";

export class AlertsPage {
  readonly rows: Locator;
  readonly summary: Locator;
  readonly badge: Locator;
  readonly badgeCount: Locator;
  readonly workerStatus: Locator;

  constructor(readonly page: Page) {
    this.rows = page.getByTestId("alert-row");
    this.summary = page.getByTestId("alerts-summary");
    this.badge = page.getByTestId("alerts-badge");
    this.badgeCount = page.getByTestId("alerts-badge-count");
    this.workerStatus = page.getByTestId("worker-status");
  }

  async goto(query: Record<string, string> = {}): Promise<void> {
    const qs = new URLSearchParams(query).toString();
    await this.page.goto(qs ? `/alerts?${qs}` : "/alerts");
  }

  row(kind: string): Locator {
    return this.page.locator(`[data-testid="alert-row"][data-kind="${kind}"]`);
  }

  async count(): Promise<number> {
    if ((await this.badgeCount.count()) === 0) return 0;
    return Number(await this.badgeCount.innerText());
  }
}

export class DestinationsPage {
  readonly rows: Locator;
  constructor(readonly page: Page) {
    this.rows = page.getByTestId("destination-row");
  }

  async goto(): Promise<void> {
    await this.page.goto("/alerts/destinations");
  }

  async add(p: { name: string; kind: "slack" | "webhook"; url: string }): Promise<void> {
    const button = this.page.getByRole("button", { name: "Add destination" });
    // Disabled until hydrated: a click before that would not run the action.
    await expect(button).toBeEnabled();
    await this.page.getByLabel("Name").fill(p.name);
    await this.page.getByLabel("Kind").selectOption(p.kind);
    await this.page.getByLabel("URL").fill(p.url);
    await button.click();
  }
}
