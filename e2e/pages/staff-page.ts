import { expect, type Locator, type Page } from "@playwright/test";

export class StaffPage {
  readonly addForm: Locator;
  readonly generatedPassword: Locator;

  constructor(readonly page: Page) {
    this.addForm = page.locator("form", { has: page.getByRole("heading", { name: "Add a staff member" }) });
    this.generatedPassword = page.getByTestId("generated-password");
  }

  async goto(): Promise<void> {
    await this.page.goto("/staff");
    await expect(this.page.getByRole("heading", { name: "Staff", exact: true })).toBeVisible();
  }

  row(email: string): Locator {
    return this.page.locator(`[data-testid="staff-row"][data-email="${email}"]`);
  }

  /** Adds a member with a generated password and returns it as shown once on the page. */
  async addWithGeneratedPassword(email: string, role: "viewer" | "operator" | "admin"): Promise<string> {
    await this.addForm.getByLabel("Email").fill(email);
    await this.addForm.getByLabel("Role").selectOption(role);
    await this.addForm.getByRole("button", { name: "Add staff member" }).click();
    await expect(this.generatedPassword).toBeVisible();
    await expect(this.row(email)).toBeVisible();
    return (await this.generatedPassword.textContent())?.trim() ?? "";
  }

  async disable(email: string): Promise<void> {
    this.page.once("dialog", (dialog) => void dialog.accept());
    await this.row(email).getByRole("button", { name: "Disable" }).click();
    await expect(this.row(email)).toContainText("disabled");
  }
}
