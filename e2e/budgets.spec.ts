import { expect, type Page, test } from "@playwright/test";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { addStaff } from "@/lib/auth";
import { ApiKeysPage } from "./pages/api-keys-page";
import { type AppServer, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { ConfirmDialog } from "./pages/control-pages";
import { LoginPage } from "./pages/login-page";

// A team with an LLM bill, on an empty database: an admin prices two models by input and output
// tokens, puts them under one $1.00-a-day budget, and a service reserves through HTTP on both
// until the budget refuses. The Budgets page shows the spend and each model's share; a kill of the
// budget refuses the next call on either model.

const PASSWORD = "correct horse battery staple 42";

test.describe("a budget in money across two priced endpoints", () => {
  test.skip(!hasTestDatabase(), "needs TEST_DATABASE_URL (npm test sets it)");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    t = await createTestDatabase("e2e_budgets", { max: 2 });
    await addStaff(t.db, { email: "admin@team.example", role: "admin", password: PASSWORD, actor: { type: "system", name: "e2e" }, bcryptCost: 4 });
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
  });

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  async function createModel(page: Page, key: string, input: string, output: string): Promise<void> {
    await page.goto(`${server?.url}/endpoints/new`);
    const form = page.getByTestId("new-endpoint-form");
    await expect(page.getByTestId("create-endpoint")).toBeEnabled();
    await form.getByLabel("Key").fill(key);
    await form.getByLabel("Name").fill(`Model ${key}`);
    await form.getByLabel("Unit (plural)").fill("tokens");
    const parts = form.getByTestId("part-rows");
    await parts.getByTestId("part-row-0").getByLabel("Part").fill("input");
    await parts
      .getByTestId("part-row-0")
      .getByLabel(/Price of one unit/)
      .fill(input);
    await parts.getByTestId("add-part").click();
    await parts.getByTestId("part-row-1").getByLabel("Part").fill("output");
    await parts
      .getByTestId("part-row-1")
      .getByLabel(/Price of one unit/)
      .fill(output);
    await expect(parts.getByTestId("part-price-preview-0")).toContainText("per 1M");
    await form.getByLabel("Plan allowance per billing month").fill("30000000");
    await form.getByLabel("Per-call max").fill("20000");
    await page.getByTestId("propose-ceilings").click();
    await form.getByLabel("Reason").fill("a model goes live");
    await page.getByTestId("create-endpoint").click();
    await expect(page).toHaveURL(new RegExp(`/endpoints/${key.replace(".", "\\.")}$`));
  }

  test("an admin prices two models and budgets $1.00 a day over both; the service is refused by the budget, and its kill binds the next call", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    const login = new LoginPage(page);
    await page.goto(`${server?.url}/login`);
    await login.signIn("admin@team.example", PASSWORD);
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();

    // $2.50 and $10 per million input and output tokens; $3 and $15.
    await createModel(page, "llm.alpha", "0.0000025", "0.00001");
    await createModel(page, "llm.beta", "0.000003", "0.000015");

    await page.goto(`${server?.url}/budgets`);
    await expect(page.getByTestId("no-budgets")).toBeVisible();
    await page.getByTestId("empty-new-budget").click();
    const form = page.getByTestId("new-budget-form");
    await form.getByTestId("budget-key").fill("llm.daily");
    await form.getByTestId("budget-name").fill("All model calls");
    await form.getByTestId("budget-value").fill("1.00");
    await form.getByTestId("budget-min").fill("0");
    await form.getByTestId("budget-max").fill("5");
    await form.getByTestId("budget-default").fill("1");
    await form.getByTestId("member-llm.alpha").check();
    await form.getByTestId("member-llm.beta").check();
    await expect(form.getByTestId("budget-sentence")).toContainText("at most $1.00 a day across llm.alpha and llm.beta");
    await form.getByLabel("Reason").fill("the model bill, capped");
    await page.getByTestId("create-budget").click();
    await expect(page).toHaveURL(/\/budgets\/llm\.daily$/);

    const keys = new ApiKeysPage(page);
    await page.goto(`${server?.url}/api-keys`);
    const secret = await keys.createForAccount("chat service", "acct_e2e", ["llm.alpha", "llm.beta"]);
    const reserve = (endpoint: string, parts: Record<string, number>) =>
      fetch(`${server?.url}/api/v1/reservations`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ endpoint, parts }),
      });

    // 10,000 input and 5,000 output tokens: $0.075 on alpha, $0.105 on beta. Turn by turn, 11
    // calls fit in $1.00 ($0.975); the twelfth, on beta, would make $1.08.
    let granted = 0;
    let refusal: Record<string, unknown> | undefined;
    for (let i = 0; i < 20 && !refusal; i++) {
      const answer = await reserve(i % 2 === 0 ? "llm.alpha" : "llm.beta", { input: 10_000, output: 5_000 });
      if (answer.status === 201) granted += 1;
      else {
        expect(answer.status).toBe(429);
        refusal = (await answer.json()) as Record<string, unknown>;
      }
    }
    expect(granted).toBe(11);
    expect(refusal).toMatchObject({ gate: "budget", budget: "llm.daily", remaining: 25_000, cost: 105_000 });
    // Used up in its window: it refuses until the window ends, and says when.
    expect(refusal?.retryAt).toEqual(expect.any(String));

    await page.goto(`${server?.url}/budgets`);
    const card = page.getByTestId("budget-llm.daily");
    await expect(card.getByTestId("budget-spend")).toHaveAttribute("data-spend", "975000");
    const shares = card.getByRole("list", { name: "Members' shares" });
    await expect(shares).toContainText("llm.alpha");
    await expect(shares).toContainText("$0.45");
    await expect(shares).toContainText("llm.beta");
    await expect(shares).toContainText("$0.53 (54%)");

    // The budget's page: cents everywhere, the exact micros as text, and each refusal with the
    // money the budget had left in its currency. 975,000 micros held reads $0.98; 25,000 left $0.03.
    await page.goto(`${server?.url}/budgets/llm.daily`);
    await expect(page.getByTestId("budget-spend")).toContainText("$0.98 of $1.00 · $0.98 held · $0.03 remaining");
    await expect(page.getByTestId("budget-exact")).toHaveText("$0.000000 settled · $0.975000 held · $0.025000 left of $1.000000");
    const refused = page.getByTestId("refusal-row").first();
    const left = refused.locator('data[value="0.025000"]');
    await expect(left).toHaveText("$0.03");
    // The exact amount reaches a screen reader as the amount's description, not as a second reading.
    await expect(left).toHaveAccessibleDescription("Exactly $0.025000");

    await page.goto(`${server?.url}/budgets`);
    const kill = new ConfirmDialog(page, "budget-kill-llm.daily");
    await kill.open();
    await kill.confirmWith("runaway agent");
    for (const endpoint of ["llm.alpha", "llm.beta"]) {
      const answer = await reserve(endpoint, { input: 1, output: 0 });
      expect(answer.status).toBe(429);
      const killed = (await answer.json()) as Record<string, unknown>;
      expect(killed).toMatchObject({ gate: "budget", budget: "llm.daily" });
      // A kill names no time to come back: the next window refuses too, until a restore.
      expect(killed).not.toHaveProperty("retryAt");
      expect(answer.headers.get("retry-after")).toBeNull();
    }
    await page.reload();
    await expect(page.getByTestId("budget-llm.daily").getByTestId("budget-killed")).toBeVisible();
  });
});
