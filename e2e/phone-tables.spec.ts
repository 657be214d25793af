import { expect, test } from "@playwright/test";
import { ApiKeysPage } from "./pages/api-keys-page";
import { AuditPage } from "./pages/control-pages";
import { DEMO_ADMIN, signedIn } from "./pages/login-page";
import { columnsOutOfSight } from "./pages/table-cells";

// At phone width (390 px) a table row still reads: what happened, to what and by whom in the audit
// log, a key's name, what it spends for and its state on /api-keys. They showed only their first
// two columns (When and Who, Name and Key) and the rest sat past the right edge of their box.
// The audit log's subject column names what each event is about with its kind: an endpoint, an
// API key or a staff member (it was "Endpoint" and held e-mail addresses and key names).

test("the audit and API-key tables show their essential columns at 390 px", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await signedIn(page, DEMO_ADMIN, "/api-keys");
  const keys = new ApiKeysPage(page);
  await keys.goto();
  await keys.createForAccount(`phone ${Date.now().toString(36)}`, "acct_phone", ["email.subscribe"]);
  await keys.goto();
  const key = keys.rows.first();
  // Soft: one run names every table and column out of sight.
  expect.soft(await columnsOutOfSight(key, ["Name", "Spends for", "Status"]), "API key row").toEqual([]);
  await testInfo.attach("api keys, phone", { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });

  const audit = new AuditPage(page);
  // One filter per kind of subject: an API key, a staff member, an endpoint.
  for (const [filters, kind, text] of [
    [{ action: "api_key.create" }, "API key", "(ck_"],
    [{ action: "staff" }, "staff", "@ceilings.local"],
    [{ endpoint: "email.subscribe" }, "endpoint", "email.subscribe"],
  ] as const) {
    await audit.goto(filters);
    await expect.soft(page.getByRole("columnheader", { name: "Subject" })).toHaveCount(1);
    const row = audit.rows.first();
    const subject = row.locator(`[data-subject-kind="${kind}"]`);
    await expect.soft(subject).toContainText(kind);
    await expect.soft(subject).toContainText(text);
    expect.soft(await columnsOutOfSight(row, ["When (UTC)", "Who", "Kind"]), `${kind} row`).toEqual([]);
    expect.soft(await columnsOutOfSight(row, ["Subject"]), `${kind} row`).toEqual([]);
    await testInfo.attach(`audit ${kind}, phone`, { body: await page.screenshot({ fullPage: true }), contentType: "image/png" });
  }
  // The header row is still there for screen readers: each cell keeps its column.
  await expect(page.getByRole("columnheader")).toHaveCount(8);
  await expect(audit.rows.first().getByRole("cell")).toHaveCount(8);
});
