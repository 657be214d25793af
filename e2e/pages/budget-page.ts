import { expect, type Locator, type Page } from "@playwright/test";
import { ConfirmDialog } from "./control-pages";

/** A budget's page: its kill and restore buttons (each behind a confirmation). */
export class BudgetPage {
  constructor(
    readonly page: Page,
    readonly budgetKey: string,
  ) {}

  async goto(): Promise<void> {
    await this.page.goto(`/budgets/${this.budgetKey}`);
    await expect(this.page.getByRole("heading", { level: 1 })).toBeVisible();
  }

  kill(): ConfirmDialog {
    return new ConfirmDialog(this.page, `budget-kill-${this.budgetKey}`);
  }

  restore(): ConfirmDialog {
    return new ConfirmDialog(this.page, `budget-restore-${this.budgetKey}`);
  }
}

/** Where an endpoint reads as stopped by a budget: its card on the overview, or its own page. */
export function budgetStops(scope: Locator | Page): { badge: Locator; stops: Locator } {
  return { badge: scope.getByTestId("state-badge"), stops: scope.getByTestId("budget-stop") };
}
