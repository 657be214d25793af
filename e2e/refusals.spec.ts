import { readFile } from "node:fs/promises";
import { expect, test } from "@playwright/test";
import { DEMO_PASSWORD, DEMO_VIEWER, LoginPage } from "./pages/login-page";
import { RefusalsPage } from "./pages/refusals-page";

test.describe("refusal log", () => {
  test("a viewer filters by endpoint and gate, opens a refusal and exports it masked", async ({ page }) => {
    const login = new LoginPage(page);
    await login.goto("/refusals");
    await login.signIn(DEMO_VIEWER, DEMO_PASSWORD);
    const refusals = new RefusalsPage(page);
    await expect(refusals.count).toContainText("Refusals older than 90 days are purged");

    await refusals.filterBy({ endpoint: "email.subscribe", gate: "cooldown" });
    await expect(page).toHaveURL(/endpoint=email.subscribe/);
    await expect(page).toHaveURL(/gate=cooldown/);
    await expect(page.getByTestId("refusals-by-gate-chart")).toBeVisible();
    const rows = refusals.rows;
    await expect(rows.first()).toBeVisible();
    const n = await rows.count();
    expect(n).toBeGreaterThan(0);
    for (let i = 0; i < n; i += 1) {
      await expect(rows.nth(i)).toHaveAttribute("data-gate", "cooldown");
      await expect(rows.nth(i)).toHaveAttribute("data-endpoint", "email.subscribe");
    }
    // Signed-in staff read destinations in full on the page.
    const destination = (await rows.first().locator("td").nth(4).innerText()).trim();
    expect(destination).toMatch(/^[^*]+@example\.(com|org|net)$/);

    await rows
      .first()
      .getByRole("link", { name: /details/ })
      .click();
    await expect(page).toHaveURL(/\/refusals\/\d+$/);
    await expect(page.getByRole("heading", { level: 1 })).toContainText("cooldown");
    await expect(page.getByTestId("refusal-ceiling")).toContainText("per inbox");
    await expect(page.getByTestId("refusal-request-id")).toContainText("req_");
    await expect(page.getByRole("link", { name: "email.subscribe", exact: true })).toHaveAttribute("href", "/endpoints/email.subscribe");
    await page.goBack();

    const downloadPromise = page.waitForEvent("download");
    await refusals.exportLink.click();
    const download = await downloadPromise;
    expect(download.suggestedFilename()).toMatch(/^refusals-.*\.csv$/);
    const file = await download.path();
    const csv = await readFile(file, "utf8");
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe("id,at,last_at,endpoint,gate,count,caller,destination,amount,remaining,ceiling_id,request_id,detail");
    const matching = (await page.getByTestId("refusals-matching").innerText()).replaceAll(",", "");
    expect(lines.length - 1).toBe(Number(/(\d+) matching/.exec(matching)?.[1] ?? -1));
    for (const line of lines.slice(1)) {
      const cells = line.split(",");
      expect(cells[3]).toBe("email.subscribe");
      expect(cells[4]).toBe("cooldown");
      expect(cells[6]).toMatch(/^acct_\*\*\*[a-z0-9]{2}$/);
      expect(cells[7]).toMatch(/^[a-z]\*\*\*@e\*\*\*\.(com|org|net)$/);
    }
    expect(csv).not.toContain(destination);
  });
});
