import { expect, type Locator, type Page } from "@playwright/test";
import { DEMO_PASSWORD, LoginPage } from "./login-page";

export const NAV_LABELS = ["Overview", "Refusals", "Alerts", "Audit", "API keys", "Staff"] as const;

/** The frame around every dashboard page: navigation, who is signed in, sign out. */
export class DashboardShell {
  readonly nav: Locator;
  readonly signedInAs: Locator;
  readonly signOutButton: Locator;

  constructor(readonly page: Page) {
    this.nav = page.getByRole("navigation", { name: "Main" });
    this.signedInAs = page.getByTestId("signed-in-as");
    this.signOutButton = page.getByRole("button", { name: "Sign out" });
  }

  navLink(label: (typeof NAV_LABELS)[number]): Locator {
    return this.nav.getByRole("link", { name: label, exact: true });
  }

  async expectSignedInAs(email: string, role: string): Promise<void> {
    await expect(this.signedInAs).toContainText(email);
    await expect(this.signedInAs).toContainText(role);
  }

  async signOut(): Promise<void> {
    await expect(this.signOutButton).toBeEnabled();
    await this.signOutButton.click();
    await expect(this.page).toHaveURL(/\/login$/);
  }
}

/** Signs in from /login itself and checks that the shell names the member and their role. */
export async function signInAs(page: Page, email: string, role: string, password = DEMO_PASSWORD): Promise<void> {
  const login = new LoginPage(page);
  await login.goto();
  await login.signIn(email, password);
  await new DashboardShell(page).expectSignedInAs(email, role);
}
