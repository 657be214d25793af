import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { DashboardShell, signInAs } from "./pages/dashboard-shell";
import { DEMO_ADMIN, DEMO_PASSWORD, DEMO_VIEWER, LoginPage } from "./pages/login-page";

// A page on another loopback port: another origin, the same site, so the session cookie is sent
// along, exactly the setting in which the overview was framed and clicked.
async function startForeignSite(html: (base: string) => string, base: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(req.url === "/inner" ? "<p id=inner>inner</p>" : html(base));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}` };
}

async function stop(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

test.describe("security headers", () => {
  test("another origin cannot frame the signed-in dashboard", async ({ page, baseURL }) => {
    const base = baseURL ?? "";
    await signInAs(page, DEMO_ADMIN, "admin");

    const foreign = await startForeignSite((b) => `<iframe id="own" src="/inner"></iframe><iframe id="victim" src="${b}/"></iframe>`, base);
    try {
      await page.goto(foreign.origin);
      // The foreign site's own frame loads, so a frame that does not is refused, not slow.
      await expect(page.frameLocator("#own").locator("#inner")).toHaveText("inner");
      await page.waitForTimeout(1_000);
      const victim = page.frames().find((f) => f.parentFrame() !== null && f.name() === "" && f.url() !== `${foreign.origin}/inner`);
      expect(victim?.url() ?? "").not.toContain(base);
      await expect(page.frameLocator("#victim").getByRole("button", { name: "Sign out" })).toHaveCount(0);
    } finally {
      await stop(foreign.server);
    }
  });

  test("pages carry the headers and run under the policy without a violation", async ({ page }) => {
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const response = await page.goto("/login");
    const headers = response?.headers() ?? {};
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("same-origin");
    expect(headers["permissions-policy"]).toContain("camera=()");
    // Over plain http there is no HSTS: it is sent only over https.
    expect(headers["strict-transport-security"]).toBeUndefined();

    // The sign-in button is enabled only once React hydrated: scripts ran under the nonce.
    await new LoginPage(page).signIn(DEMO_ADMIN, DEMO_PASSWORD);
    await new DashboardShell(page).expectSignedInAs(DEMO_ADMIN, "admin");
    // Endpoint keys hold dots ("email.subscribe"): such a page must get its nonce like any other.
    for (const path of ["/", "/endpoints/email.subscribe", "/refusals", "/audit", "/staff", "/alerts", "/api-keys"]) {
      const r = await page.goto(path);
      expect(r?.headers()["x-frame-options"], path).toBe("DENY");
      await expect(page.getByRole("button", { name: "Sign out" })).toBeEnabled();
    }
    const api = await page.request.get("/api/health");
    expect(api.headers()["x-frame-options"]).toBe("DENY");
    expect(api.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(violations).toEqual([]);
  });
});

test.describe("sessions", () => {
  test("a copy of the cookie saved before sign-out opens nothing afterwards", async ({ page, browser, baseURL }) => {
    await new LoginPage(page).goto();
    await new LoginPage(page).signIn(DEMO_ADMIN, DEMO_PASSWORD);
    const shell = new DashboardShell(page);
    await shell.expectSignedInAs(DEMO_ADMIN, "admin");
    const saved = await page.context().storageState();

    await shell.signOut();
    await expect(page).toHaveURL(/\/login/);

    const replay = await browser.newContext({ storageState: saved, baseURL });
    try {
      const session = await replay.request.get("/api/auth/session");
      expect(await session.json()).toEqual({});
      const replayPage = await replay.newPage();
      await replayPage.goto("/");
      await expect(replayPage).toHaveURL(/\/login\?next=/);
    } finally {
      await replay.close();
    }
  });
});

test.describe("no state change on GET", () => {
  test("a cross-site navigation or POST to the export exports nothing", async ({ page, baseURL }) => {
    const base = baseURL ?? "";
    await signInAs(page, DEMO_ADMIN, "admin");

    const direct = await page.request.get("/refusals/export");
    expect(direct.status()).toBe(405);

    const foreign = await startForeignSite((b) => `<form id="f" method="post" action="${b}/refusals/export"><input name="gate" value="ceiling"></form>`, base);
    try {
      await page.goto(foreign.origin);
      const [response] = await Promise.all([
        page.waitForResponse(`${base}/refusals/export`),
        page.evaluate(() => {
          const f = document.getElementById("f");
          if (f instanceof HTMLFormElement) f.submit();
        }),
      ]);
      expect(response.status()).toBe(403);
      expect(response.headers()["content-type"] ?? "").not.toContain("text/csv");
    } finally {
      await stop(foreign.server);
    }
  });
});

test.describe("input boundary and sign-in failures", () => {
  test("broken percent-encoding and control characters in URLs answer 400, not 500", async ({ page }) => {
    await signInAs(page, DEMO_ADMIN, "admin");
    for (const path of [
      "/endpoints/%00",
      "/endpoints/%E0%A4%A",
      "/refusals?caller=%00",
      "/refusals?destination=%00",
      "/audit?actor=%00",
      "/refusals?endpoint=%00",
    ]) {
      const response = await page.request.get(path);
      expect(response.status(), path).toBe(400);
      expect(response.headers()["x-frame-options"], path).toBe("DENY");
    }
    const api = await page.request.get("/api/v1/endpoints/%E0%A4%A");
    expect(api.status()).toBe(400);
    expect(await api.json()).toMatchObject({ error: { code: "invalid_input" } });
    const cursor = await page.request.get("/refusals?before=2026-13-45T99:99:99.000000Z_1");
    expect(cursor.status()).toBeLessThan(500);
  });

  test("an admin sees failed sign-ins, and a spoofed address cannot lock the account", async ({ browser, page }) => {
    // Six failures wait 250 ms doubling to 4 s each: the growing delay is the control at work.
    test.setTimeout(90_000);
    const attacker = await browser.newContext();
    try {
      const attackerPage = await attacker.newPage();
      const login = new LoginPage(attackerPage);
      await login.goto();
      for (let i = 0; i < 6; i++) {
        await attackerPage.setExtraHTTPHeaders({ "x-forwarded-for": `203.0.113.${i}` });
        await login.signIn(DEMO_VIEWER, "not-the-password");
        // Each failure waits longer (up to 4 s), on top of the bcrypt check: wait for the answer.
        await expect(login.submit).toBeEnabled({ timeout: 20_000 });
        await expect(login.error).toHaveText("Email or password is incorrect");
      }
    } finally {
      await attacker.close();
    }
    await new LoginPage(page).goto("/staff");
    await new LoginPage(page).signIn(DEMO_ADMIN, DEMO_PASSWORD);
    await expect(page).toHaveURL(/\/staff$/);
    await expect(page.getByTestId("sign-in-failure-row").filter({ hasText: `account:${DEMO_VIEWER}` })).toContainText("locked out");

    // The viewer's right password still works: failures elsewhere never lock a member out.
    const viewer = await browser.newContext();
    try {
      const viewerPage = await viewer.newPage();
      await signInAs(viewerPage, DEMO_VIEWER, "viewer");
    } finally {
      await viewer.close();
    }
  });
});

test.describe("oversized form fields", () => {
  test("a 1 MB field comes back as a form error naming it, not a failed request", async ({ page }) => {
    await new LoginPage(page).goto("/staff");
    await new LoginPage(page).signIn(DEMO_ADMIN, DEMO_PASSWORD);
    await expect(page).toHaveURL(/\/staff$/);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Add a staff member" }) });
    await form.getByLabel("Email").fill(`big-${Date.now()}@ceilings.local`);
    // The browser's maxlength is a convenience; the server must hold without it.
    await form.getByLabel("Name (optional)").evaluate((el) => {
      el.removeAttribute("maxlength");
      if (el instanceof HTMLInputElement) el.value = "x".repeat(1024 * 1024);
    });
    await form.getByRole("button", { name: "Add staff member" }).click();
    await expect(page.getByText(/name must be at most 10000 characters/)).toBeVisible();
  });
});
