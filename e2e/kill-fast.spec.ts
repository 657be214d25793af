import { expect, test, type APIRequestContext } from "@playwright/test";
import { adminCreatesKey } from "./pages/api-keys-page";
import { AuditPage, OverviewPage } from "./pages/control-pages";

// The emergency path: from the overview to a committed kill in one click and a confirmation, no
// typing; the clicks and seconds are recorded, and the very next reservation is refused.

const ENDPOINT = "webhook.notify";

async function reserveOnce(request: APIRequestContext, secret: string) {
  const response = await request.post("/api/v1/reservations", {
    headers: { authorization: `Bearer ${secret}` },
    data: { endpoint: ENDPOINT, amount: 1 },
  });
  return { status: response.status(), body: (await response.json()) as Record<string, unknown> };
}

test("overview → committed kill in two clicks without a reason; the next reservation is refused; restore stays deliberate", async ({
  page,
  request,
}, testInfo) => {
  const secret = await adminCreatesKey(page, `kill e2e ${Date.now()}`, "acct_kill_e2e", [ENDPOINT]);
  const before = await reserveOnce(request, secret);
  expect(before.status).toBe(201);
  await request.post(`/api/v1/reservations/${String(before.body.reservationId)}/release`, { headers: { authorization: `Bearer ${secret}` } });

  const overview = new OverviewPage(page);
  await overview.goto();
  await expect(page.getByTestId(`kill-${ENDPOINT}`)).toBeEnabled();
  let clicks = 0;
  const started = Date.now();
  await page.getByTestId(`kill-${ENDPOINT}`).click();
  clicks++;
  await page.getByTestId(`kill-${ENDPOINT}-confirm`).click();
  clicks++;
  // Committed: the banner is rendered from the database after the action's revalidation.
  await expect(overview.banner).toContainText(ENDPOINT);
  const seconds = (Date.now() - started) / 1000;
  testInfo.annotations.push({ type: "kill path", description: `${clicks} clicks, ${seconds.toFixed(2)} s from the first click to the committed kill` });
  console.log(`kill path: ${clicks} clicks, ${seconds.toFixed(2)} s`);
  expect(clicks).toBe(2);
  // A loose bound on a shared two-core machine: the point is no typing, no extra page.
  expect(seconds).toBeLessThan(15);

  const after = await reserveOnce(request, secret);
  expect(after.status).toBe(429);
  expect(after.body.gate).toBe("kill_switch");

  const audit = new AuditPage(page);
  await audit.goto({ endpoint: ENDPOINT, action: "ceiling.kill" });
  await expect(audit.rows.first()).toContainText("no reason given");

  // Restore is deliberate: it opens its own confirmation and only the confirm restores.
  await overview.goto();
  const restore = overview.restore(ENDPOINT);
  await restore.open();
  await page.keyboard.press("Escape");
  await expect(restore.dialog).toBeHidden();
  expect((await reserveOnce(request, secret)).status).toBe(429);
  await restore.open();
  await restore.confirm.click();
  await expect(overview.banner).toBeHidden();
  expect((await reserveOnce(request, secret)).status).toBe(201);
});
