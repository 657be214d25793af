import { expect, test, type Browser, type Page } from "@playwright/test";
import { sql } from "drizzle-orm";
import { type Database, openPostgres } from "@/db/client";
import { reservations } from "@/db/schema";
import { hasTestDatabase } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";
import { createEndpoint } from "@/lib/catalog";
import { type AppServer, startWorkerProcess, stopServer } from "./pages/app-server";
import { AuditPage, EndpointPage } from "./pages/control-pages";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";

// Change control in a browser: a raise takes a second admin, a raise can end by itself, and a
// lower value shows what it would have refused before it is saved. On an endpoint of its own
// (created here with a history), so the demo endpoints other specs use are left as they were.

const OPERATOR = "operator@ceilings.local";
const APPROVER = "approver@ceilings.local";
// One key per attempt: a retry of this serial group runs beforeAll again, on the same database.
const KEY = `change.e2e-${Date.now().toString(36)}`;
const DAY_MS = 86_400_000;
// Ten past days of 30 grants of one message each (at $0.01), across six accounts.
const HISTORY_DAYS = 10;
const GRANTS_A_DAY = 30;

test.describe.configure({ mode: "serial" });

test.describe("change control", () => {
  test.skip(!hasTestDatabase(), "the test writes the endpoint's history and moves a raise's end in the e2e database: set TEST_DATABASE_URL");
  let database: Database | undefined;
  let worker: AppServer | undefined;
  let secret = "";

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    // eslint-disable-next-line no-restricted-syntax
    database = openPostgres(process.env.E2E_DATABASE_URL ?? "", { max: 2 });
    const db = database.db;
    const actor = { type: "system", name: "e2e" } as const;
    const endpoint = await createEndpoint(db, {
      spec: {
        key: KEY,
        name: "Change control e2e",
        unit: "messages",
        parts: [{ name: "units", price: "0.01" }],
        perCallMax: 5,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 20, min: 0, max: 1000, default: 20 }],
      },
      actor,
      reason: "e2e",
    });
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const rows = [];
    for (let day = 1; day <= HISTORY_DAYS; day++) {
      for (let i = 0; i < GRANTS_A_DAY; i++) {
        const at = new Date(midnight - day * DAY_MS + (i + 1) * 60_000);
        rows.push({
          endpointId: endpoint.id,
          caller: `acct_${"abcdef"[i % 6]}`,
          amount: 1,
          money: 10_000,
          state: "settled" as const,
          settledAmount: 1,
          settledMoney: 10_000,
          charges: [],
          createdAt: at,
          expiresAt: new Date(at.getTime() + 300_000),
        });
      }
    }
    await db.insert(reservations).values(rows);
    secret = (await createApiKey(db, { name: "change control e2e", binding: { kind: "trusted" }, endpointKeys: [KEY], actor })).secret;
    worker = startWorkerProcess("e2e-change-control");
  });

  test.afterAll(async () => {
    if (worker) await stopServer(worker);
    await database?.close();
  });

  async function reserve(page: Page, amount: number): Promise<{ status: number; gate?: string }> {
    const answer = await page.request.post("/api/v1/reservations", { headers: { authorization: `Bearer ${secret}` }, data: { endpoint: KEY, amount } });
    const body = (await answer.json()) as { gate?: string };
    return { status: answer.status(), gate: body.gate };
  }

  async function signedInPage(browser: Browser, email: string, next: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await signedIn(page, email, next);
    return page;
  }

  /** The operator asks for `value` on the daily ceiling; returns the request's page. */
  async function operatorAsks(page: Page, value: string, reason: string, minutes?: number): Promise<string> {
    const daily = new EndpointPage(page, KEY).ceiling("utc_day");
    // Operators get the value form to ask for a raise, never a Save button.
    await expect(daily.input).toBeVisible();
    await expect(daily.save).toHaveCount(0);
    // Typed again until the form answers it: typing before React hydrated the form is kept in the
    // box but runs no preview, so no raise is seen and the ask never shows.
    const ask = page.getByTestId("ask-approval");
    await expect(async () => {
      await daily.input.fill("");
      await daily.input.fill(value);
      await expect(ask).toBeEnabled({ timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    await daily.reason.fill(reason);
    if (minutes !== undefined) {
      await page.getByTestId("raise-end-for").check();
      await page.getByTestId("raise-ends-for").fill(String(minutes));
      await page.getByTestId("raise-ends-unit").selectOption("minutes");
    }
    await ask.click();
    await expect(page.getByTestId("ask-approval-ok")).toBeVisible();
    const href = await page.getByTestId("ask-approval-link").getAttribute("href");
    expect(href).toMatch(/^\/changes\/\d+$/);
    return href ?? "";
  }

  test("a lower value shows what it would have refused before it is saved; it binds the next reservation", async ({ page }) => {
    await signedIn(page, DEMO_ADMIN, `/endpoints/${KEY}`);
    const daily = new EndpointPage(page, KEY).ceiling("utc_day");
    await expect(daily.value).toHaveText("20");
    await daily.type("10");
    // Replayed from the ledger: 20 of each day's 30 grants, over the 6 past days of the last 7
    // (today included) and the 10 days of the last 30.
    const whatIf = page.getByTestId("what-if");
    await expect(whatIf.getByTestId("what-if-refused-7")).toContainText("120 calls refused");
    await expect(whatIf.getByTestId("what-if-refused-30")).toContainText("200 calls refused");
    await expect(whatIf.getByTestId("what-if-refused-30")).toContainText("$2.00");
    await expect(whatIf.getByTestId("what-if-top-accounts")).toContainText("acct_");
    await daily.reason.fill("a quieter night");
    await daily.save.click();
    await expect(daily.ok).toContainText("Saved: 20 → 10");

    expect((await reserve(page, 5)).status).toBe(201);
    expect((await reserve(page, 5)).status).toBe(201);
    expect(await reserve(page, 1)).toEqual({ status: 429, gate: "ceiling" });
  });

  test("an operator asks for a raise; the requester cannot approve it, even forged; a second admin approves and the next reservation sees it", async ({
    browser,
  }, testInfo) => {
    const operator = await signedInPage(browser, OPERATOR, `/endpoints/${KEY}`);
    const request = await operatorAsks(operator, "15", "the launch needs 15 a day");

    // The requester's own page: the request, no approve or reject button, only a way to withdraw it.
    await operator.goto(request);
    await expect(operator.getByTestId("request-state")).toHaveAttribute("data-state", "pending");
    await expect(operator.getByTestId("request-change")).toContainText("10 → 15");
    await expect(operator.getByTestId("approve-request")).toHaveCount(0);
    await expect(operator.getByTestId("reject-request")).toHaveCount(0);
    await expect(operator.getByTestId("own-request-note")).toBeVisible();

    // The overview lists it for the admins who may approve it.
    const approver = await signedInPage(browser, APPROVER, "/");
    await expect(approver.getByTestId("pending-requests")).toContainText(`${KEY} units/day 10 → 15`);
    await approver.goto(request);
    await expect(approver.getByTestId("request-worst-units")).toContainText("15");
    await testInfo.attach("change request", { body: await approver.screenshot({ fullPage: true }), contentType: "image/png" });

    // A forged approval: the approver's own approve call, caught on its way and sent again by the
    // requester with the requester's session. The server checks who is asking; nothing changes.
    let caught: { url: string; headers: Record<string, string>; body: Buffer } | undefined;
    await approver.route("**/changes/*", async (route) => {
      const call = route.request();
      if (call.method() !== "POST") return route.continue();
      const headers = await call.allHeaders();
      for (const name of ["cookie", "content-length", "host"]) delete headers[name];
      caught = { url: call.url(), headers, body: call.postDataBuffer() ?? Buffer.alloc(0) };
      await route.abort();
    });
    await approver.getByTestId("approve-request").click();
    await expect.poll(() => caught !== undefined).toBe(true);
    await approver.unroute("**/changes/*");
    expect(caught?.headers["next-action"]).toBeTruthy();
    const forged = await operator.request.post(caught?.url ?? "", { headers: caught?.headers, data: caught?.body, maxRedirects: 0 });
    expect(forged.status()).toBeLessThan(500);
    // The action answered the requester: an operator approves nothing (an admin who asked would be
    // refused as the requester, tested in app/(dashboard)/changes/change-actions.int.test.ts).
    expect(await forged.text()).toContain("Your role (operator) cannot do this");
    await operator.reload();
    await expect(operator.getByTestId("request-state")).toHaveAttribute("data-state", "pending");
    expect((await reserve(operator, 1)).gate).toBe("ceiling");

    // The approver's own call goes through.
    await approver.reload();
    await approver.getByTestId("approve-request").click();
    await expect(approver.getByTestId("request-state")).toHaveAttribute("data-state", "applied");

    await approver.goto(`/endpoints/${KEY}`);
    await expect(new EndpointPage(approver, KEY).ceiling("utc_day").value).toHaveText("15");
    expect((await reserve(approver, 5)).status).toBe(201);
    expect(await reserve(approver, 1)).toEqual({ status: 429, gate: "ceiling" });

    const audit = new AuditPage(approver);
    await audit.goto({ endpoint: KEY, action: "ceiling.adjust" });
    await expect(audit.rows.first()).toContainText(APPROVER);
    await expect(audit.rows.first()).toContainText("10 → 15");
    await operator.context().close();
    await approver.context().close();
  });

  test("a raise for 2 minutes puts the value back by itself when its time is up", async ({ browser }) => {
    const operator = await signedInPage(browser, OPERATOR, `/endpoints/${KEY}`);
    const request = await operatorAsks(operator, "18", "a two-minute burst", 2);
    const admin = await signedInPage(browser, DEMO_ADMIN, request);
    await expect(admin.getByTestId("request-end")).toContainText("for 2 min");
    await admin.getByTestId("approve-request").click();
    await expect(admin.getByTestId("request-state")).toHaveAttribute("data-state", "applied");

    const endpoint = new EndpointPage(admin, KEY);
    await endpoint.goto();
    await expect(endpoint.ceiling("utc_day").value).toHaveText("18");
    await expect(endpoint.ceiling("utc_day").root.getByTestId("raise-countdown")).toBeVisible();
    expect((await reserve(admin, 3)).status).toBe(201);

    // The test's clock: the two minutes are over. The worker (its fast lane runs every second)
    // puts 15 back under the endpoint lock, audited with the system as actor.
    const id = Number(request.split("/").pop());
    await database?.db.execute(sql`update raise_ends set ends_at = now() where request_id = ${id} and state = 'active'`);
    await expect
      .poll(
        async () => {
          await endpoint.goto();
          return endpoint.ceiling("utc_day").value.textContent();
        },
        { timeout: 20_000, intervals: [1000] },
      )
      .toBe("15");
    await expect(endpoint.ceiling("utc_day").root.getByTestId("raise-countdown")).toHaveCount(0);
    expect(await reserve(admin, 1)).toEqual({ status: 429, gate: "ceiling" });

    const audit = new AuditPage(admin);
    await audit.goto({ endpoint: KEY, action: "ceiling.adjust" });
    await expect(audit.rows.first()).toContainText("raise end");
    await expect(audit.rows.first()).toContainText("18 → 15");
    await operator.context().close();
    await admin.context().close();
  });
});
