import { expect, type Page, test } from "@playwright/test";
import { count } from "drizzle-orm";
import { endpoints } from "@/db/schema";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { addStaff } from "@/lib/auth";
import { NEEDS_GLOBAL_HINT, UNBOUNDED_SENTENCE } from "@/lib/catalog/spec";
import { ApiKeysPage } from "./pages/api-keys-page";
import { type AppServer, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { LoginPage } from "./pages/login-page";

// A new team's first day: an empty database with one admin, no demo. The admin puts their own
// endpoint under ceilings in the browser, makes an API key for it, and a service's first
// reservation is granted at once. Operators and viewers see no catalog controls.

const PASSWORD = "correct horse battery staple 42";
const system = { type: "system", name: "e2e" } as const;

test.describe("the endpoint catalog on an empty database", () => {
  test.skip(!hasTestDatabase(), "needs TEST_DATABASE_URL (npm test sets it)");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    t = await createTestDatabase("e2e_catalog", { max: 2 });
    for (const role of ["admin", "operator", "viewer"] as const) {
      await addStaff(t.db, { email: `${role}@team.example`, role, password: PASSWORD, actor: system, bcryptCost: 4 });
    }
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
  });

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  async function signIn(page: Page, role: string): Promise<void> {
    const login = new LoginPage(page);
    await page.goto(`${server?.url}/login`);
    await login.signIn(`${role}@team.example`, PASSWORD);
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  }

  test("an admin creates an endpoint with two ceilings and a cooldown, makes a key, and the first reservation is granted", async ({ page }) => {
    test.setTimeout(90_000);
    const started = Date.now();
    await signIn(page, "admin");
    await expect(page.getByTestId("empty-catalog")).toBeVisible();
    await page.getByTestId("empty-new-endpoint").click();
    const form = page.getByTestId("new-endpoint-form");
    await expect(page.getByTestId("create-endpoint")).toBeEnabled();

    await form.getByLabel("Key").fill("sms.otp");
    await form.getByLabel("Name").fill("One-time code SMS");
    await form.getByLabel("Unit (plural)").fill("messages");
    await form.getByLabel("Price of one unit (USD)").fill("0.0079");
    await expect(form.getByTestId("part-price-preview-0")).toHaveText("$0.0079 per message");
    await form.getByLabel("Plan allowance per billing month").fill("3000");
    await form.getByLabel("Per-call max").fill("1");
    // Said once: it read "Needs at least one global ceiling: an endpoint needs at least one global ceiling: ...".
    await expect(page.getByTestId("needs-global")).toHaveText(NEEDS_GLOBAL_HINT);
    // Created without a ceiling: refused, with the reason said once, in the message and beside the ceilings.
    await form.getByLabel("Reason").fill("first try");
    await page.getByTestId("create-endpoint").click();
    await expect(page.getByTestId("create-endpoint-error")).toHaveText(`ceilings: ${UNBOUNDED_SENTENCE}`);
    await expect(page.getByTestId("field-error-ceilings")).toHaveText(UNBOUNDED_SENTENCE);
    await page.getByTestId("propose-ceilings").click();
    // The plan's defensible pair, stated before anything is saved.
    const sentences = form.getByTestId("ceiling-sentence");
    await expect(sentences.nth(0)).toContainText("at most 100 messages per UTC day");
    await expect(sentences.nth(0)).toContainText("worst case $0.79 a day");
    await expect(sentences.nth(1)).toContainText("at most 3,000 messages per billing month (from the 1st)");
    await expect(page.getByTestId("needs-global")).toHaveCount(0);

    await page.getByTestId("add-ceiling-row").click();
    const cooldown = form.getByTestId("ceiling-row-ceilings[2]");
    await cooldown.getByLabel("Window").selectOption("first_hit");
    await cooldown.getByLabel("Cooldown seconds").fill("60");
    await cooldown.getByLabel("Destination is").selectOption("phone");
    await cooldown.getByLabel("Metric").selectOption("calls");
    await cooldown.getByLabel("Value").fill("1");
    await cooldown.getByLabel("Max").fill("5");
    await cooldown.getByLabel("Default").fill("1");
    await expect(sentences.nth(2)).toContainText("at most 1 message per phone number per minute");
    await expect(page.getByTestId("worst-case")).toContainText("$0.79 a day (100 messages)");

    await form.getByLabel("Reason").fill("OTP provider goes live");
    await page.getByTestId("create-endpoint").click();
    await expect(page).toHaveURL(/\/endpoints\/sms\.otp$/);
    await expect(page.getByRole("heading", { name: "sms.otp", level: 1 })).toBeVisible();
    await expect(page.getByText("at most 1 message per phone number per minute").first()).toBeVisible();

    const keys = new ApiKeysPage(page);
    await page.goto(`${server?.url}/api-keys`);
    const secret = await keys.createForAccount("otp service", "acct_first", ["sms.otp"]);
    // What `curl` would send.
    const reserve = (destination: string) =>
      fetch(`${server?.url}/api/v1/reservations`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "sms.otp", amount: 1, destination }),
      });
    const first = await reserve("+1 415 555 0100");
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ reservationId: expect.any(String) });
    // The same phone number, written another way, is inside its cooldown.
    const again = await reserve("(415) 555-0100");
    expect(again.status).toBe(429);
    expect(await again.json()).toMatchObject({ gate: "cooldown" });
    console.log(`catalog e2e: empty database to a first granted reservation in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  for (const role of ["operator", "viewer"] as const) {
    test(`an ${role} sees no New, Edit or Archive controls and cannot open the catalog pages`, async ({ page }) => {
      await signIn(page, role);
      await expect(page.getByTestId("new-endpoint")).toHaveCount(0);
      const before = (await t?.db.select({ n: count() }).from(endpoints))?.[0]?.n ?? 0;
      if (before > 0) {
        await page.goto(`${server?.url}/endpoints/sms.otp`);
        await expect(page.getByRole("heading", { name: "sms.otp", level: 1 })).toBeVisible();
        await expect(page.getByTestId("edit-endpoint")).toHaveCount(0);
      }
      await page.goto(`${server?.url}/endpoints/new`);
      await expect(page).toHaveURL(/\/forbidden/);
      await page.goto(`${server?.url}/endpoints/sms.otp/edit`);
      await expect(page).toHaveURL(/\/forbidden/);
    });
  }
});
