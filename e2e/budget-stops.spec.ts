import { expect, test } from "@playwright/test";
import { eq } from "drizzle-orm";
import { type Database, openPostgres } from "@/db/client";
import { alertDestinations } from "@/db/schema";
import { hasTestDatabase } from "@/db/testing";
import { startReceiver, type TestReceiver } from "@/lib/alerts/test-receiver";
import { createBudget } from "@/lib/budgets";
import { createEndpoint } from "@/lib/catalog";
import { AlertsPage } from "./pages/alerts-page";
import { type AppServer, startWorkerProcess, stopServer } from "./pages/app-server";
import { BudgetPage, budgetStops } from "./pages/budget-page";
import { EndpointPage, OverviewPage } from "./pages/control-pages";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";

// Every stop tells someone: an operator kills a budget over two models. The worker alerts once, to
// the inbox and to a webhook receiver on localhost; the overview and each model's page show the
// model stopped by the budget, not live, though their own ceilings have room. The restore alerts too.

const BUDGET = "stops.e2e-daily";
const MEMBERS = ["stops.e2e-alpha", "stops.e2e-beta"];
const RECEIVER = "budget stops e2e receiver";

type Hook = { kind: string; title: string; message: string; details: { budget?: string }; links: { chart: string } | null };

test.describe.configure({ mode: "serial" });

test.describe("a budget's kill and restore", () => {
  test.skip(!hasTestDatabase(), "the test writes endpoints, a budget and an alert destination in the e2e database: set TEST_DATABASE_URL");
  let database: Database | undefined;
  let receiver: TestReceiver | undefined;
  let worker: AppServer | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    // eslint-disable-next-line no-restricted-syntax
    database = openPostgres(process.env.E2E_DATABASE_URL ?? "", { max: 2 });
    const db = database.db;
    const actor = { type: "system", name: "e2e" } as const;
    for (const key of MEMBERS) {
      await createEndpoint(db, {
        spec: {
          key,
          name: `Model ${key}`,
          unit: "tokens",
          parts: [{ name: "units", price: "0.00001" }],
          perCallMax: 10_000,
          ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000, min: 0, max: 1_000_000, default: 1_000_000 }],
        },
        actor,
        reason: "e2e",
      });
    }
    await createBudget(db, {
      spec: {
        key: BUDGET,
        name: "Both models",
        scope: "global",
        window: "utc_day",
        value: 50_000_000,
        min: 0,
        max: 100_000_000,
        default: 50_000_000,
        members: MEMBERS,
      },
      actor,
      reason: "e2e",
    });
    receiver = await startReceiver();
    // Alerts go to every enabled destination: this receiver is the one this test reads.
    await db.insert(alertDestinations).values({ name: RECEIVER, kind: "webhook", target: receiver.url, createdBy: "e2e" });
    worker = startWorkerProcess("e2e-budget-stops", { ALERT_WEBHOOK_ALLOW_HOSTS: "127.0.0.1", WORKER_INTERVAL_MS: "1000" });
  });

  test.afterAll(async () => {
    if (worker) await stopServer(worker);
    await receiver?.close();
    if (database) await database.db.update(alertDestinations).set({ enabled: false }).where(eq(alertDestinations.name, RECEIVER));
    await database?.close();
  });

  const hooks = (kind: string): Hook[] =>
    (receiver?.accepted() ?? []).map((r) => JSON.parse(r.body) as Hook).filter((h) => h.kind === kind && h.details.budget === BUDGET);

  test("killed: one alert in the inbox and at the webhook, its members stopped by it on the overview and their pages", async ({ page }, testInfo) => {
    test.setTimeout(120_000);
    await signedIn(page, DEMO_ADMIN, "/");
    const overview = new OverviewPage(page);
    for (const key of MEMBERS) await expect(budgetStops(overview.card(key)).badge).toHaveText("live");

    const budget = new BudgetPage(page, BUDGET);
    await budget.goto();
    const kill = budget.kill();
    await kill.open();
    await kill.confirmWith("runaway agent");

    // The worker's rule fires within a loop or two; the delivery follows.
    await expect.poll(() => hooks("budget_kill").length, { timeout: 60_000, intervals: [500] }).toBe(1);
    const [hook] = hooks("budget_kill");
    expect(hook?.title).toBe("Budget killed");
    expect(hook?.message).toContain(`budget ${BUDGET} was killed by ${DEMO_ADMIN}: every call on its 2 member(s) is refused`);
    expect(hook?.message).toContain("runaway agent");
    expect(hook?.links?.chart).toMatch(new RegExp(`/budgets/${BUDGET.replace(".", "\\.")}#spend$`));

    const inbox = new AlertsPage(page);
    await inbox.goto({ kind: "budget_kill" });
    await expect(page.getByLabel("Kind")).toHaveValue("budget_kill");
    const row = inbox.row("budget_kill").filter({ hasText: BUDGET });
    await expect(row).toHaveCount(1);
    await expect(row).toContainText("Budget killed");
    await expect(row.getByRole("link", { name: "Spend chart" })).toHaveAttribute("href", `/budgets/${BUDGET}#spend`);

    await overview.goto();
    for (const key of MEMBERS) {
      const card = budgetStops(overview.card(key));
      await expect(card.badge).toHaveText("stopped");
      await expect(card.stops).toHaveCount(1);
      await expect(card.stops).toContainText(`Stopped by budget ${BUDGET} (killed)`);
    }
    await testInfo.attach("overview, budget killed", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    const endpoint = new EndpointPage(page, MEMBERS[0] ?? "");
    await endpoint.goto();
    const own = budgetStops(page);
    await expect(own.badge.first()).toHaveText("stopped");
    await expect(page.getByTestId("budget-stops")).toContainText(`Stopped by budget ${BUDGET} (killed)`);
    await expect(page.getByTestId("budget-stops").getByRole("link")).toHaveAttribute("href", `/budgets/${BUDGET}`);
  });

  test("restored: one restore alert, its members live again; the kill still alerted once", async ({ page }) => {
    test.setTimeout(120_000);
    await signedIn(page, DEMO_ADMIN, "/");
    const budget = new BudgetPage(page, BUDGET);
    await budget.goto();
    const restore = budget.restore();
    await restore.open();
    await restore.confirmWith("agent fixed");

    await expect.poll(() => hooks("budget_restore").length, { timeout: 60_000, intervals: [500] }).toBe(1);
    expect(hooks("budget_restore")[0]?.message).toContain(`budget ${BUDGET} was restored by ${DEMO_ADMIN} to $50.00`);
    const inbox = new AlertsPage(page);
    await inbox.goto({ kind: "budget_restore" });
    await expect(inbox.row("budget_restore").filter({ hasText: BUDGET })).toHaveCount(1);

    const overview = new OverviewPage(page);
    await overview.goto();
    for (const key of MEMBERS) {
      const card = budgetStops(overview.card(key));
      await expect(card.badge).toHaveText("live");
      await expect(card.stops).toHaveCount(0);
    }
    // A few more loops of the worker: still one alert each.
    await page.waitForTimeout(3_000);
    expect(hooks("budget_kill")).toHaveLength(1);
    expect(hooks("budget_restore")).toHaveLength(1);
  });
});
