import { expect, test } from "@playwright/test";
import { eq, sql } from "drizzle-orm";
import { type Database, openPostgres, resultRows } from "@/db/client";
import { alertDestinations, reservations } from "@/db/schema";
import { hasTestDatabase } from "@/db/testing";
import { startReceiver, type TestReceiver } from "@/lib/alerts/test-receiver";
import { createEndpoint } from "@/lib/catalog";
import { FAKE_KEYS, type FakeProvider, startFakeProvider } from "@/lib/reconciliation/fake-provider";
import { type AppServer, startWorkerProcess, stopServer } from "./pages/app-server";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";

// Does the ledger match the bill? A provider (a local stand-in serving OpenAI's documented usage and
// costs pages) reports 1,000 tokens for yesterday where Ceilings charged 900. Staff connect it in the
// browser, map its model to the endpoint and press Pull now; the real worker pulls it, compares, and
// delivers one reconciliation alert to a webhook receiver on localhost. The endpoint page shows the
// 10 % drift with both lines drawn and the readiness card red on "reserved before spending".

const KEY = "recon.e2e";
const MODEL = "gpt-e2e-mini-2026-01-01";
const SECRET_VAR = "CEILINGS_SECRET_OPENAI_E2E";
const DAY_MS = 86_400_000;
// $0.05 a token: 900 charged is $45.00, 1,000 billed is $50.00; the drift is $5 and 10 %, past 2 % and $1.
const PRICE = "0.05";

test.describe.configure({ mode: "serial" });

test.describe("reconciliation", () => {
  test.skip(!hasTestDatabase(), "the test writes the endpoint's ledger and an alert destination in the e2e database: set TEST_DATABASE_URL");
  let database: Database | undefined;
  let provider: FakeProvider | undefined;
  let receiver: TestReceiver | undefined;
  let worker: AppServer | undefined;
  const yesterday = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    // eslint-disable-next-line no-restricted-syntax
    database = openPostgres(process.env.E2E_DATABASE_URL ?? "", { max: 2 });
    const db = database.db;
    const actor = { type: "system", name: "e2e" } as const;
    const endpoint = await createEndpoint(db, {
      spec: {
        key: KEY,
        name: "Reconciliation e2e",
        unit: "tokens",
        parts: [{ name: "units", price: PRICE }],
        perCallMax: 1000,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100_000, min: 0, max: 100_000, default: 100_000 }],
      },
      actor,
      reason: "e2e",
    });
    // Yesterday's ledger: nine calls of 100 tokens, reserved and settled in full.
    const start = Date.parse(`${yesterday}T00:00:00Z`);
    await db.insert(reservations).values(
      Array.from({ length: 9 }, (_, i) => {
        const at = new Date(start + (i + 1) * 3_600_000);
        return {
          endpointId: endpoint.id,
          amount: 100,
          money: 5_000_000,
          state: "settled" as const,
          settledAmount: 100,
          settledMoney: 5_000_000,
          charges: [],
          createdAt: at,
          expiresAt: new Date(at.getTime() + 300_000),
          resolvedAt: at,
        };
      }),
    );

    provider = await startFakeProvider({ pageSize: 1 });
    // The provider's own numbers for yesterday: 1,000 tokens, $50.00 (and a quiet day before it).
    provider.setOpenAI([{ day: yesterday, model: MODEL, inputTokens: 600, outputTokens: 400, costValue: "50.00", lineItem: `${MODEL}, input` }]);

    receiver = await startReceiver();
    // Alerts go to every enabled destination: this receiver is the one this test counts.
    await db.insert(alertDestinations).values({ name: "reconciliation e2e receiver", kind: "webhook", target: receiver.url, createdBy: "e2e" });

    // The worker reads the credential from its own environment and may call loopback hosts here.
    worker = startWorkerProcess("e2e-reconciliation", {
      [SECRET_VAR]: FAKE_KEYS.openai,
      USAGE_SOURCE_ALLOW_HOSTS: "127.0.0.1",
      ALERT_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      WORKER_INTERVAL_MS: "1000",
    });
  });

  test.afterAll(async () => {
    if (worker) await stopServer(worker);
    await provider?.close();
    await receiver?.close();
    if (database) await database.db.update(alertDestinations).set({ enabled: false }).where(eq(alertDestinations.name, "reconciliation e2e receiver"));
    await database?.close();
  });

  /** What the endpoint's compared day says the provider billed, in micros as text; undefined until compared. */
  const comparedBilled = async () => {
    const db = database?.db;
    if (!db) throw new Error("no database");
    const rows = resultRows<{ billed: string }>(
      await db.execute(
        sql`select d.billed_micros::text as billed from reconciliation_days d join endpoints e on e.id = d.endpoint_id where e.key = ${KEY} and d.day = ${yesterday}`,
      ),
    );
    return rows[0]?.billed;
  };

  const reconciliationAlerts = () => (receiver?.received ?? []).map((r) => r.body).filter((body) => body.includes("reconciliation") && body.includes(KEY));

  test("the provider billed 1,000 where Ceilings charged 900: 10 % drift, both lines, one alert, readiness red", async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    await signedIn(page, DEMO_ADMIN, "/reconciliation/sources/new");

    // Connect the source: OpenAI's organization usage and costs API, at the stand-in's address.
    await page.getByTestId("source-kind").selectOption("openai");
    await page.getByTestId("source-name").fill("OpenAI e2e");
    await page.getByTestId("source-location").fill(provider?.url ?? "");
    await page.getByTestId("source-credentialRef").fill(`env:${SECRET_VAR}`);
    await page.getByTestId("create-source").click();
    await expect(page).toHaveURL(/\/reconciliation\/sources\/\d+$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("OpenAI e2e");

    // Map the model (a prefix: a dated model name) to the endpoint.
    await page.getByTestId("rule-match").fill("gpt-e2e-mini*");
    await page.getByTestId("rule-target").selectOption(`endpoint:${KEY}`);
    await page.getByTestId("add-rule").click();
    await expect(page.getByTestId("add-rule-ok")).toBeVisible();

    // Pull now: the worker pulls within its loop, compares, and alerts.
    await page.getByTestId("pull-now").click();
    await expect(page.getByTestId("pull-requested")).toBeVisible();
    await expect
      .poll(
        async () => {
          await page.reload();
          return (await page.getByTestId("source-last-pull").textContent()) ?? "";
        },
        { timeout: 90_000, intervals: [1000] },
      )
      .not.toMatch(/never/);
    await expect(page.getByTestId("source-last-error")).toHaveCount(0);
    // Every page of the stand-in was followed (one bucket a page), with the admin key.
    expect(provider?.requests.some((r) => r.path === "/v1/organization/costs")).toBe(true);
    expect(provider?.requests.every((r) => r.headers.authorization === `Bearer ${FAKE_KEYS.openai}`)).toBe(true);

    // The pull is recorded before its comparison runs: wait for the compared day, then read the page.
    await expect.poll(comparedBilled, { timeout: 60_000 }).toBe("50000000");
    await page.goto(`/endpoints/${KEY}`);
    const section = page.locator("#reconciliation");
    const row = section.getByRole("row").filter({ hasText: "1,000 tokens" });
    await expect(row).toContainText("900 tokens");
    await expect(row.getByTestId("drift-percent")).toHaveText("+10.0 % past the threshold");
    await expect(row).toContainText("more billed than charged");

    // Both lines drawn: the provider's and the ledger's.
    const chart = section.getByTestId("reconciliation-chart");
    await expect(chart).toHaveAttribute("data-state", "drawn");
    await expect(chart.locator(".billed-line path.recharts-line-curve")).toHaveCount(1);
    await expect(chart.locator(".charged-line path.recharts-line-curve")).toHaveCount(1);
    await expect(chart.locator(".drift-over")).toHaveCount(1);

    const card = page.getByTestId("readiness-card");
    await expect(card.locator('[data-question="reserved"]')).toHaveAttribute("data-color", "red");
    await expect(card.getByTestId("readiness-figure-reserved")).toHaveText("90.0 %");
    await testInfo.attach("endpoint page", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

    // One alert reached the receiver.
    await expect.poll(() => reconciliationAlerts().length, { timeout: 60_000 }).toBe(1);
    expect(reconciliationAlerts()[0]).toContain(yesterday);

    // The Reconciliation page lists the day past the threshold; the overview's column is red.
    await page.goto("/reconciliation");
    await expect(page.getByRole("row").filter({ hasText: KEY })).toContainText("+10.0 %");
    await page.goto("/");
    await expect(page.locator(`a[href="/endpoints/${KEY}#readiness"]`)).toHaveAttribute("data-color", "red");
  });

  test("pulling the same day again replaces it and does not alert twice", async ({ page }) => {
    test.setTimeout(120_000);
    const db = database?.db;
    if (!db) throw new Error("no database");
    const [source] = resultRows<{ id: number }>(await db.execute(sql`select id from usage_sources where name = 'OpenAI e2e'`));
    await signedIn(page, DEMO_ADMIN, `/reconciliation/sources/${String(source?.id)}`);
    const before = provider?.requests.length ?? 0;
    await page.getByTestId("pull-now").click();
    await expect.poll(() => (provider?.requests.length ?? 0) > before, { timeout: 60_000 }).toBe(true);
    await expect
      .poll(
        async () => {
          const rows = resultRows<{ requested: boolean }>(
            await db.execute(sql`select pull_requested_at is not null as requested from usage_sources where name = 'OpenAI e2e'`),
          );
          return rows[0]?.requested;
        },
        { timeout: 60_000 },
      )
      .toBe(false);
    const days = resultRows<{ n: number }>(
      await db.execute(
        sql`select count(*)::int as n from usage_pulls p join usage_sources s on s.id = p.source_id where s.name = 'OpenAI e2e' and p.day = ${yesterday}`,
      ),
    );
    expect(days[0]?.n).toBe(1);
    // A few more worker loops: still the one alert.
    await page.waitForTimeout(5_000);
    expect(reconciliationAlerts()).toHaveLength(1);
    const fired = resultRows<{ n: number }>(
      await db.execute(
        sql`select count(*)::int as n from alerts a join endpoints e on e.id = a.endpoint_id where a.kind = 'reconciliation' and e.key = ${KEY} and a.details->>'day' = ${yesterday}`,
      ),
    );
    expect(fired[0]?.n).toBe(1);
  });

  test("a model nothing maps: one unmapped alert the next pull and none on re-pull; Map it, and the next comparison includes it", async ({ page }) => {
    test.setTimeout(180_000);
    const db = database?.db;
    if (!db) throw new Error("no database");
    // Only this model's: a pull the worker made before the first test's rule existed may have
    // alerted that model's money as unmapped (a new source is pulled at once).
    const unmapped = () =>
      (receiver?.received ?? []).map((r) => r.body).filter((body) => body.includes('"reconciliation_unmapped"') && body.includes("o9-e2e"));
    const [source] = resultRows<{ id: number }>(await db.execute(sql`select id from usage_sources where name = 'OpenAI e2e'`));
    const sourcePage = `/reconciliation/sources/${String(source?.id)}`;
    const pullNow = async () => {
      await page.goto(sourcePage);
      const before = provider?.requests.length ?? 0;
      await page.getByTestId("pull-now").click();
      await expect.poll(() => (provider?.requests.length ?? 0) > before, { timeout: 60_000 }).toBe(true);
      await expect
        .poll(
          async () =>
            resultRows<{ requested: boolean }>(
              await db.execute(sql`select pull_requested_at is not null as requested from usage_sources where id = ${source?.id ?? 0}`),
            )[0]?.requested,
          { timeout: 60_000 },
        )
        .toBe(false);
    };
    // The provider now also bills $20.00 yesterday on a model no rule maps (a key used elsewhere).
    provider?.setOpenAI([
      { day: yesterday, model: MODEL, inputTokens: 600, outputTokens: 400, costValue: "50.00", lineItem: `${MODEL}, input` },
      { day: yesterday, model: "o9-e2e", inputTokens: 300, outputTokens: 100, costValue: "20.00", lineItem: "o9-e2e, output" },
    ]);
    await signedIn(page, DEMO_ADMIN, sourcePage);
    await pullNow();
    await expect.poll(() => unmapped().length, { timeout: 60_000 }).toBe(1);
    expect(unmapped()[0]).toContain("o9-e2e, output ($20.00)");
    expect(unmapped()[0]).toContain(`/reconciliation/sources/${String(source?.id)}#unmapped`);

    // Pulled again: the day is the same day, alerted once.
    await pullNow();
    await page.waitForTimeout(3_000);
    expect(unmapped()).toHaveLength(1);

    // The Reconciliation page leads with the money; the alert's Map it opens the source's items.
    await page.goto("/reconciliation");
    await expect(page.getByTestId("unmapped-money-table").getByRole("row").filter({ hasText: "OpenAI e2e" })).toContainText("$20.00");
    await page.goto("/alerts");
    await page.getByTestId("alert-map-it").first().click();
    await expect(page).toHaveURL(new RegExp(`/reconciliation/sources/${String(source?.id)}#unmapped$`));
    const item = page.getByTestId("unmapped-table").locator('[data-item="o9-e2e, output"]');
    await expect(item).toContainText("$20.00");
    await item.getByTestId("map-it").click();
    await expect(page.getByTestId("rule-match")).toHaveValue("o9-e2e, output");
    // One prefix maps the model's tokens and its cost line items.
    await page.getByTestId("rule-match").fill("o9-e2e*");
    await page.getByTestId("rule-target").selectOption(`endpoint:${KEY}`);
    await page.getByTestId("add-rule").click();
    await expect(page.getByTestId("add-rule-ok")).toBeVisible();

    await pullNow();
    await expect.poll(comparedBilled, { timeout: 60_000 }).toBe("70000000");
    await page.goto(sourcePage);
    await expect(page.getByTestId("unmapped-table").locator('[data-item^="o9-e2e"]')).toHaveCount(0);
    await page.goto("/reconciliation");
    await expect(page.getByTestId("unmapped-money")).toHaveCount(0);
    expect(unmapped()).toHaveLength(1);
  });
});
