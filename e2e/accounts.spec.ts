import { expect, type Page, test } from "@playwright/test";
import { sql } from "drizzle-orm";
import { resultRows } from "@/db/client";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { addStaff } from "@/lib/auth";
import { createEndpoint } from "@/lib/catalog/change";
import { and, desc, eq } from "drizzle-orm";
import { changeRequests } from "@/db/schema";
import { approveChange, type Requester } from "@/lib/changes";
import { ApiKeysPage } from "./pages/api-keys-page";
import { type AppServer, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { ConfirmDialog } from "./pages/control-pages";
import { LoginPage } from "./pages/login-page";

// A product with a free and a paid tier, on an empty database: an admin makes a free plan of 10
// SMS a day (the default) and a pro plan of 100; the billing service moves one customer to pro
// through the API; that customer's reservations are bounded by 100 and another's by 10. The
// account page shows the plan, the spend and the refusals, and Block refuses the customer's next
// call on every endpoint, one without any per-account ceiling too.

const PASSWORD = "correct horse battery staple 42";
const PRO = "acct_upgraded";
const FREE = "acct_free";

test.describe("plans and an account's page", () => {
  test.skip(!hasTestDatabase(), "needs TEST_DATABASE_URL (npm test sets it)");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;
  let second: Requester = { staffId: 0, email: "", role: "admin", via: "dashboard" };
  let perCaller = 0;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    t = await createTestDatabase("e2e_accounts", { max: 2 });
    await addStaff(t.db, { email: "admin@team.example", role: "admin", password: PASSWORD, actor: { type: "system", name: "e2e" }, bcryptCost: 4 });
    // The second admin who approves the first one's raises (a plan's values, a looser default, keys assigning pro).
    const made = await addStaff(t.db, {
      email: "second@team.example",
      role: "admin",
      password: PASSWORD,
      actor: { type: "system", name: "e2e" },
      bcryptCost: 4,
    });
    second = { staffId: made.staff.id, email: made.staff.email, role: "admin", via: "dashboard" };
    const actor = { type: "system", name: "e2e" } as const;
    // An SMS endpoint with a per-account daily ceiling (own value 5, bounds 0 to 1,000), and an
    // email endpoint with only a global one.
    await createEndpoint(t.db, {
      spec: {
        key: "sms.send",
        name: "SMS",
        unit: "messages",
        parts: [{ name: "units", price: "0.0079" }],
        perCallMax: 10,
        ceilings: [
          { metric: "units", scope: "global", window: "utc_day", value: 10_000, min: 0, max: 100_000, default: 10_000 },
          { metric: "units", scope: "caller", window: "utc_day", value: 5, min: 0, max: 1_000, default: 5 },
        ],
      },
      actor,
      reason: "e2e",
    });
    await createEndpoint(t.db, {
      spec: {
        key: "email.send",
        name: "Email",
        unit: "emails",
        parts: [{ name: "units", price: "0.001" }],
        perCallMax: 10,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10_000, min: 0, max: 100_000, default: 10_000 }],
      },
      actor,
      reason: "e2e",
    });
    // The per-caller ceiling's id names its row on a plan's page.
    const [row] = resultRows<{ id: number }>(
      await t.db.execute(sql`select c.id from ceilings c join endpoints e on e.id = c.endpoint_id where e.key = 'sms.send' and c.scope = 'caller'`),
    );
    perCaller = row?.id ?? 0;
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
  });

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  /** The second admin approves the newest pending request of a kind (as from the Changes page). */
  async function approveNewest(kind: string): Promise<void> {
    if (!t) throw new Error("no test database");
    const [row] = await t.db
      .select({ id: changeRequests.id })
      .from(changeRequests)
      .where(and(eq(changeRequests.kind, kind), eq(changeRequests.state, "pending")))
      .orderBy(desc(changeRequests.id))
      .limit(1);
    expect(row, `a pending ${kind} request`).toBeTruthy();
    expect((await approveChange(t.db, { id: row?.id ?? 0, approver: second })).applied).toBe(true);
  }

  async function makePlan(page: Page, key: string, name: string, value: string, confirm: boolean): Promise<void> {
    await page.goto(`${server?.url}/plans/new`);
    const form = page.getByTestId("new-plan-form");
    await form.getByTestId("plan-key").fill(key);
    await form.getByTestId("plan-name").fill(name);
    await form.getByTestId("plan-reason").fill("our tiers");
    await page.getByTestId("plan-create").click();
    await expect(page).toHaveURL(new RegExp(`/plans/${key}$`));
    const set = `plan-ceiling-${perCaller}-set`;
    await page.getByTestId(`${set}-value`).fill(value);
    await page.getByTestId(`${set}-reason`).fill("the tier's daily SMS");
    // A raise of 5x or more over what binds (the ceiling's own 5) is typed twice.
    if (confirm) await page.getByTestId(`${set}-confirm`).fill(value);
    await page.getByTestId(`${set}-save`).click();
    // Above what binds the plan's accounts (the ceiling's own 5): a raise, asked of a second admin.
    await expect(page.getByTestId("raise-needs-approval")).toBeVisible();
    // The refused save reset the form's reason (React resets a form after its action): typed again for the ask.
    await page.getByTestId(`${set}-reason`).fill("the tier's daily SMS");
    await page.getByTestId("ask-approval").click();
    await expect(page.getByTestId("ask-approval-ok")).toBeVisible();
    await approveNewest("plan.value");
    await page.reload();
    await expect(page.getByTestId(`plan-ceiling-${perCaller}`)).toContainText(value);
  }

  test("a free plan at 10 and a pro plan at 100: the billing service upgrades one account, each is bounded by its plan, its page shows it, and Block refuses it everywhere", async ({
    page,
  }) => {
    test.setTimeout(180_000);
    const login = new LoginPage(page);
    await page.goto(`${server?.url}/login`);
    await login.signIn("admin@team.example", PASSWORD);
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();

    await makePlan(page, "free", "Free", "10", false);
    await makePlan(page, "pro", "Pro", "100", true);
    await page.goto(`${server?.url}/plans/free`);
    // free (10) is looser than the default in force (the own 5): the switch is asked, then approved.
    const makeDefault = new ConfirmDialog(page, "plan-ask-default-free");
    await makeDefault.open();
    await makeDefault.confirmWith("every new signup starts on free");
    await approveNewest("plan.default");
    await page.goto(`${server?.url}/plans`);
    await expect(page.getByTestId("plan-row-free").getByTestId("default-plan")).toBeVisible();

    const keys = new ApiKeysPage(page);
    await page.goto(`${server?.url}/api-keys`);
    // Keys carry scopes: the billing service moves accounts with a key bound to no endpoint, the
    // product spends with a key bound to its endpoints.
    const billing = await keys.createForAccounts("billing service", ["accounts:read", "accounts:write"]);
    const product = await keys.createTrusted("product backend", ["sms.send", "email.send"]);
    const callAs = (secret: string, method: string, path: string, body: unknown) =>
      fetch(`${server?.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const call = (method: string, path: string, body: unknown) => callAs(product, method, path, body);

    // The billing service moves one customer to pro when it upgrades: looser, so refused until two
    // admins mark pro assignable by key, once; after that no second human is needed each time.
    const early = await callAs(billing, "PUT", `/api/v1/accounts/${PRO}`, { plan: "pro" });
    expect(early.status).toBe(403);
    expect(await early.json()).toMatchObject({ error: { code: "plan_not_key_assignable" } });
    await page.goto(`${server?.url}/plans/pro`);
    const allowKeys = new ConfirmDialog(page, "plan-key-assignable-pro");
    await allowKeys.open();
    await allowKeys.confirmWith("the billing service upgrades customers");
    await approveNewest("plan.key_assignable");
    const upgrade = await callAs(billing, "PUT", `/api/v1/accounts/${PRO}`, { plan: "pro" });
    expect(upgrade.status).toBe(200);
    expect(await upgrade.json()).toMatchObject({ account: PRO, plan: "pro" });

    // Both customers reserve one SMS at a time, 20 calls in flight, well past their plans.
    const grantsOf = async (account: string, calls: number) => {
      const answers = await Promise.all(
        Array.from({ length: calls }, () => call("POST", "/api/v1/reservations", { endpoint: "sms.send", amount: 1, caller: account })),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s !== 201 && s !== 429)).toEqual([]);
      return statuses.filter((s) => s === 201).length;
    };
    const [pro, free] = await Promise.all([grantsOf(PRO, 130), grantsOf(FREE, 30)]);
    expect({ pro, free }).toEqual({ pro: 100, free: 10 });
    const refused = await call("POST", "/api/v1/reservations", { endpoint: "sms.send", amount: 1, caller: PRO });
    expect(await refused.json()).toMatchObject({ gate: "ceiling", limit: 100, remaining: 0 });

    // The account page: found by prefix, its plan, what binds it and why, its spend and refusals.
    await page.goto(`${server?.url}/accounts?q=acct_up`);
    await page.locator(`[data-testid="account-result"][data-account="${PRO}"]`).getByRole("link").first().click();
    await expect(page).toHaveURL(new RegExp(`/accounts/${PRO}$`));
    await expect(page.getByTestId("account-plan")).toContainText("Pro");
    const sms = page.locator('[data-testid="account-ceiling"][data-endpoint="sms.send"]');
    await expect(sms).toHaveAttribute("data-source", "plan");
    await expect(sms).toContainText("100");
    const refusals = page.locator("section", { has: page.getByRole("heading", { name: "Latest refusals" }) });
    await expect(refusals).toContainText("sms.send");
    await expect(refusals).toContainText("ceiling");
    await expect(page.getByTestId("account-reservation")).toHaveCount(20);

    // Block: the next call is refused on every endpoint, even one with no per-account ceiling.
    const block = new ConfirmDialog(page, "account-block");
    await block.open();
    await block.confirmWith("chargeback");
    await expect(page.getByTestId("account-blocked")).toBeVisible();
    for (const endpoint of ["sms.send", "email.send"]) {
      const answer = await call("POST", "/api/v1/reservations", { endpoint, amount: 1, caller: PRO });
      expect(answer.status).toBe(429);
      expect(await answer.json()).toMatchObject({ gate: "blocked" });
    }
    // The free customer is untouched by the block: email still admits it.
    expect((await call("POST", "/api/v1/reservations", { endpoint: "email.send", amount: 1, caller: FREE })).status).toBe(201);
  });
});
