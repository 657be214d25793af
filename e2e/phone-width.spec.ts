import { expect, type Page, test } from "@playwright/test";
import { DEMO_BLOCKED } from "@/lib/demo/accounts";
import { DEMO_ADMIN, DEMO_PASSWORD, LoginPage } from "./pages/login-page";
import { checkPage, pageRoutes } from "./pages/page-checks";

// No page scrolls sideways at phone width (390 px), wide tables scroll inside their own box, and
// axe-core finds no accessibility violation (e2e/pages/page-checks.ts).
// Every page of the app (the list is read from app/**/page.tsx, so a new page without a path here
// fails), as an admin (who sees every control), plus the sign-in page: demo endpoints with a
// month of history and an endpoint created here with none, whose charts draw 30 empty days.
// Each page is measured after its charts have drawn, by the document's scroll width, and the
// first row of each of its tables must show every column without scrolling sideways.

const FRESH = `phone.fresh-${Date.now().toString(36)}`;

/** Creates an endpoint with no history through the form, measuring the form on the way. */
async function createFreshEndpoint(page: Page, measure: (label: string) => Promise<void>): Promise<void> {
  await page.goto("/endpoints/new");
  const form = page.getByTestId("new-endpoint-form");
  await expect(page.getByTestId("create-endpoint")).toBeEnabled();
  await measure("/endpoints/new");
  await form.getByLabel("Key").fill(FRESH);
  await form.getByLabel("Name").fill("Phone width, no history");
  await form.getByLabel("Unit (plural)").fill("messages");
  await form.getByLabel("Price of one unit (USD)").fill("0.0079");
  await form.getByLabel("Plan allowance per billing month").fill("3000");
  await form.getByLabel("Per-call max").fill("1");
  await page.getByTestId("propose-ceilings").click();
  // A third row left blank: the form is measured with it, and with its errors, then it goes.
  await page.getByTestId("add-ceiling-row").click();
  await expect(form.locator("fieldset[data-testid^='ceiling-row-']")).toHaveCount(3);
  await measure("/endpoints/new with three ceiling rows");
  await form.getByLabel("Reason").fill("phone width check");
  await page.getByTestId("create-endpoint").click();
  await expect(page.getByTestId("create-endpoint-error")).toBeVisible();
  await measure("/endpoints/new with errors");
  await form.getByTestId("ceiling-row-ceilings[2]").getByRole("button", { name: "Remove this ceiling" }).click();
  // A form action resets the form's own inputs: the reason is typed again.
  await form.getByLabel("Reason").fill("phone width check");
  await page.getByTestId("create-endpoint").click();
  await expect(page).toHaveURL(new RegExp(`/endpoints/${FRESH.replaceAll(".", "\\.")}$`));
}

test("no page scrolls sideways at 390 px or fails axe, a fresh endpoint's included", async ({ page }, testInfo) => {
  // About 45 pages, each measured and run through axe (2-3 s a page on two busy cores).
  test.setTimeout(420_000);
  await page.setViewportSize({ width: 390, height: 844 });
  const failures: string[] = [];
  const measure = (label: string) => checkPage(page, label, failures, testInfo);

  const login = new LoginPage(page);
  await login.goto("/");
  await measure("/login");
  await login.signIn(DEMO_ADMIN, DEMO_PASSWORD);
  await expect(page.getByTestId("signed-in-as")).toContainText(DEMO_ADMIN);

  await createFreshEndpoint(page, measure);
  await page.goto("/refusals");
  const detail = await page.getByTestId("refusals-table").locator("a[href^='/refusals/']").first().getAttribute("href");
  expect(detail, "a refusal detail link on /refusals").toBeTruthy();

  // Each page's paths: demo endpoints with history and the fresh one, which has none.
  const endpoints = ["email.subscribe", "llm.chat", "webhook.notify", FRESH];
  const paths: Record<string, string[]> = {
    "/": ["/"],
    "/login": [], // measured above, signed out
    "/endpoints/new": [], // measured above, empty, filled and refused
    "/endpoints/[key]": endpoints.map((k) => `/endpoints/${k}`),
    "/endpoints/[key]/edit": ["email.subscribe", FRESH].map((k) => `/endpoints/${k}/edit`),
    "/budgets": ["/budgets"],
    "/budgets/new": ["/budgets/new"],
    "/budgets/[key]": ["/budgets/llm-daily", "/budgets/llm-per-account"],
    "/budgets/[key]/edit": ["/budgets/llm-per-account/edit"],
    "/plans": ["/plans"],
    "/plans/new": ["/plans/new"],
    "/plans/[key]": ["/plans/pro", "/plans/default"],
    // A customer with everything, the blocked flooder, one never seen (empty), and top accounts.
    "/accounts": ["/accounts", "/accounts?q=acct_", "/accounts?top=budget-llm-per-account"],
    "/accounts/[account]": ["/accounts/acct_4amezdg4", `/accounts/${DEMO_BLOCKED}`, "/accounts/acct_never_seen"],
    // The demo's raise waiting for a second admin is request #1.
    "/changes": ["/changes"],
    "/changes/[id]": ["/changes/1"],
    // The demo's usage source (a Postmark-style file, lib/demo/reconciliation.ts) is source #1.
    "/reconciliation": ["/reconciliation"],
    "/reconciliation/sources/new": ["/reconciliation/sources/new"],
    "/reconciliation/sources/[id]": ["/reconciliation/sources/1"],
    "/refusals": ["/refusals"],
    "/refusals/[id]": [detail ?? ""],
    "/alerts": ["/alerts"],
    "/alerts/destinations": ["/alerts/destinations"],
    "/api-keys": ["/api-keys"],
    "/audit": ["/audit"],
    "/staff": ["/staff"],
    "/tokens": ["/tokens"],
    "/forbidden": ["/forbidden"],
  };
  const routes = pageRoutes();
  expect(
    routes.filter((r) => !(r in paths)),
    "pages with no path in this test",
  ).toEqual([]);

  for (const p of [...routes.flatMap((r) => paths[r] ?? []), "/endpoints/no.such-endpoint"]) {
    await page.goto(p);
    await measure(p);
  }
  expect(failures).toEqual([]);
});
