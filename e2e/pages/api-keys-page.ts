import { expect, type Locator, type Page } from "@playwright/test";
import { DEMO_ADMIN, signedIn } from "./login-page";

/** /api-keys: the list of keys, the create form (admins) and revoke buttons. */
export class ApiKeysPage {
  readonly rows: Locator;
  readonly name: Locator;
  readonly account: Locator;
  readonly trusted: Locator;
  /** What the key may do: spend on endpoints (scope reserve), as opposed to accounts. */
  readonly spends: Locator;
  readonly create: Locator;
  readonly secret: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.rows = page.getByTestId("api-key-row");
    this.name = page.getByLabel("Name", { exact: true });
    this.account = page.getByLabel("Billing account", { exact: true });
    this.trusted = page.getByRole("radio", { name: /^Trusted service/ });
    this.spends = page.getByRole("radio", { name: /^Spend on endpoints/ });
    this.create = page.getByRole("button", { name: "Create API key" });
    this.secret = page.getByTestId("api-key-secret");
    this.error = page.getByTestId("api-key-action-error");
  }

  async goto(): Promise<void> {
    await this.page.goto("/api-keys");
    await expect(this.page.getByRole("heading", { name: "API keys", level: 1 })).toBeVisible();
  }

  endpoint(key: string): Locator {
    return this.page.getByRole("checkbox", { name: new RegExp(`^${key.replace(/\./g, "\\.")}\\b`) });
  }

  row(prefix: string): Locator {
    return this.page.locator(`[data-testid="api-key-row"][data-prefix="${prefix}"]`);
  }

  /** Creates a key for one account and returns the secret shown once. */
  async createForAccount(name: string, account: string, endpoints: string[]): Promise<string> {
    await expect(this.create).toBeEnabled();
    await this.name.fill(name);
    await this.page.getByRole("radio", { name: /^One billing account/ }).check();
    await this.spends.check();
    await this.account.fill(account);
    for (const e of endpoints) await this.endpoint(e).check();
    return this.submitForSecret();
  }

  /** Creates a key for a trusted service (it names the account of each call) and returns the secret shown once. */
  async createTrusted(name: string, endpoints: string[]): Promise<string> {
    await expect(this.create).toBeEnabled();
    await this.name.fill(name);
    await this.trusted.check();
    await this.spends.check();
    for (const e of endpoints) await this.endpoint(e).check();
    return this.submitForSecret();
  }

  /** The scopes a key's row lists. */
  scopes(prefix: string): Locator {
    return this.row(prefix).getByTestId("api-key-scopes");
  }

  /** Creates a trusted key for accounts (no endpoint) with these accounts scopes and returns the secret shown once. */
  async createForAccounts(name: string, scopes: ("accounts:read" | "accounts:write")[]): Promise<string> {
    await expect(this.create).toBeEnabled();
    await this.name.fill(name);
    await this.trusted.check();
    await this.page.getByRole("radio", { name: /^Accounts \(a billing service\)/ }).check();
    for (const scope of ["accounts:read", "accounts:write"] as const) {
      const box = this.page.getByRole("checkbox", { name: new RegExp(`^${scope}\\b`) });
      if (scopes.includes(scope)) await box.check();
      else await box.uncheck();
    }
    return this.submitForSecret();
  }

  /** Submits the form and returns the new key's secret: not the one a key created before left shown. */
  private async submitForSecret(): Promise<string> {
    const before = (await this.secret.count()) > 0 ? await this.secret.textContent() : null;
    await this.create.click();
    await expect(this.secret).toBeVisible();
    if (before) await expect(this.secret).not.toHaveText(before);
    return (await this.secret.textContent()) ?? "";
  }

  /** Revokes through the confirmation dialog. */
  async revoke(prefix: string): Promise<void> {
    this.page.once("dialog", (dialog) => void dialog.accept());
    const row = this.row(prefix);
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect(row).toContainText("revoked");
  }
}

/** Signs in as the demo admin, opens /api-keys and creates a key for one account: its secret. */
export async function adminCreatesKey(page: Page, name: string, account: string, endpoints: string[]): Promise<string> {
  await signedIn(page, DEMO_ADMIN, "/api-keys");
  const keys = new ApiKeysPage(page);
  await keys.goto();
  return keys.createForAccount(name, account, endpoints);
}
