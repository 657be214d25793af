import { expect, type Locator, type Page } from "@playwright/test";

export const DEMO_PASSWORD = "ceilings-demo";
export const DEMO_ADMIN = "admin@ceilings.local";
export const DEMO_VIEWER = "viewer@ceilings.local";

export class LoginPage {
  readonly email: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.email = page.getByLabel("Email");
    this.password = page.getByLabel("Password");
    this.submit = page.getByRole("button", { name: "Sign in" });
    this.error = page.getByTestId("login-error");
  }

  async goto(next?: string): Promise<void> {
    await this.page.goto(next ? `/login?next=${encodeURIComponent(next)}` : "/login");
    await this.waitReady();
  }

  /** The button stays disabled until the form is hydrated; typing before that is lost. */
  async waitReady(): Promise<void> {
    await expect(this.submit).toBeEnabled();
  }

  async signIn(email: string, password: string): Promise<void> {
    await this.waitReady();
    await this.email.fill(email);
    await this.password.fill(password);
    await this.submit.click();
  }
}

/** Signs in as a demo member on the way to `next`, and waits until the dashboard names them. */
export async function signedIn(page: Page, email: string, next = "/"): Promise<void> {
  const login = new LoginPage(page);
  await login.goto(next);
  await login.signIn(email, DEMO_PASSWORD);
  await expect(page.getByTestId("signed-in-as")).toContainText(email);
}
