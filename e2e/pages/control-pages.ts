import { expect, type Locator, type Page } from "@playwright/test";
import type { CeilingScope, CeilingWindow } from "@/lib/vocabulary";

/** The confirmation dialog behind a kill, restore or kill-all button. */
export class ConfirmDialog {
  readonly dialog: Locator;
  readonly reason: Locator;
  readonly confirm: Locator;

  constructor(
    readonly page: Page,
    readonly testId: string,
  ) {
    this.dialog = page.getByRole("dialog");
    this.reason = page.getByTestId(`${testId}-reason`);
    this.confirm = page.getByTestId(`${testId}-confirm`);
  }

  async open(): Promise<void> {
    const button = this.page.getByTestId(this.testId);
    await expect(button).toBeEnabled();
    await button.click();
    await expect(this.dialog).toBeVisible();
  }

  async confirmWith(reason: string): Promise<void> {
    await this.reason.fill(reason);
    await this.confirm.click();
    await expect(this.dialog).toBeHidden();
  }
}

export class OverviewPage {
  readonly banner: Locator;

  constructor(readonly page: Page) {
    this.banner = page.getByTestId("kill-banner");
  }

  async goto(): Promise<void> {
    await this.page.goto("/");
    await expect(this.page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  }

  card(endpointKey: string): Locator {
    return this.page.getByTestId(`endpoint-${endpointKey}`);
  }

  kill(endpointKey: string): ConfirmDialog {
    return new ConfirmDialog(this.page, `kill-${endpointKey}`);
  }

  restore(endpointKey: string): ConfirmDialog {
    return new ConfirmDialog(this.page, `restore-${endpointKey}`);
  }
}

/** One ceiling on the endpoint page, found by its window and scope (its sentence changes with its value). */
export class CeilingSection {
  readonly root: Locator;
  readonly guarantee: Locator;
  readonly value: Locator;
  readonly input: Locator;
  readonly reason: Locator;
  readonly confirm: Locator;
  readonly preview: Locator;
  readonly save: Locator;
  readonly ok: Locator;
  readonly error: Locator;
  readonly conflictCurrent: Locator;

  constructor(page: Page, window: CeilingWindow, scope: CeilingScope = "global") {
    this.root = page.locator(`article[data-ceiling-window="${window}"][data-ceiling-scope="${scope}"]`).first();
    this.guarantee = this.root.getByTestId("guarantee");
    this.value = this.root.getByTestId("ceiling-value");
    this.input = this.root.getByTestId("adjust-value");
    this.reason = this.root.getByTestId("adjust-reason");
    this.confirm = this.root.getByTestId("adjust-confirm");
    this.preview = this.root.getByTestId("adjust-preview");
    this.save = this.root.getByTestId("adjust-save");
    this.ok = this.root.getByTestId("adjust-ok");
    this.error = this.root.getByTestId("adjust-error");
    this.conflictCurrent = this.root.getByTestId("conflict-current");
  }

  /** Types a value once the form is hydrated (before that, typing is lost and no preview runs). */
  async type(value: string): Promise<void> {
    await expect(this.save).toBeEnabled();
    await this.input.fill(value);
  }

  async adjust(value: string, reason: string): Promise<void> {
    await this.type(value);
    await this.reason.fill(reason);
    await this.save.click();
  }
}

export class EndpointPage {
  constructor(
    readonly page: Page,
    readonly endpointKey: string,
  ) {}

  async goto(): Promise<void> {
    await this.page.goto(`/endpoints/${this.endpointKey}`);
    await expect(this.page.getByRole("heading", { name: this.endpointKey, level: 1 })).toBeVisible();
  }

  ceiling(window: CeilingWindow, scope: CeilingScope = "global"): CeilingSection {
    return new CeilingSection(this.page, window, scope);
  }

  kill(): ConfirmDialog {
    return new ConfirmDialog(this.page, "kill-endpoint");
  }

  restore(): ConfirmDialog {
    return new ConfirmDialog(this.page, "restore-endpoint");
  }
}

export class AuditPage {
  readonly rows: Locator;

  constructor(readonly page: Page) {
    this.rows = page.getByTestId("audit-row");
  }

  async goto(filters: Record<string, string> = {}): Promise<void> {
    const query = new URLSearchParams(filters).toString();
    await this.page.goto(query ? `/audit?${query}` : "/audit");
    await expect(this.page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
  }
}
