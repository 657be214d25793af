import { expect, test, type Browser } from "@playwright/test";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";

const DEMO_APPROVER = "approver@ceilings.local";
const ENDPOINT = "llm.embed";

// An override that ends by itself, from the endpoint's page: a lasting lowering is one admin's; the
// same lowering set to end is a raise at its end, asked of a second admin, and once approved the
// page says until when it binds. A typed end out of range is refused and saves nothing.
test("an override that ends: refused out of range, asked when it ends below the account's value, shown with its end once approved", async ({ page }) => {
  await signedIn(page, DEMO_ADMIN, `/endpoints/${ENDPOINT}`);
  const form = page.locator('[data-testid^="override-form-"]').first();
  const account = `acct-ends-${Date.now().toString(36)}`;
  // A form action resets the form: every field is typed again for each try.
  const fill = async (ends: string) => {
    await form.getByLabel("Billing account").fill(account);
    await form.getByLabel("Value for this account").fill("1000");
    await form.getByLabel("Reason").fill("trial week");
    await form.getByLabel("Ends after (hours, optional)").fill(ends);
  };
  const submit = async (ends: string) => {
    await fill(ends);
    await form.getByRole("button", { name: "Set override" }).click();
  };

  await submit("1e3");
  await expect(page.getByTestId("override-error")).toContainText("an override ends after 1 to 744 whole hours");
  await expect(page.getByTestId("override-list").filter({ hasText: account })).toHaveCount(0);

  // 1,000 for 48 hours, below the ceiling's own 2,000,000: its end is a raise.
  await submit("48");
  await expect(page.getByTestId("override-error")).toContainText("that ends after 2 days");
  await fill("48");
  await page.getByTestId("ask-approval").click();
  await expect(page.getByTestId("ask-approval-ok")).toBeVisible();
  const request = (await page.getByTestId("ask-approval-link").getAttribute("href")) ?? "";

  const approverContext = await (page.context().browser() as Browser).newContext();
  const approver = await approverContext.newPage();
  await signedIn(approver, DEMO_APPROVER, request);
  await expect(approver.getByText("for 2 days")).toBeVisible();
  await approver.getByTestId("approve-request").click();
  await expect(approver.getByTestId("request-state")).toHaveAttribute("data-state", "applied");
  await approverContext.close();

  await page.reload();
  const row = page.getByTestId("override-list").locator("li", { hasText: account });
  await expect(row).toContainText("1,000");
  await expect(row).toContainText(/until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
});
