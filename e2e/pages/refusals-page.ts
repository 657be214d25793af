import { expect, type Locator, type Page } from "@playwright/test";

/** The refusal log: its filter form, table, pager and export link. */
export class RefusalsPage {
  readonly endpoint: Locator;
  readonly gate: Locator;
  readonly filter: Locator;
  readonly rows: Locator;
  readonly exportLink: Locator;
  readonly count: Locator;

  constructor(readonly page: Page) {
    const form = page.getByRole("form", { name: "Filter refusals" });
    this.endpoint = form.getByLabel("Endpoint");
    this.gate = form.getByLabel("Gate");
    this.filter = form.getByRole("button", { name: "Filter" });
    this.rows = page.getByTestId("refusal-row");
    this.exportLink = page.getByTestId("refusals-export");
    this.count = page.getByTestId("refusals-count");
  }

  async goto(query = ""): Promise<void> {
    await this.page.goto(`/refusals${query}`);
    await expect(this.count).toBeVisible();
  }

  async filterBy(params: { endpoint?: string; gate?: string }): Promise<void> {
    if (params.endpoint) await this.endpoint.selectOption(params.endpoint);
    if (params.gate) await this.gate.selectOption(params.gate);
    await this.filter.click();
  }
}
